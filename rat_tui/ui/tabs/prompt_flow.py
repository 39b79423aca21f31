"""Provides PromptFlow: what Enter, Ctrl+S and Esc do with a session's prompts (send, queue, cancel).

SessionView owns one and forwards its keys here, so the view stays a thin layout. The queue rules
are in prompt_queue.py; what a prompt carries (attachments) is in attachments.py.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ...session import attachments
from ...session.prompt_queue import PromptQueue
from ...state.models import READY, STARTING

if TYPE_CHECKING:
    from .view import SessionView

log = logging.getLogger("rat.ui")


class PromptFlow:
    def __init__(self, view: "SessionView") -> None:
        self.view = view
        self.queue = PromptQueue(on_change=self._queue_changed)

    @property
    def session(self):
        return self.view.session

    def mount(self) -> None:
        """Wire the composer to the session's directory and capabilities, and hear turns end."""
        composer = self.view.composer
        composer.cwd = self.session.cwd
        composer.capabilities = lambda: self.session.hello.capabilities if self.session.hello else None
        composer.agent_name = lambda: self.session.state.agent_name
        self.session.turn_listeners.append(self._turn_ended)

    def unmount(self) -> None:
        if self._turn_ended in self.session.turn_listeners:
            self.session.turn_listeners.remove(self._turn_ended)

    # -- sending ------------------------------------------------------------------------------------

    def _waiting(self) -> bool:
        """A turn runs, or the agent is still starting: a prompt now goes to the queue."""
        return self.session.busy or (self.session.state.status == STARTING and self.session.session_id is None)

    def submit(self, text: str) -> None:
        """Enter: send now when idle, queue while a turn runs; the composer is cleared only on success."""
        text = text.rstrip("\n")
        if self._waiting():
            why = self._refusal(text) if self.session.hello is not None else None
            if why is not None:  # say it now, not when the turn ends
                self._refused(why)
                return
            self.queue.add(text)
            self.view.composer.clear()
            return
        if self.send(text):
            self.view.composer.clear()

    def send(self, text: str) -> bool:
        """Start a turn with `text` and its attachments; False (and why, shown) when it cannot go."""
        why = self.session.can_prompt()
        if why is not None:
            self.view.notify(why, severity="warning")
            return False
        built = self._build(text)
        if built.refused is not None:
            self._refused(built.refused)
            return False
        for notice in built.notices:
            self.view.notify(notice, title="Attachment", timeout=6)
        blocks = built.blocks if built.blocks is not None and len(built.blocks) > 1 else None
        return self.session.start_prompt(text, blocks, built.chips) is not None

    def _build(self, text: str) -> attachments.BuiltPrompt:
        hello = self.session.hello
        return attachments.build_prompt(text, self.session.cwd, hello.capabilities if hello else None,
                                        self.session.state.agent_name)

    def _refusal(self, text: str) -> str | None:
        """Why `text` would be refused, for a prompt being queued: no file is read until it is sent."""
        hello = self.session.hello
        return attachments.prompt_refusal(text, self.session.cwd, hello.capabilities if hello else None,
                                          self.session.state.agent_name)

    def _refused(self, why: str) -> None:
        log.info("prompt refused: %s", why)
        self.view.notify(why, title="Not sent", severity="warning", timeout=10)

    def send_next(self) -> None:
        """Enter on an empty composer: the first queued prompt, if the session is idle."""
        if not self.queue:
            return
        if self._waiting():
            self.view.notify("The queued prompts go out when the turn ends (Ctrl+S sends now).", timeout=3)
            return
        self._send_queued()

    def send_now(self) -> None:
        """Ctrl+S: the composer's text (else the first queued prompt) now, cancelling a running turn first."""
        composer = self.view.composer
        text = composer.text.rstrip("\n")
        if not self.session.busy:
            if text.strip():
                self.submit(text)
            elif self.queue:
                self._send_queued()
            else:
                self.view.notify("Nothing to send.", timeout=2)
            return
        if text.strip():
            why = self._refusal(text)
            if why is not None:
                self._refused(why)
                return
            self.queue.push_front(text)
            composer.clear()
        elif self.queue:
            self.queue.send_now = True
            self._queue_changed()
        else:
            self.view.notify("Nothing to send.", timeout=2)
            return
        self.view.run_worker(self.session.cancel(), group="cancel", exit_on_error=False)

    def _send_queued(self) -> None:
        text = self.queue.pop_first()
        if text is not None:
            self._send_taken(text)

    def _send_taken(self, text: str) -> None:
        """Send a prompt taken from the queue; if it cannot go, it returns to the composer or the queue."""
        if self.send(text):
            return
        self.give_back(text)

    def give_back(self, text: str) -> str:
        """A prompt that did not go out returns to the composer when it is empty, else to the queue's front."""
        composer = self.view.composer
        if not composer.text.strip():
            composer.load_text(text)
            return "composer"
        self.queue.put_back(text)
        return "queue"

    def _turn_ended(self, stop_reason: str | None) -> None:
        if not self.queue:
            return
        text = self.queue.next_after_turn(stop_reason)
        if text is None:
            count = len(self.queue)
            self.view.notify(f"{count} queued prompt{'s' if count != 1 else ''} kept; Enter on an empty prompt "
                             "or Ctrl+S sends the next.", timeout=6)
            self._queue_changed()
            return
        self._send_taken(text)
        self._queue_changed()

    def status_changed(self) -> None:
        """Keep the queue's "next" hint current; after the handshake, send what was queued meanwhile."""
        if not self.queue:
            return
        if not self.session.busy and self.session.state.status == READY and self.session.state.turns == 0:
            self._send_queued()
        self._queue_changed()

    # -- queue edits --------------------------------------------------------------------------------

    def edit(self, index: int | None = None) -> None:
        """Load a queued prompt (the last by default) into the composer; a draft there takes its place."""
        if not self.queue:
            self.view.notify("No queued prompt to edit.", timeout=2)
            return
        index = len(self.queue) - 1 if index is None else index
        composer = self.view.composer
        text = self.queue.edit(index, composer.text)
        if text is not None:
            composer.load_text(text)
            composer.move_cursor(composer.document.end)
            composer.focus()

    def remove(self, index: int | None = None) -> None:
        if not self.queue:
            return
        index = len(self.queue) - 1 if index is None else index
        item = self.queue.remove(index)
        if item is not None:
            self.view.notify("Queued prompt removed.", timeout=2)

    def _queue_changed(self) -> None:
        view = self.view
        if view.is_attached:
            view.queue_view.refresh_queue(self._waiting())
            if not self.queue and view.queue_view.has_focus:
                view.composer.focus()

    # -- Esc ----------------------------------------------------------------------------------------

    async def escape(self) -> None:
        """Esc past the composer's menus: cancel a running turn; otherwise touch nothing (never the draft)."""
        session = self.session
        if session.busy:
            if session.state.status_detail == "cancelling":
                self.view.notify("Already cancelling: waiting for the agent to stop.", timeout=3)
            await session.cancel()
            return
        self.view.notify("No turn is running." + (" The draft is kept." if self.view.composer.text.strip() else ""),
                         timeout=2)
