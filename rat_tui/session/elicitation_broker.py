"""Provides ElicitationBroker: answers `elicitation/create` by asking the user, and hears `elicitation/complete`.

Form mode: the UI shows a form built from the requested schema (elicitation_form.py) and the answer
is `accept` with the content, `decline` or `cancel`. URL mode: the UI shows the link and waits;
`elicitation/complete` for its id answers `accept` and closes it, the user may also say they are
done (`accept`), decline, or dismiss it (`cancel`). A cancelled turn answers every open question
`cancel`; an agent's `$/cancel_request` closes the dialog (the router then answers -32800).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported at the first form asked for (or by the warm-up's dialog): not for the first frame
    from .elicitation_form import ElicitationForm
from .permission_broker import ask_in_task
from ..protocol.router import INVALID_PARAMS, RpcError
from ..state import reducer
from ..state.store import SessionStore
from ..protocol.sanitize import clean, clean_data

log = logging.getLogger("rat.elicitation")

CANCEL = {"action": "cancel"}
# Ids completed before their request was seen (the router hands notifications over at once and
# starts requests as tasks, so a quick `elicitation/complete` can overtake its own request).
EARLY_LIMIT = 64


@dataclass
class Elicitation:
    """One request as the UI needs it. `completed` resolves when the agent says a URL flow is done."""

    mode: str  # "form" or "url"
    params: dict[str, Any]
    agent_name: str
    form: ElicitationForm | None = None
    url: str = ""
    elicitation_id: str = ""
    tool_title: str = ""  # the tool call it is for (an MCP server asking during a tool call), if known
    completed: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    @property
    def message(self) -> str:
        return str(self.params.get("message") or "")


# The UI's question: the answer to send ({"action": ...}), or None for "cancel".
AskUser = Callable[[Elicitation], Awaitable[dict[str, Any] | None]]


class ElicitationBroker:
    """One per session. The UI plugs in `ask`; without it every request is answered `cancel`."""

    def __init__(self, store: SessionStore, agent: Callable[[], str]) -> None:
        self.store = store
        self.agent = agent
        self.ask: AskUser | None = None
        self._asking: set[asyncio.Task[Any]] = set()
        self._url_waiting: dict[str, Elicitation] = {}
        self._early: list[str] = []

    @property
    def pending(self) -> int:
        return len(self._asking)

    async def handle(self, params: dict[str, Any]) -> dict[str, Any]:
        mode = params.get("mode")
        shown = clean_data(params)  # every text of the question reaches the screen: sanitised
        if mode == "form":
            from .elicitation_form import parse_form

            question = Elicitation("form", shown, self.agent(), form=parse_form(shown))
        elif mode == "url":
            url, elicitation_id = params.get("url"), params.get("elicitationId")
            if not isinstance(url, str) or not url or not isinstance(elicitation_id, str):
                raise RpcError(INVALID_PARAMS, "a url elicitation needs a url and an elicitationId")
            question = Elicitation("url", shown, self.agent(), url=clean(url), elicitation_id=elicitation_id)
        else:
            # "Clients that do not understand this mode MUST NOT render it as a known mode."
            self._notice(f"The agent asked for input in a way rat-tui cannot show (mode {clean(repr(mode))}); it was refused.",
                         "warning")
            raise RpcError(INVALID_PARAMS, f"unsupported elicitation mode {mode!r}; this client supports form and url")
        call_id = params.get("toolCallId")
        call = self.store.state.tool_calls.get(call_id) if isinstance(call_id, str) else None
        question.tool_title = (call.title or call_id) if call is not None else ""
        if self.ask is None:
            return CANCEL
        answer = await self._ask(question)
        self._report(question, answer)
        return answer

    async def _ask(self, question: Elicitation) -> dict[str, Any]:
        assert self.ask is not None
        if question.mode == "url":
            self._url_waiting[question.elicitation_id] = question
            if question.elicitation_id in self._early:
                self._early.remove(question.elicitation_id)
                question.completed.set_result(None)
        try:
            task = await ask_in_task(self._asking, self.ask(question), question.completed, name="elicitation-question")
        finally:
            self._url_waiting.pop(question.elicitation_id, None)
        if question.completed.done() and not question.completed.cancelled():
            task.cancel()  # the agent says the URL flow is done: close the dialog
            return {"action": "accept"}
        if task.cancelled() or task.exception() is not None:
            if not task.cancelled():
                log.error("elicitation dialog failed", exc_info=task.exception())
            return CANCEL
        answer = task.result()
        if not isinstance(answer, dict) or answer.get("action") not in ("accept", "decline", "cancel"):
            return CANCEL
        if answer["action"] == "accept" and question.mode == "url":
            return {"action": "accept"}  # url mode carries no content
        return answer

    def complete(self, params: dict[str, Any]) -> None:
        """The `elicitation/complete` notification: the URL flow of that id is over."""
        elicitation_id = params.get("elicitationId") if isinstance(params, dict) else None
        if not isinstance(elicitation_id, str):
            log.warning("elicitation/complete without an elicitationId ignored")
            return
        question = self._url_waiting.get(elicitation_id)
        if question is None:
            self._early = [*self._early[-(EARLY_LIMIT - 1):], elicitation_id]
            return
        if not question.completed.done():
            question.completed.set_result(None)

    def cancel_all(self) -> None:
        """The turn was cancelled: every open question is answered `cancel`."""
        for task in list(self._asking):
            task.cancel()

    def _report(self, question: Elicitation, answer: dict[str, Any]) -> None:
        """A line in the transcript, so the history says what the agent asked and how it was answered."""
        what = question.message.strip().splitlines()[0][:80] if question.message.strip() else "a question"
        action = answer.get("action")
        if question.mode == "url":
            words = {"accept": "done", "decline": "declined", "cancel": "cancelled"}.get(str(action), str(action))
            self._notice(f"Link from the agent ({what}): {words}.", "info")
            return
        if action == "accept":
            fields = ", ".join(answer.get("content") or {}) or "no fields"
            self._notice(f"Answered the agent's question ({what}): sent {fields}.", "info")
        else:
            words = "declined" if action == "decline" else "cancelled"
            self._notice(f"The agent's question ({what}) was {words}.", "info")

    def _notice(self, text: str, severity: str) -> None:
        self.store.dispatch(reducer.add_notice, text, severity)
