"""A request that arrives while a key is on its way to the screen (ui/tabs/request_gate.py): the key was typed
for what was there, so the request is decided once the key is handled. Opened at once, the dialog was
mounted, laid out and drawn, then withdrawn by that key (the key's echo waited 150-190 ms for it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui import priority
from rat_tui.ui.screens.confirm import AgentConfirmScreen

from .helpers.app import at_rest, scripted_named, until


@pytest.fixture
def long_input_window(monkeypatch: pytest.MonkeyPatch):
    """The window stays open until the key is drawn (`input_done`), however slow the machine: the request
    must wait for the key itself, not for the window's end."""
    monkeypatch.setattr(priority, "INPUT_WINDOW", 30.0)
    yield
    priority.reset()


async def test_a_request_arriving_as_a_key_is_on_its_way_waits_for_it_and_the_key_reaches_the_composer(
        tmp_path: Path, long_input_window: None) -> None:
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.first_session.state.status == "ready", "ready")
        view = app.tabs.active_view
        made: list[AgentConfirmScreen] = []

        def make() -> AgentConfirmScreen:
            made.append(AgentConfirmScreen("Delete the build?", "It asks."))
            return made[-1]

        priority.input_arrived()  # a key typed: the driver's thread marks it as it arrives
        asking = asyncio.create_task(app.request_gate.ask(view, "question", make))
        await asyncio.sleep(0)
        assert not made and len(app.screen_stack) == 1  # not opened while the key is on its way
        await pilot.press("y")  # the key: to the composer, not to a dialog
        await until(pilot, lambda: app.request_gate.waiting(view) == 1 and "request waiting" in
                    str(view.status_bar.render()), "the request waiting, announced")
        assert not made and view.composer.text == "y" and not asking.done()
        await opened_and_answered(app, pilot, asking)


async def test_a_request_with_no_key_on_its_way_opens_at_once(tmp_path: Path) -> None:
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await settled(app, pilot)
        asking = asyncio.create_task(app.request_gate.ask(view, "question", Dialogs(app).make))
        await asyncio.sleep(0)
        assert app.request_gate.showing is not None  # pushed in the same turn it arrived
        await until(pilot, lambda: isinstance(app.screen, AgentConfirmScreen), "the dialog")
        app.screen.dismiss(False)
        assert await asking is False


def frames_of(app: RatApp, screens: list) -> list:
    """The frames the app sends to the terminal for any of `screens` (RatApp._display: every frame), as a list
    that grows."""
    frames: list = []
    display = app._display

    def counted(screen, renderable) -> None:
        if screen in screens and renderable is not None:
            frames.append(screen)
        display(screen, renderable)

    app._display = counted  # type: ignore[method-assign]
    return frames


class Dialogs:
    """The dialogs a test's request makes (`make`, a question), and the frames the app drew of them (`drawn`)."""

    def __init__(self, app: RatApp) -> None:
        self.made: list[AgentConfirmScreen] = []
        self.drawn = frames_of(app, self.made)

    def make(self) -> AgentConfirmScreen:
        self.made.append(AgentConfirmScreen("Delete the build?", "It asks."))
        return self.made[-1]


async def opened_and_answered(app: RatApp, pilot, asking: asyncio.Task, shown=lambda: True) -> None:
    """The deliberate key opens the waiting request (`shown` once its dialog is on screen), answered yes."""
    assert app.request_gate.open_next()
    await until(pilot, lambda: isinstance(app.screen, AgentConfirmScreen) and shown(), "the dialog")
    app.screen.dismiss(True)
    assert await asking is True


async def settled(app: RatApp, pilot):
    """The app's tab, its agent ready and nothing left to draw (`at_rest`)."""
    await until(pilot, lambda: app.first_session.state.status == "ready" and at_rest(app), "ready, at rest")
    return app.tabs.active_view


