"""Provides PromptQueueView: the prompts queued behind the running turn, shown above the composer."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...session.prompt_queue import PromptQueue

PREVIEW = 100  # characters of a queued prompt shown on its line


class PromptQueueView(OptionList):
    """Hidden while the queue is empty. Focused (Shift+Tab from the composer, or a click), Enter
    loads the highlighted prompt back into the composer, Delete removes it, Esc goes back."""

    DEFAULT_CSS = """
    PromptQueueView {
        display: none;
        height: auto;
        max-height: 6;
        border: none;
        border-left: thick $secondary;
        padding: 0 1;
        background: $surface;
        &.-queued { display: block; }
        &:focus { background-tint: $foreground 5%; }
        & > .option-list--option-highlighted { text-style: none; }
        &:focus > .option-list--option-highlighted {
            color: $block-cursor-foreground;
            background: $block-cursor-background;
        }
    }
    """

    BINDINGS = [
        Binding("enter,e", "edit", "Edit", id="queue.edit", show=False, tooltip="Load this prompt into the composer"),
        Binding("delete,backspace,x", "remove", "Remove", id="queue.remove", show=False,
                tooltip="Remove this prompt from the queue"),
        Binding("escape", "leave", "Back", id="queue.leave", show=False, tooltip="Back to the composer"),
    ]

    @dataclass
    class Edit(Message):
        index: int

    @dataclass
    class Remove(Message):
        index: int

    @dataclass
    class Leave(Message):
        pass

    def __init__(self, queue: PromptQueue, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.queue = queue

    def refresh_queue(self, busy: bool) -> None:
        """Show the queue's prompts; `busy` says whether they wait for a running turn."""
        highlighted = self.highlighted
        items = self.queue.texts
        self.set_class(bool(items), "-queued")
        options = []
        for number, text in enumerate(items, 1):
            line = " ".join(text.split())
            line = line if len(line) <= PREVIEW else line[: PREVIEW - 1] + "…"
            if number == 1 and self.queue.send_now:
                when = "sends when the cancelled turn ends"
            elif number == 1:
                when = "next" if busy else "Enter on an empty prompt sends it"
            else:
                when = ""
            options.append(Option(Content.assemble(
                (f"⏳ {number}. ", "$text-muted"), line, (f"  {when}" if when else "", "italic $text-muted")
            )))
        self.set_options(options)
        if items:
            self.highlighted = min(highlighted if highlighted is not None else len(items) - 1, len(items) - 1)

    def on_focus(self) -> None:
        if self.option_count:
            self.highlighted = self.option_count - 1  # the one nearest the composer

    def action_edit(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Edit(self.highlighted))

    def action_remove(self) -> None:
        if self.highlighted is not None:
            self.post_message(self.Remove(self.highlighted))

    def action_leave(self) -> None:
        self.post_message(self.Leave())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Edit(event.option_index))
