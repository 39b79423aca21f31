"""Provides StatusBar: the agent's name, one state word, the cwd, plan progress and usage."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...state.models import SessionState

# Theme colour for each state word.
STATE_COLOURS = {
    "starting": "warning",
    "ready": "success",
    "working": "accent",
    "cancelled": "secondary",
    "error": "error",
    "exited": "error",
}


class StatusBar(Static):
    """One line at the bottom of a session. End-to-end tests read `agent_name` and `state_word`."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    """

    agent_name: str = ""
    state_word: str = ""

    def show(self, state: SessionState) -> None:
        self.agent_name = state.agent_name
        self.state_word = state.status
        style = self.app.theme_variables.get(STATE_COLOURS.get(state.status, ""), "") if self.is_attached else ""
        text = Text()
        text.append(state.agent_name, style="bold")
        text.append("  ● ", style=style or "")
        text.append(state.status, style=f"bold {style}".strip())
        if state.status_detail and state.status in ("working", "error", "exited"):
            detail = state.status_detail.splitlines()[0][:60]
            text.append(f" ({detail})", style="dim")
        if state.pending_permissions:
            count = state.pending_permissions
            warn = self.app.theme_variables.get("warning", "") if self.is_attached else ""
            text.append(f"  │ ⚠ {count} permission request{'s' if count != 1 else ''}", style=f"bold {warn}".strip())
        if state.plan:
            done = sum(1 for item in state.plan if item.status == "completed")
            text.append(f"  │ plan {done}/{len(state.plan)}")
        if state.usage and isinstance(state.usage.get("used"), int):
            used, size = state.usage["used"], state.usage.get("size") or 0
            text.append(f"  │ context {used:,}/{size:,}" if size else f"  │ context {used:,}")
        if state.title:
            text.append(f"  │ {state.title[:40]}")
        text.append(f"  │ {state.cwd}", style="dim")
        self.update(text)