async def test_a_key_typed_as_the_dialog_is_on_its_way_to_the_screen_withdraws_it_before_it_is_drawn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dialog is pushed; before its first frame, a key reaches the driver (typed with nothing on screen
    to answer): the dialog withdraws without being drawn, the key reaches the composer, the request waits.
    The screen beneath, never covered on the terminal, is not drawn anew whole: its transcript is not rendered
    again, neither in the key's frame nor once the dialog's removal is over (Textual 8.2 laid the app out twice as
    it ended, RatApp._prune), and the toast that says the request waits comes after the key's frame. (The toast
    is recorded, not shown: shown over the transcript, it has the rows beneath it rendered.)"""
    from rat_tui.ui.tabs.main_screen import MainScreen
    from rat_tui.ui.widgets.transcript import Transcript

    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    events: list[str] = []  # the transcript rendered, the key drawn, the toast, the removal over: in order
    render_lines, input_done, end_cover = Transcript.render_lines, priority.input_done, MainScreen.end_undrawn_cover

    def recording_render(self, crop):
        events.append("transcript rendered")
        return render_lines(self, crop)

    def recording_done(seen: int) -> None:
        events.append("key drawn")
        input_done(seen)

    def recording_end(self) -> None:
        events.append("removal over")
        end_cover(self)

    async with app.run_test(size=(100, 30)) as pilot:
        view = await settled(app, pilot)
        dialogs = Dialogs(app)
        drawn = dialogs.drawn
        monkeypatch.setattr(Transcript, "render_lines", recording_render)
        monkeypatch.setattr(priority, "input_done", recording_done)
        monkeypatch.setattr(MainScreen, "end_undrawn_cover", recording_end)
        monkeypatch.setattr(app.request_gate.toasts, "show", lambda *args, **kwargs: events.append("toast"))
        asking = asyncio.create_task(app.request_gate.ask(view, "question", dialogs.make))
        await asyncio.sleep(0)
        assert dialogs.made and app.request_gate.showing is not None  # pushed, not shown yet
        priority.input_arrived(priority.KEY_WINDOW, key=True)  # the driver's thread marks the key as it arrives
        await pilot.press("y")
        await until(pilot, lambda: app.request_gate.waiting(view) == 1 and "request waiting" in
                    str(view.status_bar.render()), "the request waiting, announced")
        assert view.composer.text == "y" and not drawn and len(app.screen_stack) == 1 and not asking.done()
        await until(pilot, lambda: "toast" in events and "removal over" in events and not dialogs.made[0].is_attached
                    and at_rest(app), "the toast, the dialog's removal over, everything drawn")
        assert events.index("key drawn") < events.index("toast"), events
        assert "transcript rendered" not in events, events
        await opened_and_answered(app, pilot, asking, lambda: len(drawn) > 0)  # drawn this time


async def test_a_dialog_pushed_by_itself_with_no_key_since_is_drawn(tmp_path: Path) -> None:
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await settled(app, pilot)
        dialogs = Dialogs(app)
        asking = asyncio.create_task(app.request_gate.ask(view, "question", dialogs.make))
        await until(pilot, lambda: bool(dialogs.drawn), "the dialog drawn")
        screen = app.screen
        assert isinstance(screen, AgentConfirmScreen) and screen.key_sink is not None and screen.keys_at_push is None
        screen.dismiss(False)
        assert await asking is False


async def test_a_request_still_waiting_as_the_app_ends_ends_cleanly_when_cancelled(
        tmp_path: Path, long_input_window: None) -> None:
    """Cancelled once the app's widgets are gone (its agent's task cancelled at shutdown), a waiting request
    ends as cancelled: it used to raise NoMatches looking for the tabs, a traceback in the log at exit."""
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await settled(app, pilot)
        priority.input_arrived()  # a key on its way: the request waits, announced
        asking = asyncio.create_task(app.request_gate.ask(view, "question", Dialogs(app).make))
        await until(pilot, lambda: app.request_gate.waiting(view) == 1, "the request waiting")
    assert not asking.done()
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
