"""A tab streaming in the background: its transcript skips layout while hidden and catches up when shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp

from .helpers.app import labels, scripted_named, until

pytestmark = pytest.mark.slow


async def test_background_stream_shows_when_the_tab_comes_back(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    chunks = [{"wait_file": str(release)}, {"chunk": "line of the answer\n\n", "repeat": 300}, {"chunk": "THE END"}]
    app = RatApp(scripted_named({"turns": [chunks]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.tabs.active_view
        await until(pilot, lambda: first.session.state.status == "ready", "first ready")
        first.session.start_prompt("go")
        second = await app.open_session(scripted_named({}, tmp_path, "two"), tmp_path)
        await until(pilot, lambda: second.state.status == "ready", "second ready")
        release.touch()
        await until(pilot, lambda: first.session.state.stop_reason == "end_turn", "the background turn")
        # The transcript has taken the last batch (a layout would have happened then): still none.
        await until(pilot, lambda: "✓" in labels(app)[0], "the done badge")
        await until(pilot, lambda: not first.transcript.pacer.flush_pending, "the transcript's last batch")
        assert first.transcript.pacer.background_stale  # nothing laid out while hidden
        await pilot.press("alt+1")
        await until(pilot, lambda: "THE END" in first.transcript.visible_text(), "the end of the answer shown")
