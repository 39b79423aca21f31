"""Provides ElicitationQueue: the agents' questions (forms and links) shown one at a time, first asked first shown."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import App

from ..elicitation_broker import Elicitation
from .screens.elicitation import ElicitationScreen, UrlElicitationScreen


class ElicitationQueue:
    """Every session's elicitations share one queue, like permission requests (ui/permission_queue.py)."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self._turn = asyncio.Lock()  # FIFO: asyncio locks wake waiters in order

    async def ask(self, question: Elicitation) -> dict[str, Any] | None:
        async with self._turn:
            future: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
            screen = ElicitationScreen(question) if question.mode == "form" else UrlElicitationScreen(question)

            def answered(result: dict[str, Any] | None) -> None:
                if not future.done():
                    future.set_result(result)

            self.app.push_screen(screen, callback=answered)
            try:
                return await future
            finally:
                # Cancelled turn, withdrawn request or a completed link (the await was cancelled): close it.
                if future.cancelled() or not future.done():
                    screen.dismiss(None)
