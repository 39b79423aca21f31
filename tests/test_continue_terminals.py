"""Terminal output in the history: a session replayed from the journal (the history screen, `rat replay`) and a
session continued from it show the client terminal's output in its tool card, as it showed live; continuing
a session that is already open in a tab switches to that tab instead of opening a second one."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.agents.spec import demo_agent
from rat_tui.app import RatApp
from rat_tui.history.records import read_recording
from rat_tui.ui.replay_app import ReplayApp
from rat_tui.ui.screens.history import HistoryScreen, HistoryTranscriptScreen
from rat_tui.config import Config, HistoryConfig

from .helpers.app import until

pytestmark = pytest.mark.slow

OUTPUT = "demo-terminal-ok"  # what the demo's `run` prints first (its title is the command: `echo demo-terminal-ok && ls`)


def output_shown(text: str) -> bool:
    """The terminal's output line and its exit status in the card, not only the command in the title."""
    lines = [line.strip() for line in text.splitlines()]
    return OUTPUT in lines and "exit code 0" in lines


async def run_in_a_terminal(pilot, app: RatApp) -> None:
    view = app.tabs.active_view
    await until(pilot, lambda: view.session.state.status == "ready", "ready")
    await pilot.press(*"run", "enter")
    await until(pilot, lambda: view.session.permissions.pending == 1, "the permission request")
    await until(pilot, lambda: app.request_gate.showing is not None, "the permission dialog")
    await pilot.press("y")  # allow once
    await until(pilot, lambda: view.session.state.stop_reason == "end_turn" and view.session.state.status == "ready",
                "the turn")
    await until(pilot, lambda: output_shown(view.transcript.plain_text), "the terminal output live")


async def open_from_history(pilot, app: RatApp) -> HistoryTranscriptScreen:
    await pilot.press("ctrl+r")
    screen = app.screen
    assert isinstance(screen, HistoryScreen)
    await pilot.press(*"run")  # the session whose prompt was "run"
    await until(pilot, lambda: len(screen.rows) == 1, "the search")
    await pilot.press("enter")
    transcript = app.screen
    assert isinstance(transcript, HistoryTranscriptScreen)
    await until(pilot, lambda: transcript.session.done, "the replay of the journal")
    return transcript


async def test_replayed_and_continued_sessions_show_the_journaled_terminal_output(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    export = tmp_path / "exports"
    config = Config(history=HistoryConfig(export_dir=str(export)))
    app = RatApp(demo_agent(), project, config=config)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_in_a_terminal(pilot, app)
    app = RatApp(demo_agent(), project, config=config)  # a later run: the first session is no longer open
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.tabs.active_view.session.state.status == "ready", "ready")
        transcript = await open_from_history(pilot, app)
        assert output_shown(transcript.view.transcript.plain_text)
        await pilot.press("j")  # the journal, for `rat replay`
        await pilot.press("c")
        await until(pilot, lambda: len(app.tabs.views) == 2, "the continued session's tab")
        continued = app.tabs.active_view
        await until(pilot, lambda: continued.session.state.status == "ready", "the load")
        await until(pilot, lambda: OUTPUT in continued.transcript.plain_text, "the load's replay")
        await pilot.pause()
        assert output_shown(continued.transcript.plain_text)
    [journal_file] = export.glob("*.jsonl")
    replay = ReplayApp(read_recording(journal_file), journal_file)
    async with replay.run_test(size=(120, 40)) as pilot:
        view = replay.tabs.views[0]
        await until(pilot, lambda: view.session.state.status == "replayed", "the replay")
        assert output_shown(view.transcript.plain_text)
