"""Provides AskUserScreen: the agent's `ask_user` question (rat-tui's own MCP tool), answered from the keyboard."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static

from .dialog import AgentDialog


class AskUserScreen(AgentDialog[str | None]):
    """Up/Down and Enter pick a suggested answer; or type one and press Enter; Esc dismisses (None)."""

    DEFAULT_CSS = """
    AskUserScreen > #dialog { width: 80%; max-width: 100; max-height: 90%; }
    AskUserScreen #header { color: $accent; }
    AskUserScreen #question { margin: 1 0; }
    AskUserScreen #choices { height: auto; max-height: 12; }
    """

    BINDINGS = [Binding("escape", "dismiss_question", "Dismiss", id="ask_user.dismiss")]

    def __init__(self, question: str, choices: list[str], agent_name: str = "The agent") -> None:
        super().__init__()
        self.question = question
        self.choices = choices
        self.agent_name = agent_name

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(f"{self.agent_name} asks"), id="header")
            yield Static(Text(self.question), id="question")
            if self.choices:
                yield OptionList(*[Text(choice) for choice in self.choices], id="choices")
            yield Input(placeholder="Type an answer and press Enter" if not self.choices else "…or type another answer",
                        id="answer")
            hint = "↑↓ Enter pick · Tab type an answer · Esc dismiss" if self.choices else "Enter answer · Esc dismiss"
            yield Static(hint, id="hint")

    def on_mount(self) -> None:
        (self.query_one(OptionList) if self.choices else self.query_one(Input)).focus()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[event.option_index])

    @on(Input.Submitted)
    def _typed(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value)
        else:
            self.notify("Type an answer, or press Esc to dismiss the question.", severity="warning", timeout=3)

    def action_dismiss_question(self) -> None:
        self.dismiss(None)
