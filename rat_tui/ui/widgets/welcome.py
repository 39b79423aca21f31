"""Provides Welcome: what an empty session shows above its prompt, instead of blank rows.

It says which agent this is, what to do first and where the keys are; for the built-in demo agent, the
words its prompts understand (a demo is tried by someone who does not know them yet). It leaves at the
session's first entry and does not come back.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


def demo_words() -> list[tuple[str, str]]:
    """The demo's scenario words with what each does (from the demo itself, so the two never disagree)."""
    from ...demo.scenarios import HELP, ORDER  # imported only for the demo agent

    return [(word, HELP[word]) for word in (*ORDER, "all") if word in HELP]


STATES = {
    "ready": " is ready. Type a message below and press Enter to send it.\n",
    "error": (" could not start: the reason is in the status bar below. Alt+R tries again, Ctrl+N picks "
              "another agent.\n"),
    "exited": " has exited. Alt+R starts it again, Ctrl+N picks another agent.\n",
}


def welcome_text(agent: str, is_demo: bool, status: str = "starting") -> Text:
    text = Text()
    text.append(f"{agent}", style="bold")
    text.append(STATES.get(status, " is starting in this tab. Type a message below, Enter sends it.\n"))
    text.append("F1", style="bold")
    text.append(" lists the keys where the focus is · ")
    text.append("Ctrl+P", style="bold")
    text.append(" every command · ")
    text.append("Ctrl+N", style="bold")
    text.append(" a new tab or another agent · ")
    text.append("Ctrl+R", style="bold")
    text.append(" sessions from before\n")
    if is_demo:
        text.append("\nThis is rat-tui's demo agent: it plays scripted turns, no model behind it. "
                    "Put one of these words in a prompt:\n", style="dim")
        for word, what in demo_words():
            text.append(f"  {word:8}", style="bold")
            text.append(f" {what.replace('`', '')}\n", style="dim")
        text.append("  any other prompt: a short answer with a plan, a file read and some markdown", style="dim")
    return text


class Welcome(Static):
    """The empty session's first words (see the module docstring)."""

    DEFAULT_CSS = """
    Welcome {
        height: auto;
        padding: 1 2;
        color: $text;
    }
    """

    def __init__(self, agent: str, is_demo: bool) -> None:
        super().__init__(welcome_text(agent, is_demo))
        self._said = (agent, is_demo)

    def status(self, status: str, agent: str | None = None) -> None:
        """The session's state now, and the agent's own name once `initialize` gave it."""
        if agent and agent != "agent":
            self._said = (agent, self._said[1])
        self.update(welcome_text(*self._said, status))
