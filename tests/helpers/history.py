"""The history screen in the app: prompting, and continuing a session from its record."""

from __future__ import annotations

from pathlib import Path

from rat_tui.agents.spec import AgentSpec
from rat_tui.app import RatApp
from rat_tui.ui.screens.history import HistoryTranscriptScreen
from rat_tui.ui.tabs.view import SessionView

from .agents import scripted_argv
from .app import until


def scripted_in(script: dict, folder: Path, name: str = "fake") -> AgentSpec:
    """The scripted fake agent playing `script`, named `name`, its script in `folder` (made if missing)."""
    folder.mkdir(exist_ok=True)
    return AgentSpec(name=name, argv=scripted_argv(script, folder), env={}, is_demo=False)


def first_view(app: RatApp) -> SessionView:
    return app.tabs.views[0]


async def prompt(pilot, app: RatApp, text: str, answer: str) -> None:
    view = app.tabs.active_view
    await pilot.press(*text, "enter")
    await until(pilot, lambda: answer in view.transcript.plain_text, answer)
    await until(pilot, lambda: view.session.state.status == "ready", "ready after the turn")


async def continue_from_history(pilot, app: RatApp) -> SessionView:
    """Ctrl+R, open the newest session, wait for its replay, press c: the continued session's tab."""
    await pilot.press("ctrl+r", "enter")
    screen = app.screen
    assert isinstance(screen, HistoryTranscriptScreen)
    await until(pilot, lambda: screen.session.done, "the replay")
    await pilot.press("c")
    await until(pilot, lambda: len(app.tabs.views) == 2, "the continued session's tab")
    return app.tabs.active_view
