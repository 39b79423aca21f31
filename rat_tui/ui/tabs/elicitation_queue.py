"""Provides ElicitationQueue: the agents' questions (forms and links) shown one at a time, first asked
first shown, through the app's RequestGate like permission requests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .request_gate import RequestGate

if TYPE_CHECKING:
    from ...session.elicitation_broker import Elicitation
    from .view import SessionView


class ElicitationQueue:
    def __init__(self, gate: RequestGate) -> None:
        self.gate = gate

    async def ask(self, view: SessionView, question: Elicitation) -> dict[str, Any] | None:
        # A cancelled turn, a withdrawn request or a completed link cancels the await: it closes.
        from ..screens.elicitation import ElicitationScreen, UrlElicitationScreen  # after the first frame

        if question.mode == "form":
            return await self.gate.ask(view, "form", lambda: ElicitationScreen(question))
        return await self.gate.ask(view, "link", lambda: UrlElicitationScreen(question))
