"""Provides `modal_answer`: push a modal screen and await what it dismisses with; and DismissOnce for such screens."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from textual.app import App
from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen, Screen

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


class DismissOnce:
    """Mixin (before ModalScreen): dismiss once only, and only this screen, even from outside (turn
    cancelled, request withdrawn: `modal_answer` dismisses a screen that may no longer be on top).

    Textual's `dismiss` pops whatever screen is on top and would run the callback twice; an answer
    from the agent can race the user's key, and a palette may be open above us. Textual has no public
    way to take a screen out of the middle of the stack: the internals used here are pinned by
    tests/test_modal_answer.py, which fails when a Textual upgrade changes them.
    """

    _done = False

    def dismiss(self, result: Any = None) -> AwaitComplete:  # type: ignore[override]
        screen: ModalScreen[Any] = self  # type: ignore[assignment]
        if self._done:
            return AwaitComplete.nothing()
        stack = next((s for s in screen.app._screen_stacks.values() if screen in s), None)
        if stack is None:
            return AwaitComplete.nothing()
        self._done = True
        if stack[-1] is screen:
            return ModalScreen.dismiss(screen, result)
        if screen._result_callbacks:
            screen._result_callbacks[-1](result)
        stack.remove(screen)
        screen._pop_result_callback()
        return AwaitComplete(screen.app._replace_screen(screen)).call_next(screen.app)
