"""What `rat` imports before its first frame, and when the warm-up runs: startup speed without timing.

Each named module below cost tens of milliseconds (pydantic 0.1-0.2 s with the config models, the ACP
models 0.45 s, Pygments' lexer tables 0.3 s) before the first frame, on a 2-core machine where the bare
Textual app draws its own in about 0.3 s (bench/stress.py --only startup measures it). A regression
here is an import moved back to module level: import it where it is first used instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# `rat` as launched (rat_tui.__main__.main: arguments, config, images probe, app), on Textual's headless
# driver; the demo agent (the default) answers at once. Prints the modules imported when the first frame
# is written, and whether the warm-up had begun when the first session became ready.
LAUNCH = '''
import asyncio, gc, json, sys, threading
from rat_tui import dataclass_cache
# As rat_tui.__main__.main does first (checked below): here before the app is imported, to patch it.
dataclass_cache.install()
from rat_tui import __main__ as entry
from rat_tui.app import RatApp
from rat_tui.ui.widgets.keys_footer import KeysFooter

found = {}
original = RatApp._display

def audit(event, args):  # which thread imports the ACP models (the first import only raises the event)
    if event == "import" and args and args[0] == "rat_tui.protocol.acp_models" and "schema_thread" not in found:
        found["schema_thread"] = threading.current_thread().name
        found["collecting_in_warm_up"] = gc.isenabled()
    if event == "subprocess.Popen" and "agent_spawned" not in found:  # the first process rat starts
        found["agent_spawned"] = {"app_built": "app_built" in found, "argv": list(args[1])}

sys.addaudithook(audit)

from textual.css.stylesheet import Stylesheet

update_nodes = Stylesheet.update_nodes
found["restyled"] = []

def restyle(self, nodes, animate=False):  # nodes styled again (a class or focus changed, a screen resumed)
    nodes = list(nodes)
    if nodes and "first_frame" not in found:
        found["restyled"].append([type(nodes[0]).__name__, len(nodes)])
    return update_nodes(self, nodes, animate)

Stylesheet.update_nodes = restyle

def display(self, screen, renderable):  # observes the first frame written, then draws it as usual
    if renderable is not None and "first_frame" not in found:
        found["first_frame"] = sorted(sys.modules)
        found["collecting_at_first_frame"] = gc.isenabled()
        from rat_tui import dataclass_cache
        found["dataclass_methods"] = {"compiled": dataclass_cache.compiled, "found": dataclass_cache.found}
        found["mounted"] = sorted({type(node).__name__ for node in screen.walk_children()})
        footer = screen.query_one(KeysFooter)
        found["footer"] = {"actions": [key[3] for key in footer.shown[3:]], "recomposes": footer.recomposes,
                           "focused": type(screen.focused).__name__}
    return original(self, screen, renderable)

async def headless(app):
    def seen(_batch):
        if app.first_session.state.status == "ready" and "ready" not in found:
            found["ready"] = {"schema": "rat_tui.protocol.acp_models" in sys.modules,
                              "adopted": type(app.first_session.process._proc).__name__ == "_Adopted",
                              "warming": any(t.name == "warm-up" for t in threading.enumerate())}
    app.first_session.store.subscribe(seen)
    async with app.run_test() as pilot:
        while app.warm_thread is None:
            await pilot.pause()
        app.warm_thread.join()
        found["warm"] = {"schema": "rat_tui.protocol.acp_models" in sys.modules, "lexers": "pygments.lexers.python" in sys.modules,
                         "markdown": "rat_tui.ui.widgets.markdown_elements" in sys.modules,
                         "collecting": gc.isenabled(),
                         # what the first code block and the first terminal output imported on the loop before
                         "code_themes": "pygments.styles.monokai" in sys.modules and "pygments.styles.default" in sys.modules,
                         "ansi": "rich.ansi" in sys.modules,
                         # put off from before the first frame: the first diff, the first form
                         "dialogs": "rat_tui.state.diffing" in sys.modules and "rat_tui.session.elicitation_form" in sys.modules,
                         "switch_interval": sys.getswitchinterval(),
                         "sdk": "acp" in sys.modules}
        while not app.first_session.state.commands:  # the demo's commands update, held for the models
            await pilot.pause()
        found["commands"] = len(app.first_session.state.commands)
        for key in "hello":  # typed a key at a time, each drawn before the next
            await pilot.press(key)
            await pilot.pause()
        footer = app.screen.query_one(KeysFooter)
        found["typed"] = {"text": app.screen.focused.text, "recomposes": footer.recomposes}

RatApp._display = display
built = RatApp.__init__

def init(self, *args, **kwargs):
    found["app_built"] = True
    built(self, *args, **kwargs)

RatApp.__init__ = init
RatApp.run = lambda app, **kwargs: asyncio.run(headless(app))
install = dataclass_cache.install

def spy(*args):
    on = install(*args)
    found["dataclass_cache"] = str(dataclass_cache._path) if on else None
    return on

dataclass_cache.install = spy
entry.main([])
print("FOUND", json.dumps(found))
'''

# Modules the first frame does not need, by what they are for.
NOT_BEFORE_THE_FIRST_FRAME = [
    "pydantic",  # config.toml and themes are plain dataclasses when well formed (rat_tui/typed_data.py)
    "rat_tui.protocol.acp_models",  # the ACP models: RatApp._warm_up, after the first frame and the handshake
    "acp",  # the SDK itself: never (acp_models is a copy of its update models)
    "mcp", "anyio",  # rat-tui's own MCP server: on the first connection
    "pygments", "pygments.lexers.python", "pygments.lexers.shell",  # code lexers: the warm-up, or the first code block
    "pygments.styles.monokai", "rich.ansi",  # code colours, terminal output: the warm-up
    # markdown: parsed and rendered once there is some (the warm-up builds the parsers): about 40 ms
    "markdown_it", "rich.markdown", "rich.syntax", "rat_tui.ui.widgets.markdown_elements",
    "PIL", "textual_image",  # images: only where the terminal can draw them
    "urllib.request", "http.client",  # the agent registry: when the agent picker opens
    "tomlkit",  # settings saved from the UI
    "regex", "jsonschema",
    "rat_tui.session.change_tracker",  # at the first turn
    "rat_tui.protocol.v2",  # once an agent answers in v2 (a v1 agent never needs it)
    "rat_tui.state.diffing", "rat_tui.session.elicitation_form",  # the first diff, the first form: the warm-up
    "rat_tui.client_tools.server",
    "rat_tui.agents.registry", "rat_tui.agents.catalog",
    "rat_tui.ui.palette.commands", "rat_tui.ui.keymap",
    "rat_tui.ui.screens.agent_picker", "rat_tui.ui.screens.new_session", "rat_tui.ui.screens.permission_rules",
    "rat_tui.ui.screens.help", "rat_tui.ui.screens.history", "rat_tui.ui.screens.auth",
    "rat_tui.ui.screens.config_options", "rat_tui.ui.screens.session_browser", "rat_tui.ui.screens.change_review",
    # the agent's dialogs, the output viewer, git worktrees: when first asked for
    "rat_tui.ui.screens.permission", "rat_tui.ui.screens.elicitation", "rat_tui.ui.screens.confirm",
    "rat_tui.ui.screens.output_viewer", "rat_tui.session.worktrees",
]


# Widgets not shown at launch (hidden until used): not mounted before the first frame.
HIDDEN_AT_LAUNCH = ["CommandMenu", "FileMenu", "SearchBar", "PlanPanel", "PromptQueueView"]


def launch(tmp_path: Path) -> dict:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "c"), "XDG_DATA_HOME": str(tmp_path / "d"),
           "XDG_STATE_HOME": str(tmp_path / "s"), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT),
           "RAT_REGISTRY_OFF": "1"}
    out = subprocess.run([sys.executable, "-c", LAUNCH], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120)
    line = next((line for line in out.stdout.splitlines() if line.startswith("FOUND ")), None)
    assert line is not None, out.stdout + out.stderr
    return json.loads(line.removeprefix("FOUND "))


def test_the_first_frame_imports_nothing_it_does_not_need_and_the_warm_up_waits_for_the_handshake(
        tmp_path: Path) -> None:
    found = launch(tmp_path)
    loaded = set(found["first_frame"])
    assert "rat_tui.ui.widgets.prompt" in loaded and "rat_tui.ui.widgets.transcript" in loaded  # the check sees
    assert sorted(loaded.intersection(NOT_BEFORE_THE_FIRST_FRAME)) == []
    # The agent (here the demo) was started before the app was imported and built (here the test imported
    # it first), and the session adopted it.
    assert found["agent_spawned"] == {"app_built": False, "argv": [sys.executable, "-m", "rat_tui.demo"]}
    assert found["ready"]["adopted"] is True
    # The demo agent answers at once: the warm-up (0.75 s of GIL-holding imports) had not begun at `ready`...
    assert found["ready"]["warming"] is False
    # The collector stays off through the warm-up (its ten collections were stalls in the first turn)...
    assert found["collecting_in_warm_up"] is False
    # ...and once it has run, the first answer finds the models and the lexers ready (and the collector on).
    assert found["warm"] == {"schema": True, "lexers": True, "markdown": True, "collecting": True,
                             "code_themes": True, "ansi": True, "dialogs": True, "switch_interval": 0.001,  # (__main__.share_the_gil)
                             # the copy of the SDK's update models (protocol/acp_models.py), not the SDK
                             "sdk": False}
    # No garbage collection from launch to the first frame (25 ms of walking what startup built), and
    # on again after it.
    assert found["collecting_at_first_frame"] is False
    # Each widget is styled as it mounts and not again before the first frame: the first screen's resume
    # restyled all of them (ui/tabs/main_screen.py), and the tab strip took the first focus and gave it to
    # the composer, restyling itself twice (tab_bar.SessionTabs.compose). Left: the active tab's class and
    # the composer's focus, a node each. The footer's keys are in the first frame (ui/widgets/keys_footer.py):
    # each sets its own `-compact` class as it mounts (Textual's data binding), one node at a time.
    assert sum(count for name, count in found["restyled"] if name != "FooterKey") <= 2, found["restyled"]
    assert all(count == 1 for name, count in found["restyled"] if name == "FooterKey"), found["restyled"]
    # Widgets hidden at launch are mounted when first shown, not styled for the first frame.
    assert "PromptComposer" in found["mounted"]
    assert sorted(set(found["mounted"]).intersection(HIDDEN_AT_LAUNCH)) == []
    # The demo's commands update, sent with the session, needs the models: the session held it while a
    # thread imported them (on the loop, that import froze the screen for half a second), then applied it.
    assert found["schema_thread"] != "MainThread"
    assert found["commands"] > 0
    # The first frame's footer has the composer's keys (the focus lands before it, and the main screen's
    # footer composes once, then: KeysFooter(focus_first=True)), and the first keys typed recompose nothing:
    # the launch focus used to reach the footer after the first frame, and its two recomposes, each laying
    # out the screen, fell on the user's first keys (40-80 ms echo in bench/stress.py's typed prompt).
    assert found["footer"]["focused"] == "PromptComposer"
    assert {"key_help", "toggle_plan", "review_changes"} <= set(found["footer"]["actions"]), found["footer"]
    assert "cancel_turn" not in found["footer"]["actions"]  # offered only while a turn runs
    assert found["footer"]["recomposes"] == 0, found["footer"]
    assert found["typed"] == {"text": "hello", "recomposes": 0}


def test_a_second_launch_compiles_no_dataclass_method_before_its_first_frame(tmp_path: Path) -> None:
    """The methods `@dataclass` writes for Textual's classes and ours, compiled at every launch, cost 40-70 ms of
    it (rat_tui/dataclass_cache.py): the first launch keeps them, the next compiles none before its first frame."""
    found = launch(tmp_path)
    assert found["dataclass_cache"] == str(tmp_path / "cache" / "rat-tui" / "dataclass-methods.bin")  # by main()
    first = found["dataclass_methods"]
    assert first["compiled"] > 300, first  # (the check sees them: Textual's and ours)
    second = launch(tmp_path)["dataclass_methods"]
    assert second == {"compiled": 0, "found": first["compiled"] + first["found"]}, (first, second)


def test_a_config_file_with_every_key_and_the_bundled_themes_load_without_pydantic(tmp_path: Path) -> None:
    """The user's config.toml is read at every launch: a well-formed one never imports pydantic, a broken one
    does (its messages are pydantic's)."""
    broken = tmp_path / "broken.toml"
    broken.write_text('theme = 3\n')
    code = (f"import sys\nfrom pathlib import Path\nfrom rat_tui.config import load_config\n"
            f"from rat_tui.themes import load_themes\n"
            f"config, problems = load_config(Path({str(ROOT / 'config.example.toml')!r}))\n"
            f"themes, theme_problems = load_themes()\n"
            f"assert not problems and not theme_problems and len(config.agents) >= 5 and themes\n"
            f"print('GOOD', 'pydantic' in sys.modules)\n"
            f"config, problems = load_config(Path({str(broken)!r}))\n"
            f"print('BROKEN', 'pydantic' in sys.modules, problems)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "GOOD False" in out.stdout, out.stdout + out.stderr
    assert "BROKEN True" in out.stdout and "theme: Input should be a valid string (using the default)" in out.stdout
