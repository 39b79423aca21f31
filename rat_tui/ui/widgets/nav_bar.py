"""Provides NavBar: the one-row marker of the transcript's navigation mode (rat_tui/ui/tabs/focus_keys.py)."""

from __future__ import annotations

from textual.widgets import Static

NAV_TEXT = ("◆ navigating the transcript · n p blocks · [ ] prompts · t x expand · d diff · v output · y copy · "
            "s subagent · o open · i image · m menu · Esc or ^t back to the prompt · other letters type there")


class NavBar(Static):
    """Shown while the transcript's letters run its block actions: the way in was a key, this is the way out."""

    DEFAULT_CSS = """
    NavBar {
        height: 1;
        background: $accent 30%;
        color: $text;
        text-style: bold;
        padding: 0 1;
        text-overflow: ellipsis;
        text-wrap: nowrap;
    }
    """

    def __init__(self) -> None:
        super().__init__(NAV_TEXT, markup=False)
