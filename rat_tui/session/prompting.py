"""Provides Prompting: what happens to a session's prompts — sent, queued behind the running turn, sent next,
sent now (cancelling the turn), or given back — without a screen (the rules of prompt_queue.py applied).

The UI forwards Enter, Ctrl+S and the queue's edits here and shows what `SessionUI` is told: messages
(`tell`), queue changes (`prompts_changed`), and prompts to put back in the composer (`give_back`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from . import attachments, shell_context
from .prompt_queue import PromptQueue
from .ui import SessionUI
from ..state.models import READY, STARTING

if TYPE_CHECKING:
    from .agent_session import AgentSession

log = logging.getLogger("rat.session")


class Prompting:
    """One per session: its queue of prompts and the rules for sending them."""

    def __init__(self, session: AgentSession, ui: SessionUI) -> None:
        self.session = session
        self.ui = ui
        self.queue = PromptQueue(on_change=ui.prompts_changed)
        self._cancels: set[asyncio.Task[Any]] = set()
        session.turn_listeners.append(self.turn_ended)

    def waiting(self) -> bool:
        """A turn runs, or the agent is still starting: a prompt now goes to the queue."""
        session = self.session
        return session.busy or (session.state.status == STARTING and session.session_id is None)

    def _capabilities(self) -> dict[str, Any] | None:
        hello = self.session.hello
        return hello.capabilities if hello else None

    def refusal(self, text: str) -> str | None:
        """Why `text` would be refused, for a prompt being queued: no file is read until it is sent."""
        return attachments.prompt_refusal(text, self.session.cwd, self._capabilities(), self.session.state.agent_name)

    def _refused(self, why: str) -> None:
        log.info("prompt refused: %s", why)
        self.ui.tell(why, "warning", title="Not sent", timeout=10)

    # -- sending ------------------------------------------------------------------------------------

    def submit(self, text: str) -> bool:
        """Enter: send now when idle, queue while a turn runs. True when the text was taken (sent or queued)."""
        text = text.rstrip("\n")
        if self.waiting():
            why = self.refusal(text) if self.session.hello is not None else None
            if why is not None:  # say it now, not when the turn ends
                self._refused(why)
                return False
            self.queue.add(text)
            return True
        return self.send(text)

    def send(self, text: str) -> bool:
        """Start a turn with `text` and its attachments; False (and why, told) when it cannot go."""
        session = self.session
        why = session.can_prompt()
        if why is not None:
            # It lasts while it is true: it goes when the state it tells of changes (SessionUI.tell).
            self.ui.tell(why, "warning", timeout=8, about_state=True)
            return False
        built = attachments.build_prompt(text, session.cwd, self._capabilities(), session.state.agent_name)
        built = shell_context.attach(built, text, session.state, self._capabilities())  # `@!`: shell cards
        if built.refused is not None:
            self._refused(built.refused)
            return False
        for notice in built.notices:
            self.ui.tell(notice, title="Attachment", timeout=6)
        blocks = built.blocks if built.blocks is not None and len(built.blocks) > 1 else None
        return session.start_prompt(text, blocks, built.chips) is not None

    def send_next(self) -> None:
        """Enter on an empty composer: the first queued prompt, if the session is idle."""
        if not self.queue:
            return
        if self.waiting():
            self.ui.tell("The queued prompts go out when the turn ends (Ctrl+S sends now).", about_state=True)
            return
        self._send_queued()

    def send_now(self, text: str) -> bool:
        """Ctrl+S: `text` (else the first queued prompt) now, cancelling a running turn first.

        True when `text` was taken (sent or put first in the queue): the composer may clear it.
        """
        text = text.rstrip("\n")
        if not self.session.busy:
            if text.strip():
                return self.submit(text)
            if self.queue:
                self._send_queued()
            else:
                self.ui.tell("Nothing to send.", timeout=2)
            return False
        taken = False
        if text.strip():
            why = self.refusal(text)
            if why is not None:
                self._refused(why)
                return False
            self.queue.push_front(text)
            taken = True
        elif self.queue:
            self.queue.send_now = True
            self.ui.prompts_changed()
        else:
            self.ui.tell("Nothing to send.", timeout=2)
            return False
        task = asyncio.get_running_loop().create_task(self.session.cancel(), name="send-now-cancel")
        self._cancels.add(task)
        task.add_done_callback(self._cancels.discard)
        return taken

    def _send_queued(self) -> None:
        text = self.queue.pop_first()
        if text is not None:
            self._send_taken(text)

    def _send_taken(self, text: str) -> None:
        """Send a prompt taken from the queue; if it cannot go, it returns to the composer or the queue."""
        if not self.send(text):
            self.give_back(text)

    def give_back(self, text: str) -> str:
        """A prompt that did not go out returns to the composer when it is empty, else to the queue's front."""
        if self.ui.give_back(text):
            return "composer"
        self.queue.put_back(text)
        return "queue"

    def turn_ended(self, stop_reason: str | None) -> None:
        """A turn ended: the next queued prompt goes out after a normal end (prompt_queue.AUTO_SEND_AFTER)."""
        if not self.queue:
            return
        text = self.queue.next_after_turn(stop_reason)
        if text is None:
            count = len(self.queue)
            self.ui.tell(f"{count} queued prompt{'s' if count != 1 else ''} kept; Enter on an empty prompt "
                         "or Ctrl+S sends the next.", timeout=6)
            self.ui.prompts_changed()
            return
        self._send_taken(text)
        self.ui.prompts_changed()

    def status_changed(self) -> None:
        """After the handshake, send what was queued meanwhile; keep the queue's "next" hint current."""
        if not self.queue:
            return
        session = self.session
        if not session.busy and session.state.status == READY and session.state.turns == 0:
            self._send_queued()
        self.ui.prompts_changed()

    # -- queue edits --------------------------------------------------------------------------------

    def edit(self, index: int, draft: str) -> str | None:
        """Take queued prompt `index` out to edit it; `draft` (the composer's text, if any) takes its place."""
        return self.queue.edit(index, draft)

    def remove(self, index: int) -> bool:
        return self.queue.remove(index) is not None
