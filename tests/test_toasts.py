"""Toasts clear of the composer, never twice the same at once, and gone when their news is stale: a request's toast
when it is answered or withdrawn, a toast about a session's state when the state changes (ui/toasts.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from textual.geometry import Region

from rat_tui.app import RatApp
from rat_tui.ui.screens.confirm import AgentConfirmScreen

from .helpers.app import scripted_named, until

pytestmark = pytest.mark.slow


def toasts(app: RatApp) -> list[tuple[str, Region]]:
    """The toasts on the current screen: their text and where they are drawn."""
    return [(str(toast.render()), toast.region) for toast in app.screen.query("Toast")]


def toast_texts(app: RatApp) -> str:
    return "\n".join(text for text, _ in toasts(app))


def on_top(app: RatApp, region: Region) -> set:
    """The widgets drawn on top at the cells of `region`."""
    return {app.screen.get_widget_at(x, y)[0] for y in range(region.y, region.bottom) for x in range(region.x, region.right)}


async def test_toasts_are_drawn_clear_of_the_composer_and_the_status_bar(tmp_path: Path) -> None:
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"a draft of", "shift+enter", *"three", "shift+enter", *"lines")  # a taller composer
        for n in range(4):  # more than fit in the room above the composer
            app.notify(f"News number {n}, which takes a line or two of the toast to say in full.", title="News")
        await until(pilot, lambda: len(toasts(app)) == 4 and all(region.area for _, region in toasts(app)),
                    "the toasts drawn")
        # What is drawn on each cell of the composer, the status bar and the tab bar is theirs, not a toast's.
        for widget in (view.composer, view.status_bar, app.query_one("Tabs")):
            covering = {type(found).__name__ for found in on_top(app, widget.region)} & {"Toast", "ToastHolder"}
            assert not covering, f"a toast covers {widget}"
        assert any(region.right >= 78 and region.y <= 4 for _, region in toasts(app))  # top right


async def test_the_same_toast_twice_is_shown_once(tmp_path: Path) -> None:
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        for _ in range(3):
            app.notify("Nothing to copy.", timeout=30)
        app.notify("Something else.", timeout=30)
        await until(pilot, lambda: "Something else." in toast_texts(app), "the other toast")
        await until(pilot, lambda: toast_texts(app).count("Nothing to copy.") == 1, "one toast of the three")
        assert len(toasts(app)) == 2


async def test_a_background_request_s_toast_goes_when_it_is_answered(tmp_path: Path) -> None:
    """A request in tab 1 while tab 2 is shown: announced by a toast; opened and answered, the toast is gone
    (though its time is not up), and the status bar's reminder with it."""
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        first = app.tabs.active_view
        await until(pilot, lambda: first.session.state.status == "ready", "first ready")
        second = await app.open_session(scripted_named({}, tmp_path, "two"), tmp_path)
        await until(pilot, lambda: second.state.status == "ready", "second ready")
        asking = asyncio.create_task(app.request_gate.ask(
            first, "question", lambda: AgentConfirmScreen("Delete the build?", "It asks.")))
        await until(pilot, lambda: "waiting for an answer in tab 1" in toast_texts(app), "the request's toast")
        await until(pilot, lambda: "request waiting in tab 1" in str(app.tabs.active_view.status_bar.render()),
                    "the reminder in the current tab's status bar")
        await pilot.press("ctrl+g")  # jumps to tab 1 and opens it
        await until(pilot, lambda: isinstance(app.screen, AgentConfirmScreen), "the dialog")
        app.screen.dismiss(True)
        assert await asking is True
        await until(pilot, lambda: not isinstance(app.screen, AgentConfirmScreen), "the dialog closed")
        await until(pilot, lambda: "waiting for an answer" not in toast_texts(app), "the toast gone")
        assert "request waiting" not in str(first.status_bar.render())


async def test_a_request_withdrawn_by_the_agent_takes_its_toast_with_it(tmp_path: Path) -> None:
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"typing")  # a draft: the request waits, announced
        asking = asyncio.create_task(app.request_gate.ask(
            view, "question", lambda: AgentConfirmScreen("Delete the build?", "It asks.")))
        await until(pilot, lambda: "waiting for an answer" in toast_texts(app), "the request's toast")
        asking.cancel()  # the agent withdrew it ($/cancel_request, the turn cancelled)
        await until(pilot, lambda: "waiting for an answer" not in toast_texts(app), "the toast gone")
        assert view.composer.text == "typing"


async def test_a_toast_about_the_session_s_state_goes_when_the_state_changes(tmp_path: Path) -> None:
    release = tmp_path / "release"
    app = RatApp(scripted_named({"turns": [[{"wait_file": str(release)}, {"chunk": "done"}]]}, tmp_path, "one"),
                 tmp_path)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: view.session.state.status == "working", "working")
        await pilot.press(*"next", "enter", "enter")  # queued, then Enter on the empty prompt: told it waits
        await until(pilot, lambda: "go out when the turn ends" in toast_texts(app), "the toast about the turn")
        release.touch()
        await until(pilot, lambda: "done" in view.transcript.plain_text, "the turn's end")
        await until(pilot, lambda: "go out when the turn ends" not in toast_texts(app), "the stale toast gone")
