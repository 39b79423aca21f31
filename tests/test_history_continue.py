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
from rat_tui.config import Config, HistoryConfig
from rat_tui.ui.screens.history import HistoryScreen, HistoryTranscriptScreen
from rat_tui.ui.screens.session_browser import SessionBrowserScreen

from .helpers.agents import sent
from .helpers.app import delivered, scripted_named, until
from .helpers.history import prompt

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
    await until(pilot, lambda: transcript.session.done and delivered(transcript.session), "the replay of the journal")
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
        await until(pilot, lambda: view.session.state.status == "replayed" and delivered(view.session), "the replay")
        assert output_shown(view.transcript.plain_text)


def toasts(app: RatApp) -> str:
    return "\n".join(n.message for n in app._notifications)


async def test_continuing_a_session_open_in_a_tab_switches_to_that_tab(tmp_path: Path, record_file: Path) -> None:
    here = str(tmp_path)
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}}},
              "on_request": {"session/list": [[{"respond": {"sessions": [
                  {"sessionId": "sess-1", "cwd": here, "title": "The first one"}]}}]]},
              "turns": [[{"chunk": "first answer"}]]}
    app = RatApp(scripted_named(script, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        first = app.tabs.active_view
        await until(pilot, lambda: first.session.state.status == "ready", "ready")
        await prompt(pilot, app, "hello", "first answer")
        await app.open_session(scripted_named({}, tmp_path, "two"), tmp_path)  # another agent in tab 2
        await until(pilot, lambda: app.tabs.active_view is not first, "tab 2 shown")
        await until(pilot, lambda: app.tabs.active_view.session.state.status == "ready", "tab 2 ready")

        await pilot.press("ctrl+r")  # from tab 2: the history, the session of tab 1, continue it
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen) and len(app.screen.rows) == 1, "the list")
        await pilot.press("enter")
        transcript = app.screen
        assert isinstance(transcript, HistoryTranscriptScreen)
        await until(pilot, lambda: transcript.session.done, "the replay")
        await pilot.press("c")
        await until(pilot, lambda: app.tabs.active_view is first, "tab 1 shown again")
        assert len(app.tabs.views) == 2 and not isinstance(app.screen, (HistoryScreen, HistoryTranscriptScreen))
        assert "That session is already open in tab 1: switched to it." in toasts(app)

        first_notice = next(n for n in app._notifications if "already open in tab 1" in n.message)
        await pilot.press("ctrl+b")  # the agent's saved sessions: the one open here
        await until(pilot, lambda: isinstance(app.screen, SessionBrowserScreen), "the browser")
        browser = app.screen
        await until(pilot, lambda: browser.query("OptionList") and browser.query_one("OptionList").option_count > 0,
                    "the listed session")
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, SessionBrowserScreen), "the browser closed")
        # Said again: the same words replace the first toast rather than stack under it (ui/toasts.py).
        await until(pilot, lambda: toasts(app).count("already open in tab 1") == 1
                    and first_notice not in app._notifications, "the second notice")
        assert len(app.tabs.views) == 2 and app.tabs.active_view is first
    assert not sent(record_file, "session/load")  # never a second live session on sess-1
