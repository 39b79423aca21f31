"""The history screen in the app: prompting, and continuing a session from its record."""

from __future__ import annotations

from pathlib import Path

from rat_tui.agents.spec import AgentSpec
from rat_tui.app import RatApp
from rat_tui.ui.screens.history import HistoryScreen, HistoryTranscriptScreen
from rat_tui.ui.tabs.view import SessionView

from .agents import scripted_argv
from .app import until


def scripted_in(script: dict, folder: Path, name: str = "fake") -> AgentSpec:
    """The scripted fake agent playing `script`, named `name`, its script in `folder` (made if missing)."""
    folder.mkdir(exist_ok=True)
    return AgentSpec(name=name, argv=scripted_argv(script, folder), env={}, is_demo=False)


def first_view(app: RatApp) -> SessionView:
    return app.tabs.views[0]


async def replayed_view(pilot, app: RatApp) -> SessionView:
    """The first tab once its replay has ended and every update is on screen."""
    view = first_view(app)
    await until(pilot, lambda: view.session.state.status == "replayed", "the replay")
    view.session.store.flush()
    await pilot.pause()
    return view


async def prompt(pilot, app: RatApp, text: str, answer: str) -> None:
    view = app.tabs.active_view
    await pilot.press(*text, "enter")
    await until(pilot, lambda: answer in view.transcript.plain_text, answer)
    await until(pilot, lambda: view.session.state.status == "ready", "ready after the turn")


async def continue_from_history(pilot, app: RatApp, search: str = "") -> SessionView:
    """Ctrl+R, open the newest session (the one `search` finds, typed key by key), wait for its replay, press c:
    the continued session's tab."""
    await pilot.press("ctrl+r")
    if search:
        picker = app.screen
        assert isinstance(picker, HistoryScreen)
        await pilot.press(*search)
        await until(pilot, lambda: len(picker.rows) == 1, "the search")
    await pilot.press("enter")
    screen = app.screen
    assert isinstance(screen, HistoryTranscriptScreen)
    await until(pilot, lambda: screen.session.done, "the replay")
    await pilot.press("c")
    await until(pilot, lambda: len(app.tabs.views) == 2, "the continued session's tab")
    return app.tabs.active_view
