"""Provides PromptComposer: a multi-line prompt editor where Enter sends and Shift+Enter/Ctrl+J break lines."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import TextArea

NEWLINE_KEYS = ("shift+enter", "ctrl+j")


class PromptComposer(TextArea):
    """The composer keeps its text until the prompt is really sent, so nothing typed is lost."""

    DEFAULT_CSS = """
    PromptComposer {
        height: auto;
        min-height: 3;
        max-height: 12;
        border: tall $border-blurred;
        padding: 0 1;
    }
    PromptComposer:focus {
        border: tall $border;
    }
    """

    @dataclass
    class Submitted(Message):
        composer: "PromptComposer"
        text: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.placeholder = "Message the agent · Enter sends · Shift+Enter or Ctrl+J for a new line · Esc cancels a turn"

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            text = self.text
            if text.strip():
                self.post_message(self.Submitted(self, text))
            return
        if event.key in NEWLINE_KEYS:
            event.prevent_default()
            event.stop()
            self.insert("\n")
            return
        await super()._on_key(event)
