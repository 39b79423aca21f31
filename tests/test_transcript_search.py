"""Ctrl+F: incremental search of the live transcript, collapsed thoughts and tool output included."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.ui.tabs.search import SearchBar

from .helpers.app import until
from .helpers.app import scripted_named as scripted

pytestmark = pytest.mark.slow

THOUGHT = "".join(f"thinking step {n}\n" for n in range(30)) + "the secret plan is quokka\n"
OUTPUT = "\n".join(f"compiling {n}" for n in range(300)) + "\nlinker error: wombat missing"
TURN = [
    {"update": {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": THOUGHT}}},
    {"update": {"sessionUpdate": "tool_call", "toolCallId": "make", "title": "make all", "kind": "execute",
                "status": "failed", "content": [{"type": "content", "content": {"type": "text", "text": OUTPUT}}]}},
    {"chunk": "The build failed; a quokka would know why.\n"},
]


async def search_app(tmp_path: Path, pilot_size=(100, 30)):
    return RatApp(scripted({"turns": [TURN]}, tmp_path, "one"), tmp_path)


async def test_search_opens_collapsed_thoughts_and_tool_output(tmp_path: Path) -> None:
    app = await search_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: "quokka would know" in view.transcript.plain_text, "the answer")
        await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")
        call = view.session.state.tool_calls["make"] if "make" in view.session.state.tool_calls else \
            next(iter(view.session.state.tool_calls.values()))
        assert not call.expanded
        rows = view.transcript.region.height
        await pilot.press("ctrl+f", *"wombat")  # only in the tool output, past the card's first lines
        bar = view.query_one(SearchBar)
        # One row, right above the composer; the transcript gives up that row, not half the screen.
        assert bar.region.height == 1 and bar.region.bottom == view.composer.region.y, bar.region
        assert view.transcript.region.height == rows - 1
        assert bar.hits == [call.key]
        assert call.expanded  # opened on the match
        assert "linker error: wombat missing" in view.transcript.visible_text()
        for _ in "wombat":
            await pilot.press("backspace")
        await pilot.press(*"quokka")  # in a collapsed thought and in the answer
        assert len(bar.hits) == 2
        assert "quokka would know" in view.transcript.visible_text()  # the newest first
        await pilot.press("up")
        assert "the secret plan is quokka" in view.transcript.visible_text()  # the thought, opened
        await pilot.press("escape")  # closes the search; does not cancel anything
        assert not bar.has_class("-open") and view.transcript.search_query == ""
        assert view.composer.has_focus


def test_snapshot_search_bar_with_matches(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot) -> None:
        view = pilot.app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: "quokka would know" in view.transcript.plain_text, "the answer")
        await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")
        await pilot.press("ctrl+f", *"quokka", "up")
        await pilot.pause()

    app = RatApp(scripted({"turns": [TURN]}, tmp_path, "one"), Path("/"))
    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
