"""`DismissOnce` and `modal_answer` (rat_tui/ui/screens/modal_answer.py) on the Textual version pinned in
pyproject.toml.

Textual has no public way to take a screen out of the middle of the stack, so `DismissOnce` uses four
internals (pinned in tests/textual_ext/test_internals.py). These tests fail when Textual's own `dismiss` stops
popping whatever is on top (then the mixin can go).
"""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from rat_tui.ui.screens.modal_answer import modal_answer
from rat_tui.ui.textual_ext.dismiss_once import DismissOnce


class Question(DismissOnce, ModalScreen[str]):
    def compose(self) -> ComposeResult:
        yield Static("a question")


class PlainQuestion(ModalScreen[str]):
    def compose(self) -> ComposeResult:
        yield Static("a plain question")


class Above(Screen[None]):
    """What may be open above a question (the command palette, another dialog)."""

    def compose(self) -> ComposeResult:
        yield Static("above")


class Host(App):
    def compose(self) -> ComposeResult:
        yield Static("main")


async def test_textual_dismiss_pops_whatever_is_on_top() -> None:
    """Why DismissOnce exists: dismissing a screen that is not on top pops the one that is."""
    app = Host()
    async with app.run_test() as pilot:
        answers: list[str | None] = []
        question, above = PlainQuestion(), Above()
        app.push_screen(question, answers.append)
        app.push_screen(above)
        await pilot.pause()
        await question.dismiss("late")
        await pilot.pause()
        assert answers == ["late"]
        assert app.screen is question and above not in app.screen_stack


async def test_a_question_below_another_screen_is_dismissed_alone_and_once() -> None:
    app = Host()
    async with app.run_test() as pilot:
        answers: list[str | None] = []
        question, above = Question(), Above()
        app.push_screen(question, answers.append)
        app.push_screen(above)
        await pilot.pause()
        await question.dismiss("withdrawn")
        await pilot.pause()
        assert answers == ["withdrawn"]
        assert app.screen is above and question not in app.screen_stack
        await question.dismiss("again")  # a late second dismissal: nothing
        await pilot.pause()
        assert answers == ["withdrawn"] and app.screen is above and len(app.screen_stack) == 2


async def test_a_question_on_top_is_dismissed_once() -> None:
    app = Host()
    async with app.run_test() as pilot:
        answers: list[str | None] = []
        question = Question()
        app.push_screen(question, answers.append)
        await pilot.pause()
        question.dismiss("yes")
        question.dismiss("no")  # the user's key racing the agent's withdrawal
        await pilot.pause()
        assert answers == ["yes"] and len(app.screen_stack) == 1


async def test_modal_answer_closes_the_dialog_when_its_waiter_is_cancelled() -> None:
    app = Host()
    async with app.run_test() as pilot:
        question, above = Question(), Above()
        waiter = asyncio.create_task(modal_answer(app, question))
        await pilot.pause()
        app.push_screen(above)
        await pilot.pause()
        waiter.cancel()
        await pilot.pause()
        assert waiter.cancelled()
        assert question not in app.screen_stack and app.screen is above
