"""Provides PermissionQueue: permission dialogs shown one at a time, first asked first shown."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.app import App

from ..screens.modal_answer import modal_answer
from ..screens.permission import PermissionScreen


class PermissionQueue:
    """Every session's requests share one queue: a dialog never hides another's answer.

    `on_change(count)` hears how many requests are waiting or shown, for the status bar.
    """

    def __init__(self, app: App[Any], on_change: Callable[[int], None] | None = None) -> None:
        self.app = app
        self.on_change = on_change
        self._turn = asyncio.Lock()  # FIFO: asyncio locks wake waiters in order
        self.waiting = 0

    async def ask(self, request: dict[str, Any], tool_call: dict[str, Any], *, agent_name: str) -> dict[str, Any] | None:
        self._changed(+1)
        try:
            async with self._turn:
                screen = PermissionScreen(request, agent_name=agent_name, tool_call=tool_call, queue_position=(1, self.waiting))
                # A cancelled turn or a withdrawn request cancels the await: the dialog closes.
                return await modal_answer(self.app, screen)
        finally:
            self._changed(-1)

    def _changed(self, delta: int) -> None:
        self.waiting += delta
        if self.on_change:
            self.on_change(self.waiting)
