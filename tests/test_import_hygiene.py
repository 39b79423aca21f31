"""protocol/ and state/ (and the session driver) must not import Textual: they run without a UI."""

import subprocess
import sys

CORE_MODULES = [
    "rat_tui.protocol.transport",
    "rat_tui.protocol.router",
    "rat_tui.protocol.client",
    "rat_tui.protocol.rpc_log",
    "rat_tui.protocol.wire",
    "rat_tui.protocol.fs",
    "rat_tui.protocol.terminals",
    "rat_tui.state.permission_policy",
    "rat_tui.state.models",
    "rat_tui.state.reducer",
    "rat_tui.state.store",
    "rat_tui.agent_session",
    "rat_tui.history.journal",
    "rat_tui.history.records",
    "rat_tui.history.rebuild",
    "rat_tui.history.markdown",
    "rat_tui.history.replay",
    "rat_tui.elicitation_form",
    "rat_tui.elicitation_broker",
    "rat_tui.mcp_servers",
    "rat_tui.agent_defaults",
    "rat_tui.session_lifecycle",
]


def test_core_does_not_import_textual() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {CORE_MODULES!r}: importlib.import_module(name)\n"
        "import rat_tui.protocol.wire as w; w.schema()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, f"core modules pulled in UI packages: {result.stdout}{result.stderr}"
