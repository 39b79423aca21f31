"""Provides `modal_answer`: push a modal screen and await what it dismisses with (DismissOnce, for such screens,
is in rat_tui/ui/textual_ext/dismiss_once.py)."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from textual.app import App
from textual.screen import Screen

T = TypeVar("T")


async def modal_answer(app: App[Any], screen: Screen[T]) -> T | None:
    """The screen's result; when the waiting task is cancelled (a cancelled turn, a request the
    agent withdrew), the screen is closed too, so no dialog outlives its question.

    Unlike `App.push_screen_wait` it needs no worker: the agent's requests are served as plain tasks.
    """
    future: asyncio.Future[T | None] = asyncio.get_running_loop().create_future()

    def answered(result: T | None) -> None:
        if not future.done():
            future.set_result(result)

    app.push_screen(screen, callback=answered)
    try:
        return await future
    finally:
        if future.cancelled() or not future.done():
            screen.dismiss(None)
