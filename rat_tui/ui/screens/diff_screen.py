"""Provides DiffScreen: a tool call's diffs, full screen, one file at a time."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from ..widgets.diff_view import DiffView
from ..textual_ext.styled_once import StyledOnce
from ..widgets.keys_footer import KeysFooter


class DiffScreen(StyledOnce, Screen[None]):
    """Opened from a tool card (`d`); the DiffView renders only visible rows, so size does not matter."""

    DEFAULT_CSS = """
    DiffScreen > .title { background: $panel; padding: 0 1; text-style: bold; }
    DiffScreen > DiffView { height: 1fr; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="diff_screen.close"),
        Binding("tab", "next_file", "Next file", id="diff_screen.next_file"),
        Binding("shift+tab", "previous_file", "Previous file", id="diff_screen.previous_file"),
    ]

    def __init__(self, title: str, diffs: list[dict[str, Any]]) -> None:
        super().__init__()
        self.tool_title = title
        self.diffs = diffs
        self.index = 0

    def compose(self) -> ComposeResult:
        yield Static("", classes="title", markup=False)
        first = self.diffs[0]
        yield DiffView(str(first.get("path", "?")), first.get("oldText"), str(first.get("newText") or ""))
        yield KeysFooter()

    def on_mount(self) -> None:
        self._show()
        self.query_one(DiffView).focus()

    def _show(self) -> None:
        item = self.diffs[self.index]
        counter = f"  ({self.index + 1} of {len(self.diffs)})" if len(self.diffs) > 1 else ""
        self.query_one(".title", Static).update(f"{self.tool_title}{counter}")
        self.query_one(DiffView).set_diff(str(item.get("path", "?")), item.get("oldText"), str(item.get("newText") or ""))

    def action_next_file(self) -> None:
        self.index = (self.index + 1) % len(self.diffs)
        self._show()

    def action_previous_file(self) -> None:
        self.index = (self.index - 1) % len(self.diffs)
        self._show()

    def action_close(self) -> None:
        self.dismiss(None)
