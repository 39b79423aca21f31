"""Provides ConfirmScreen: a yes/no question, answered from the keyboard."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, Static

from .dialog import AgentDialog, Dialog


class ConfirmScreen(Dialog[bool]):
    """Dismisses with True on `y`/Enter and False on `n`/Escape."""

    DEFAULT_CSS = """
    ConfirmScreen > #dialog { width: 80%; max-width: 100; border: thick $warning; padding: 1 2; }
    ConfirmScreen .question { margin-bottom: 1; }
    """
    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, question: str) -> None:
        super().__init__()
        self.title_text = title
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, markup=False)
            yield Static(self.question, classes="question", markup=False)
            yield Static("y / Enter: yes    n / Esc: no", classes="keys")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class AgentConfirmScreen(AgentDialog[bool], ConfirmScreen):
    """A yes/no question the agent's action raised (a file outside the project): it goes through the
    request gate and takes no key typed before it appeared (screens/dialog.py)."""
