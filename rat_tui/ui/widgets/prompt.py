"""Provides PromptComposer: a multi-line prompt editor where Enter sends and Shift+Enter/Ctrl+J break lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from .command_menu import CommandMenu

NEWLINE_KEYS = ("shift+enter", "ctrl+j")


class PromptComposer(TextArea):
    """The composer keeps its text until the prompt is really sent, so nothing typed is lost.

    `/` at the start opens a CommandMenu of the agent's commands (`set_commands`). While it is open,
    up/down move, Tab or Enter complete to `/name `, and Escape closes it (and goes no further, so
    it does not cancel the turn). The prompt itself is sent as plain text: `/name args` is how ACP
    agents receive commands.
    """

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
        self.commands: list[dict[str, Any]] = []
        self.menu = CommandMenu()
        # Escape closed the menu: keep it closed until the text changes again.
        self._menu_dismissed = False

    def on_mount(self) -> None:
        # On the screen, not in our parent's layout: it overlays whatever is above the composer.
        self.screen.mount(self.menu)

    def on_unmount(self) -> None:
        if self.menu.is_attached:
            self.menu.remove()

    # -- slash commands ---------------------------------------------------------------------------

    def set_commands(self, commands: list[dict[str, Any]]) -> None:
        """The session's `available_commands_update` list (AvailableCommand dicts)."""
        self.commands = [c for c in commands if isinstance(c, dict) and c.get("name")]
        self._refresh_menu()

    def command_query(self) -> str | None:
        """What follows a leading `/` up to the cursor, while a command name is being typed; else None."""
        row, column = self.cursor_location
        if row != 0 or self.selection.start != self.selection.end:
            return None
        before = self.document.get_line(0)[:column]
        if not before.startswith("/") or any(ch.isspace() for ch in before):
            return None
        return before[1:]

    def insert_command(self, name: str) -> None:
        """Put `/name ` at the start, replacing a `/command` already there (arguments typed stay)."""
        line = self.document.get_line(0)
        end = 0
        if line.startswith("/"):
            end = next((i for i, ch in enumerate(line) if ch.isspace()), len(line))
        has_space = line[end:end + 1].isspace() if end < len(line) else False
        text = f"/{name}" if has_space else f"/{name} "
        self.replace(text, (0, 0), (0, end), maintain_selection_offset=False)
        self.move_cursor((0, len(name) + 2))
        self.menu.close()
        self.focus()

    def _refresh_menu(self) -> None:
        query = self.command_query()
        if query is None or not self.commands or self._menu_dismissed or not self.has_focus:
            self.menu.close()
            return
        self.menu.show_matches(self.commands, query, self.region)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._menu_dismissed = False
        self._refresh_menu()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._refresh_menu()

    def on_blur(self) -> None:
        self.menu.close()

    def on_resize(self) -> None:
        if self.menu.is_open:
            self._refresh_menu()

    # -- keys -------------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        if self.menu.is_open and event.key in ("up", "down", "tab", "enter", "escape"):
            event.prevent_default()
            event.stop()
            if event.key in ("up", "down"):
                self.menu.move(-1 if event.key == "up" else 1)
            elif event.key == "escape":
                self._menu_dismissed = True
                self.menu.close()
            elif (name := self.menu.selected_name) is not None:
                self.insert_command(name)
            return
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
