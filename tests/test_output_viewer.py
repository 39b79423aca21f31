"""The output viewer (`v`): a tool call's whole output full screen, searchable; and its snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.ui.screens.output_viewer import OutputView, OutputViewer

from .helpers.harness import RatThemedApp
from .helpers.app import until
from .helpers.app import scripted_named as scripted

LOG = "\n".join(f"step {n}: compiling module_{n}.c" for n in range(3000)) + "\nerror: undefined reference to `main'\n"


@pytest.mark.slow
async def test_v_opens_the_whole_output_and_search_finds_the_tail(tmp_path: Path) -> None:
    call = {"sessionUpdate": "tool_call", "toolCallId": "build", "title": "make", "kind": "execute",
            "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": LOG}}],
            "rawInput": {"command": "make"}}
    app = RatApp(scripted({"turns": [[{"update": call}]]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"build", "enter")
        await until(pilot, lambda: "build" in view.session.state.tool_calls, "the tool call")
        await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")
        await pilot.press("ctrl+t", "v")
        await until(pilot, lambda: isinstance(app.screen, OutputViewer), "the viewer")
        viewer = app.screen
        assert len(viewer.view.lines) > 3000  # every line, not the card's 400
        assert viewer.view.lines[-1].startswith('  "command"') or "raw input" in viewer.text
        await pilot.press("slash", *"undefined", "enter")
        line, _column = viewer.view.matches[viewer.view.current]
        assert viewer.view.lines[line].startswith("error: undefined reference")
        assert viewer.view.scroll_offset.y > 2900  # brought into view
        await pilot.press("escape", "escape")
        assert not isinstance(app.screen, OutputViewer)


def test_snapshot_output_viewer_with_matches(snap_compare) -> None:
    text = "\n".join(["$ pytest -q", *(f"tests/test_{n}.py ....." for n in range(8)), "FAILED tests/test_3.py::test_x",
                      "1 failed, 39 passed"])

    class ViewerApp(RatThemedApp):
        def on_mount(self) -> None:
            self.use_rat_theme()
            self.push_screen(OutputViewer("pytest -q", text))

    async def run_before(pilot) -> None:
        await pilot.press("slash", *"test_3", "enter")
        await pilot.pause()

    assert snap_compare(ViewerApp(), terminal_size=(80, 18), run_before=run_before)


def test_search_counts_every_match() -> None:
    view = OutputView("a b a\nb a")
    assert view.search("A") == 3
