"""Provides the tab's side of rename, fork and steering (engine: session/agent_controls.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from ...session import agent_controls
from ..screens.dialog import Dialog

if TYPE_CHECKING:
    from .view import SessionView


class TitleScreen(Dialog[str | None]):
    """One line of text: the session's new title (Enter keeps it, Esc drops it)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="title.cancel")]
    DEFAULT_CSS = """
    TitleScreen > Vertical { width: 60; height: auto; padding: 1 2; background: $panel; border: round $accent; }
    """

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Rename the session (the agent stores the title)")
            yield Input(self.current, id="title")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)


def rename(view: SessionView) -> None:
    session = view.session
    if not agent_controls.supports(session, "title"):
        view.notify("This agent cannot rename its sessions.", timeout=3)
        return

    async def apply(title: str | None) -> None:
        if title is None:
            return
        problem = await agent_controls.set_title(session, title)
        if problem is not None:
            view.notify(problem, severity="warning", timeout=5)

    def answered(title: str | None) -> None:
        view.run_worker(apply(title), group="controls", exit_on_error=False)

    view.app.push_screen(TitleScreen(session.state.title or ""), callback=answered)


def fork(view: SessionView) -> None:
    session = view.session

    async def run() -> None:
        forked, problem = await agent_controls.fork(session)
        if problem is not None or forked is None:
            view.notify(problem or "The fork failed.", severity="warning", timeout=5)
            return
        await view.app.open_session(session.command, session.cwd, attach_session_id=forked)
        view.app.notify(f"Session forked into a new tab ({forked}).", timeout=4)

    view.run_worker(run(), group="controls", exit_on_error=False)


def steer(view: SessionView) -> None:
    """Alt+S: the composer's text into the running turn where the agent takes steering; else Enter's way."""
    composer = view.composer
    text = composer.text.rstrip("\n")
    session = view.session
    if not text.strip():
        view.notify("Nothing to steer with.", timeout=2)
        return
    if not session.busy or not agent_controls.supports(session, "steering"):
        view.flow.submit(text)  # sends when idle, queues while a turn runs: as today
        return
    composer.clear()

    async def run() -> None:
        outcome, problem = await agent_controls.steer(session, text)
        if problem is not None:
            view.notify(f"{problem} Queued instead.", severity="warning", timeout=5)
            view.flow.submit(text)
        elif outcome == "prompt":
            view.flow.submit(text)  # the turn had ended: an ordinary prompt

    view.run_worker(run(), group="steer", exit_on_error=False)


def palette_commands(view: SessionView) -> Iterator[SystemCommand]:
    """Palette entries for the controls without a key, offered only where the agent advertises them."""
    session = view.session
    if agent_controls.supports(session, "title"):
        yield SystemCommand("Rename session", "Give the session a title the agent stores (session/set_title)",
                            lambda: rename(view))
    if agent_controls.supports(session, "fork"):
        yield SystemCommand("Fork session", "A new tab that goes on from this session's conversation (session/fork)",
                            lambda: fork(view))
