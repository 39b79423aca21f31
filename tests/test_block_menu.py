"""The block menu (`m` in the transcript's navigation mode): the actions that apply to the block under the cursor,
with their keys; Enter or the key runs one on that block."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.ui.screens.block_menu import BlockMenu
from rat_tui.ui.screens.diff_screen import DiffScreen

from .helpers.app import scripted_named as scripted
from .helpers.app import until

pytestmark = pytest.mark.slow

EDIT = {"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit hello.py", "kind": "edit",
        "status": "completed", "locations": [{"path": "/p/hello.py", "line": 1}],
        "content": [{"type": "diff", "path": "/p/hello.py", "oldText": "a\n", "newText": "b\n"}]}
TURNS = [[{"update": EDIT}, {"chunk": "I changed hello.py."}]]


def menu_lines(app: RatApp) -> list[str]:
    menu = app.screen
    assert isinstance(menu, BlockMenu)
    return [f"{action.key} {action.what}" for action in menu.actions]


async def ready_with_a_turn(pilot, app: RatApp):
    view = app.tabs.active_view
    await until(pilot, lambda: view.session.state.status == "ready", "ready")
    await pilot.press(*"go", "enter")
    await until(pilot, lambda: "I changed hello.py." in view.transcript.plain_text, "the answer")
    await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")
    return view


async def test_the_block_menu_offers_what_applies_and_runs_it_on_that_block(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": TURNS}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await ready_with_a_turn(pilot, app)
        await pilot.press("ctrl+t", "p")  # navigation mode; the cursor on the answer
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, BlockMenu), "the menu")
        assert menu_lines(app) == ["y Copy it"]  # an answer: nothing else applies
        await pilot.press("enter")
        await until(pilot, lambda: app.clipboard == "I changed hello.py.", "the answer copied")
        assert not isinstance(app.screen, BlockMenu)
        await pilot.press("p")  # the tool call
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, BlockMenu), "the menu of the tool call")
        lines = menu_lines(app)
        assert lines[:2] == ["y Copy it", "d Its diff, full screen"] and "o Preview its file" in lines
        assert app.screen.title_text == "Tool call: Edit hello.py"
        await pilot.press("d")  # an action's own key picks it
        await until(pilot, lambda: isinstance(app.screen, DiffScreen), "the diff of that call")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DiffScreen), "the diff closed")
        await pilot.press("m", "escape")  # Esc closes the menu and does nothing
        await until(pilot, lambda: not isinstance(app.screen, BlockMenu), "the menu closed")
        assert view.composer.text == ""


THOUGHT = {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Weighing it up."}}


async def test_on_a_thought_the_menu_folds_it(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": [[{"update": THOUGHT}, {"chunk": "I changed hello.py."}]]}, tmp_path, "one"),
                 tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await ready_with_a_turn(pilot, app)
        await pilot.press("ctrl+t", "p", "p")  # the answer, then the thought
        key = view.transcript.cursor_key
        assert view.transcript.collapsible(key)
        folded = view.transcript._by_key[key].collapsed
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, BlockMenu), "the menu of the thought")
        assert menu_lines(app) == ["y Copy it", "t Expand or collapse it"]
        await pilot.press("t")
        await until(pilot, lambda: view.transcript._by_key[key].collapsed is not folded, "the thought toggled")


def test_snapshot_block_menu(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot) -> None:
        await ready_with_a_turn(pilot, pilot.app)
        await pilot.press("ctrl+t", "p", "p", "m")
        await until(pilot, lambda: isinstance(pilot.app.screen, BlockMenu), "the menu")
        await pilot.pause()

    app = RatApp(scripted({"turns": TURNS}, tmp_path, "one"), Path("/"))
    assert snap_compare(app, terminal_size=(90, 26), run_before=run_before)
