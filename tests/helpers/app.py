"""Driving the real RatApp with Pilot, against scripted fake agents over real pipes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.pilot import Pilot

from rat_tui.agents.spec import AgentSpec
from rat_tui.app import RatApp
from rat_tui.ui.tabs.view import SessionView

from .agents import scripted_argv


def scripted(script: dict, tmp_path: Path) -> AgentSpec:
    """The scripted fake agent playing `script`, as the app's agent (named after its file)."""
    return AgentSpec(name="scripted_agent.py", argv=scripted_argv(script, tmp_path), env={}, is_demo=False)


def scripted_named(script: dict, tmp_path: Path, name: str = "agent") -> AgentSpec:
    """The scripted fake agent playing `script`, named `name`, its script in its own folder `tmp_path/name`."""
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    return AgentSpec(name=name, argv=scripted_argv(script, folder), env={}, is_demo=False)


async def until(pilot: Pilot, predicate: Callable[[], bool], what: str, timeout: float = 45.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


def delivered(session) -> bool:
    """Whether the session's store has handed every change it holds to the widgets. The state changes at
    once; the widgets (transcript, status bar, cards) hear of it on a timer a frame later, 50 ms after a
    big batch (SessionStore): wait on this too before asserting what a state change should show."""
    store = session.store
    return not (store._pending or store._run)


def transcript_flushed(transcript) -> bool:
    """Whether the transcript has cut and drawn every batch appended to it: a flush that cost over
    PACED_FLUSH waits on a timer (FlushPacer.schedule), past any fixed number of pauses."""
    return not transcript.pending


def at_rest(app: RatApp) -> bool:
    """Whether the app's tab has nothing left to draw: no input on its way, what the agent sent delivered and
    drawn, no tab label put off (SessionTabs puts off a change of width for QUIET_RELABEL), and nothing of the
    screen waiting for a frame: no layout, repaint or scroll asked for by the screen or any widget (a widget's
    own flags reach the screen at its next idle), a scrollbar's included. A test that asserts what a frame does
    NOT draw starts from here, so that nothing drawn late from before is taken for the frame's own doing."""
    from rat_tui import priority

    screen, tab = app.screen, view(app)
    if (priority.input_wait() or not delivered(tab.session) or not transcript_flushed(tab.transcript)
            or app.tabs._deferred or app.tabs._retrying or screen._dirty_widgets):
        return False
    for widget in [screen, *screen.walk_children(with_self=False)]:
        bars = [bar for bar in (widget._vertical_scrollbar, widget._horizontal_scrollbar) if bar is not None]
        if any(node._repaint_required or node._layout_required or node._scroll_required for node in [widget, *bars]):
            return False
    return True


def view(app: RatApp) -> SessionView:
    return app.query_one(SessionView)


def state_word(app: RatApp) -> str:
    return view(app).status_bar.state_word


def labels(app: RatApp) -> list[str]:
    """The tab labels, in order."""
    return [str(tab.label) for tab in app.tabs.query("ContentTab")]


def steady(app: App) -> None:
    """Stop every text cursor blinking, so a snapshot does not depend on the blink phase (nor does it on when an
    agent paused: conftest's labels_at_once_in_snapshots): on every screen of the stack, since a dialog shows the
    screen beneath it, the composer's cursor with it."""
    for screen in app.screen_stack:
        for widget in screen.query("TextArea, Input"):
            widget.cursor_blink = False


def screen_text(app: App) -> str:
    """The text of the screen as the terminal would show it (trailing spaces dropped)."""
    return "\n".join(strip.text.rstrip() for strip in app.screen._compositor.render_strips())


async def press_to_quit(pilot: Pilot, key: str) -> None:
    """Press a key that ends the app, as Pilot.press sends a key, without Pilot's waits after it (wait on
    `not app.is_running` instead). Pilot waits for the app's animations to complete after each key; an
    animation begun while the app shuts down, its animator already stopped, never completes, and
    `pilot.press` then waits forever (seen under load)."""
    from textual import events

    event = events.Key(key, key if len(key) == 1 else None)
    event.set_sender(pilot.app)
    pilot.app._driver.send_message(event)


async def send(pilot: Pilot, text: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")


async def palette_offers(pilot: Pilot, app: App, text: str) -> None:
    """Wait until the command palette's highlighted command contains `text` (the palette searches in a worker)."""
    from textual.command import CommandList

    def offered() -> bool:
        lists = app.screen.query(CommandList)
        if not lists:
            return False
        options = lists.first()
        index = options.highlighted
        return index is not None and text in str(options.get_option_at_index(index).prompt)

    await until(pilot, offered, f"the palette to offer {text!r}")


FLOOD_LINE = "A line of the flood, *emphasis* and `code`.\n\n"


def flood_app(tmp_path: Path, repeat: int = 4000) -> tuple[RatApp, Path]:
    """The app on a scripted agent whose turn floods the transcript (`repeat` markdown lines), then waits for the
    file it returns (the release) to exist before it ends."""
    release = tmp_path / "release"
    script = {"turns": [[{"chunk": FLOOD_LINE, "repeat": repeat}, {"wait_file": str(release)}]]}
    return RatApp(scripted(script, tmp_path), tmp_path), release


async def start_flood(pilot: Pilot, app: RatApp) -> SessionView:
    """Once the agent is ready, send the prompt of a `flood_app`, wait for its flood to begin, and give the composer
    the focus (for what is typed during the flood); the tab's view."""
    await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
    view(app).composer.insert("flood please")
    await pilot.press("enter")
    await until(pilot, lambda: len(view(app).session.state.entries) >= 2, "the flood to begin")
    view(app).composer.focus()
    await pilot.pause()
    return view(app)
