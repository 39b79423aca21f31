"""Provides AuthScreen: the agent's login methods (name, type, description), picked from the keyboard.

Only `agent` methods (rat sends `authenticate`) and `terminal` methods (rat runs the agent's own
command with the method's args and env, then restarts it) are automated. `env_var` methods (an
older unstable variant) say which variables to set; unknown types are shown as they are.
"""

from __future__ import annotations

import shlex
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from ...session.login import auth_method_type, terminal_method_parts
from .dialog import AgentDialog

AUTOMATED = ("agent", "terminal")
TYPE_LABELS = {"agent": "by the agent", "terminal": "in a terminal", "env_var": "environment variable"}


def method_detail(method: dict[str, Any], agent_argv: list[str]) -> str:
    """What choosing this method does, in a sentence or two."""
    kind = auth_method_type(method)
    if kind == "agent":
        return "Enter: rat asks the agent to log you in (it may open a browser)."
    if kind == "terminal":
        args, env = terminal_method_parts(method)  # what terminal_auth_command will run
        line = " ".join(shlex.quote(part) for part in [*agent_argv, *args])
        if env:
            line = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + line
        return f"Enter: rat steps aside and runs `{line}` in this terminal, then restarts the agent."
    if kind == "env_var":
        names = [v.get("name") for v in method.get("vars") or [] if isinstance(v, dict) and v.get("name")]
        text = ("Not automated: set " + ", ".join(names) if names else "Not automated: set the variables it needs")
        text += " in the agent's environment (your shell, or `env` of its profile in config.toml), then Alt+R."
        if isinstance(method.get("link"), str):
            text += f" Credentials: {method['link']}"
        return text
    return f"Not automated: rat does not know login methods of type {kind!r}; see the agent's documentation."


class AuthScreen(AgentDialog[dict[str, Any] | None]):
    """Dismisses with the chosen (automatable) method, or None."""

    DEFAULT_CSS = """
    AuthScreen > Vertical {
        width: 80%; max-width: 100; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    AuthScreen .title { text-style: bold; }
    AuthScreen .reason { color: $text-muted; margin-bottom: 1; }
    AuthScreen OptionList { height: auto; max-height: 16; margin-bottom: 1; }
    AuthScreen .detail { height: auto; margin-bottom: 1; }
    AuthScreen .keys { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Close", id="auth.close", show=False)]

    def __init__(self, agent_name: str, methods: list[dict[str, Any]], agent_argv: list[str] | None = None,
                 reason: str = "") -> None:
        super().__init__()
        self.agent_name = agent_name
        self.methods = [m for m in methods if isinstance(m, dict)]
        self.agent_argv = list(agent_argv or [])
        self.reason = reason

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Log in to {self.agent_name}", classes="title", markup=False)
            yield Static(self.reason or "Choose how to log in.", classes="reason", markup=False)
            yield OptionList(*(Option(self._prompt(m), id=str(i)) for i, m in enumerate(self.methods)))
            yield Static("", classes="detail", markup=False)
            yield Static("↑↓ choose · Enter logs in · Esc closes", classes="keys")

    def _prompt(self, method: dict[str, Any]) -> Text:
        kind = auth_method_type(method)
        text = Text(str(method.get("name") or method.get("id") or "?"), style="bold")
        label = TYPE_LABELS.get(kind, f"unknown type: {kind}")
        text.append(f"  ({label})", style="dim" if kind in AUTOMATED else "italic dim")
        description = method.get("description")
        if isinstance(description, str) and description.strip():
            text.append("\n  " + " ".join(description.split()))
        return text

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.methods:
            options.highlighted = 0
            self._show_detail(0)
        else:
            self.query_one(".detail", Static).update("The agent offers no login method.")
        options.focus()

    def _show_detail(self, index: int | None) -> None:
        if index is not None and 0 <= index < len(self.methods):
            self.query_one(".detail", Static).update(method_detail(self.methods[index], self.agent_argv))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_detail(event.option_index)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        method = self.methods[event.option_index]
        if auth_method_type(method) in AUTOMATED:
            self.dismiss(method)
        else:
            self.notify("rat cannot do this login for you: see the text under the list.", severity="warning")

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
