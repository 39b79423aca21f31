"""Provides ElicitationQueue: the agents' questions (forms and links) shown one at a time, first asked first shown."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import App

from ...session.elicitation_broker import Elicitation
from ..screens.modal_answer import modal_answer
from ..screens.elicitation import ElicitationScreen, UrlElicitationScreen


class ElicitationQueue:
    """Every session's elicitations share one queue, like permission requests (ui/permission_queue.py)."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._turn = asyncio.Lock()  # FIFO: asyncio locks wake waiters in order

    async def ask(self, question: Elicitation) -> dict[str, Any] | None:
        async with self._turn:
            screen = ElicitationScreen(question) if question.mode == "form" else UrlElicitationScreen(question)
            # A cancelled turn, a withdrawn request or a completed link cancels the await: it closes.
            return await modal_answer(self.app, screen)
