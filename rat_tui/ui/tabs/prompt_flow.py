"""Provides PromptFlow: the composer's side of a session's prompts (Enter, Ctrl+S, Esc, queue edits).

SessionView owns one and forwards its keys here, so the view stays a thin layout. The rules — send,
queue, send next, send now, give back — are the engine's (session/prompting.py); this only moves text
between the composer and the engine and redraws the queue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...session.prompting import Prompting
    from .view import SessionView


class PromptFlow:
    def __init__(self, view: "SessionView") -> None:
        self.view = view

    @property
    def session(self):
        return self.view.session

    @property
    def prompts(self) -> Prompting:
        return self.view.session.prompts

    @property
    def queue(self):
        return self.prompts.queue

    def mount(self) -> None:
        """Wire the composer to the session's directory and capabilities."""
        composer = self.view.composer
        composer.cwd = self.session.cwd
        composer.capabilities = lambda: self.session.hello.capabilities if self.session.hello else None
        composer.agent_name = lambda: self.session.state.agent_name

    def unmount(self) -> None:
        pass

    def submit(self, text: str) -> None:
        """Enter: send now when idle, queue while a turn runs; the composer is cleared only when taken."""
        if self.prompts.submit(text):
            self.view.composer.take(text)  # what was typed after Enter stays

    def send_next(self) -> None:
        self.prompts.send_next()

    def send_now(self) -> None:
        """Ctrl+S: the composer's text (else the first queued prompt) now, cancelling a running turn first."""
        if self.prompts.send_now(self.view.composer.text):
            self.view.composer.clear()

    def give_back(self, text: str) -> str:
        return self.prompts.give_back(text)

    def status_changed(self) -> None:
        self.prompts.status_changed()

    def edit(self, index: int | None = None) -> None:
        """Load a queued prompt (the last by default) into the composer; a draft there takes its place."""
        if not self.queue:
            self.view.notify("No queued prompt to edit.", timeout=2)
            return
        index = len(self.queue) - 1 if index is None else index
        composer = self.view.composer
        text = self.prompts.edit(index, composer.text)
        if text is not None:
            composer.load_text(text)
            composer.move_cursor(composer.document.end)
            composer.focus()

    def remove(self, index: int | None = None) -> None:
        if not self.queue:
            return
        if self.prompts.remove(len(self.queue) - 1 if index is None else index):
            self.view.notify("Queued prompt removed.", timeout=2)

    def queue_changed(self) -> None:
        view = self.view
        if view.is_attached and (self.queue or view.queue_view_mounted):
            view.queue_view.refresh_queue(self.prompts.waiting())
            if not self.queue and view.queue_view.has_focus:
                view.composer.focus()

    async def escape(self) -> None:
        """Esc past the composer's menus: cancel a running turn; otherwise touch nothing (never the draft)."""
        session = self.session
        if session.busy:
            if session.state.status_detail == "cancelling":
                session.ui.tell("Already cancelling: waiting for the agent to stop.", about_state=True)
            await session.cancel()
            return
        session.ui.tell("No turn is running." + (" The draft is kept." if self.view.composer.text.strip() else ""),
                        timeout=2, about_state=True)
