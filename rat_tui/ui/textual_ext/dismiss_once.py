"""Provides DismissOnce: a modal screen dismissed once only, and only that screen, even when it is not on top.

Textual internals (8.2.8): `App._screen_stacks`, `Screen._result_callbacks`, `Screen._pop_result_callback` and
`App._replace_screen`: Textual has no public way to take a screen out of the middle of the stack.
"""

from __future__ import annotations

from typing import Any

from textual.await_complete import AwaitComplete
from textual.screen import ModalScreen


class DismissOnce:
    """Mixin (before ModalScreen): dismiss once only, and only this screen, even from outside (turn
    cancelled, request withdrawn: `modal_answer` dismisses a screen that may no longer be on top).

    Textual's `dismiss` pops whatever screen is on top and would run the callback twice; an answer
    from the agent can race the user's key, and a palette may be open above us. The internals used here are
    checked by tests/textual_ext/test_internals.py, which fails when a Textual upgrade changes them.
    """

    dismissed = False  # whether the screen has produced its result (by the user or from outside)

    def dismiss(self, result: Any = None) -> AwaitComplete:  # type: ignore[override]
        screen: ModalScreen[Any] = self  # type: ignore[assignment]
        if self.dismissed:
            return AwaitComplete.nothing()
        stack = next((s for s in screen.app._screen_stacks.values() if screen in s), None)
        if stack is None:
            return AwaitComplete.nothing()
        self.dismissed = True
        if stack[-1] is screen:
            return ModalScreen.dismiss(screen, result)
        if screen._result_callbacks:
            screen._result_callbacks[-1](result)
        stack.remove(screen)
        screen._pop_result_callback()
        return AwaitComplete(screen.app._replace_screen(screen)).call_next(screen.app)
