"""What the test files share. Test files import helpers from here (never from another test_*.py):

- `agents`: the scripted fake agent's command line, what a fake agent received, `AGENTS`.
- `acp_schema`: validating messages against the ACP schema in tests/fixtures/.
- `harness`: a themed host app for one widget or screen, and AgentSession start/wait/finish.
- `app`: driving the real RatApp with Pilot (`until`, `send`, `view`, the scripted agent as an AgentSpec).
- `history`: the history screen and continuing a session from it.
- `config_options`: recorded config options and legacy modes, and a host app for the controls screens.
- `demo_driver`: a raw JSON-RPC client (`Driver`) and a fake client for driving agents as subprocesses.
- `tmux`: a real terminal for what only a terminal shows.
"""
