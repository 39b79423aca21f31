"""Provides PromptComposer: a multi-line prompt editor where Enter sends and Shift+Enter/Ctrl+J break lines."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import events
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea

from ...session import attachments
from ..textual_ext.keys import bindings_of
from ..textual_ext.widgets import PasteFirst
from .command_menu import CommandMenu
from .file_menu import FileMenu
from .prompt_history import PromptHistory
from .prompt_queue import PromptQueueView
from . import shell_keys

log = logging.getLogger("rat.ui")

NEWLINE_KEYS = ("shift+enter", "ctrl+j")


class PromptComposer(PasteFirst, TextArea):
    """The composer keeps its text until the prompt is really sent, so nothing typed is lost.

    `/` at the start opens a CommandMenu of the agent's commands (`set_commands`). While it is open,
    up/down move, Tab or Enter complete to `/name `, and Escape closes it (and goes no further, so
    it does not cancel the turn). The prompt itself is sent as plain text: `/name args` is how ACP
    agents receive commands.

    `@` opens a FileMenu of the files under `cwd` (git's view: ignored files left out); choosing one
    writes `@path`. Images and audio are offered only when `capabilities()` says the agent accepts
    them; otherwise the choice is refused with the reason. A pasted path to an image becomes an
    `@path` the same way. Enter on an empty composer posts SendNext (the queue's next prompt).
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

    @dataclass
    class DraftChanged(Message):
        """The composer's text changed, whoever changed it (the app journals it as the session's draft).

        Textual stops a message's bubbling at the widget whose handler posted it: `TextArea.Changed` of a
        clear done by the view (a prompt sent) never reached the app, so the last sent prompt stayed the
        journal's draft. This one is posted by the composer itself, so it bubbles all the way up.
        """

        composer: "PromptComposer"
        text: str

    @dataclass
    class SendNext(Message):
        """Enter on an empty composer."""

        composer: "PromptComposer"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")
        self.placeholder = "Message the agent · Enter sends · Shift+Enter or Ctrl+J for a new line · Esc cancels a turn"
        self.commands: list[dict[str, Any]] = []
        self.menu = CommandMenu()
        self.file_menu = FileMenu()
        # Escape closed the menu: keep it closed until the text changes again.
        self._menu_dismissed = False
        # Where `@` looks for files, and what the agent accepts (its agentCapabilities); set by the view.
        self.cwd: Path | None = None
        self.capabilities: Callable[[], dict[str, Any] | None] = lambda: None
        self.agent_name: Callable[[], str] = lambda: "The agent"
        self._files: list[str] | None = None
        self._files_at = 0.0
        # ↑/↓ in an empty composer walk the prompts sent in this project (set by the view).
        self.prompt_history: PromptHistory | None = None
        self._history_index: int | None = None
        self._history_shown = ""

    def render_lines(self, crop: Region) -> list[Strip]:
        """Blank once removed: as its tab closes, Textual detaches the composer and clears its component
        styles before the next layout drops it from the screen's map, and a frame drawn in between failed
        looking up `text-area--gutter` (KeyError, the app closed; seen once in a clean-clone CI run)."""
        if not self.is_attached:
            return [Strip.blank(crop.width)] * crop.height
        return super().render_lines(crop)

    def _mount_menus(self) -> None:
        """On the screen, not in our parent's layout: they overlay whatever is above the composer. Mounted
        when first opened, not with the composer: hidden, they only cost the first frame their styling."""
        if not self.menu.is_attached:
            self.screen.mount(self.menu, self.file_menu)

    def on_unmount(self) -> None:
        for menu in (self.menu, self.file_menu):
            if menu.is_attached:
                menu.remove()

    @property
    def menu_open(self) -> bool:
        return self.menu.is_open or self.file_menu.is_open

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
        else:
            self._mount_menus()
            self.menu.show_matches(self.commands, query, self._menu_anchor())
        self._refresh_file_menu()

    # -- @ attachments ----------------------------------------------------------------------------

    def file_query(self) -> tuple[str, int] | None:
        """(what follows `@`, the `@`'s column) while a file name is typed after an `@`; else None."""
        if self.selection.start != self.selection.end:
            return None
        row, column = self.cursor_location
        before = self.document.get_line(row)[:column]
        at = before.rfind("@")
        if at < 0 or (at > 0 and not before[at - 1].isspace()):
            return None
        query = before[at + 1:]
        if any(ch.isspace() for ch in query) or query.startswith(('"', "!")):  # `@!`: a shell card, not a file
            return None
        return query, at

    def _refresh_file_menu(self) -> None:
        found = self.file_query() if self.cwd is not None and not self.menu.is_open else None
        if found is None or self._menu_dismissed or not self.has_focus:
            self.file_menu.close()
            return
        if self._files is None or not self.file_menu.is_open and time.monotonic() - self._files_at > 5:
            self._files = attachments.list_files(self.cwd)  # fresh when the picker opens (at most every 5 s)
            self._files_at = time.monotonic()
        self._mount_menus()
        self.file_menu.show_files(self._files, found[0], self._menu_anchor(), self._kind_of)

    def _kind_of(self, rel: str) -> str | None:
        return attachments.media_kind(Path(rel))

    def _media_refusal(self, path: Path) -> str | None:
        """Why this image or audio file cannot go to the agent, or None when it can (or is no media)."""
        kind = attachments.media_kind(path)
        capabilities = self.capabilities()
        if kind is None or capabilities is None or attachments.accepts(capabilities, kind):
            return None  # no answer from the agent yet: checked again when the prompt is sent
        assert self.cwd is not None
        return attachments.refusal(kind, self.agent_name(), attachments.display_path(path, self.cwd))

    def insert_file(self, rel: str) -> bool:
        """Replace the `@query` at the cursor with `@rel ` (an attachment); False, and why, if refused."""
        found = self.file_query()
        self.file_menu.close()
        if found is None or self.cwd is None:
            return False
        why = self._media_refusal(self.cwd / rel)
        if why is not None:
            log.info("attachment refused: %s", why)
            self.notify(why, title="Not attached", severity="warning", timeout=8)
            self._menu_dismissed = True
            return False
        row, column = self.cursor_location
        self.replace(attachments.mention_text(rel) + " ", (row, found[1]), (row, column), maintain_selection_offset=False)
        self.focus()
        return True

    async def take_paste(self, event: events.Paste) -> bool:
        """A pasted path of an image or other media is attached (`@path`), not typed (PasteFirst)."""
        path = attachments.pasted_path(event.text, self.cwd) if self.cwd is not None else None
        if path is None or attachments.media_kind(path) is None:
            return False
        event.prevent_default()
        event.stop()
        assert self.cwd is not None
        why = self._media_refusal(path)
        if why is not None:  # keep what was pasted, as plain text: it will not be attached
            log.info("pasted attachment refused: %s", why)
            self.notify(why, title="Not attached", severity="warning", timeout=8)
            self.insert(event.text)
            return True
        self.insert(attachments.mention_text(attachments.display_path(path, self.cwd)) + " ")
        return True

    def _menu_anchor(self) -> Region:
        """The composer's region, grown over the queued prompts above it so that a menu hides none."""
        region = self.region
        if self.parent is not None:
            for sibling in self.parent.children:
                if isinstance(sibling, PromptQueueView) and sibling.display:
                    region = region.union(sibling.region)
        return region

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._menu_dismissed = False
        self._refresh_menu()
        if not self.text:
            self.border_title = None  # a restored draft sent or emptied: no longer one
        self.post_message(self.DraftChanged(self, self.text))

    def restore_draft(self, text: str) -> None:
        """A draft journaled by an earlier run: shown marked, the cursor at its end (typing goes on from there)."""
        self.text = text
        self.move_cursor(self.document.end)
        self.border_title = "draft restored"

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._refresh_menu()

    def on_blur(self) -> None:
        self.menu.close()
        self.file_menu.close()

    def on_resize(self) -> None:
        if self.menu_open:
            self._refresh_menu()

    # -- keys -------------------------------------------------------------------------------------

    # -- prompt history ---------------------------------------------------------------------------

    def _walk_history(self, key: str) -> bool:
        """↑ on an empty composer shows the last prompt sent; ↑/↓ go on while it is unchanged; ↓ past
        the newest empties the composer again. False: the key is the cursor's."""
        items = self.prompt_history.items if self.prompt_history is not None else []
        browsing = self._history_index is not None and self.text == self._history_shown
        if not browsing:
            self._history_index = None
            if key != "up" or self.text or not items:
                return False
            index = len(items)
        else:
            assert self._history_index is not None
            index = self._history_index
        index += -1 if key == "up" else 1
        if index < 0:
            self.app.bell()
            return True
        if index >= len(items):
            self._history_index = None
            self.text = ""
            return True
        self._history_index, self._history_shown = index, items[index]
        self.text = items[index]
        self.move_cursor(self.document.end)
        return True

    def take(self, text: str) -> None:
        """`text` (what Enter submitted) was sent or queued: remove it, keeping what was typed after it.

        Enter posts `Submitted` to the view, but the keys typed next go straight to this widget and can
        be handled first: clearing the whole composer then lost them (typing on right after Enter).
        """
        rest = self.text[len(text):] if self.text.startswith(text) else ""
        self.clear()
        if rest:
            self.insert(rest)

    def remember(self, text: str) -> None:
        """A prompt sent (or queued): the newest of the history."""
        self._history_index = None
        if self.prompt_history is not None:
            self.prompt_history.add(text)

    # Keys handled in _on_key, not by bindings: the help screen (F1) lists them first.
    HELP_KEYS = [
        ("enter", "Send the prompt; while a turn runs, queue it; on an empty prompt, send the next queued one"),
        ("shift+enter, ^j", "New line"),
        ("/", "At the start: the agent's slash commands"),
        ("@", "Attach a file (pick it from the project)"),
        ("?", "On an empty prompt: these keys"),
        ("↑ / ↓", "On an empty prompt: the prompts sent before in this project"),
        ("!", "At the start: run the rest in this tab's own shell (Esc interrupts it)"),
        ("tab after !", "Complete a path where the shell is"),
        ("↑ after !", "The shell commands run before"),
        ("@! / @!N", "Attach the last (or Nth) shell command and its output to the prompt"),
        ("shift+tab", "Focus the queued prompts"),
    ]

    # TextArea's F6 (select line) and F7 (select all) shadow the session's F6 (preview) and F7
    # (options): every global key must work from the composer, so these give way.
    SHADOWED_ACTIONS = frozenset({"select_line", "select_all"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.SHADOWED_ACTIONS:
            return False
        return super().check_action(action, parameters)

    def offer_suggestion(self, suggestions: tuple[str, ...]) -> None:
        """The agent's predicted next prompt (`prompt_suggestions_update`) as ghost text, in an empty composer
        only: Tab (or →) takes it, typing dismisses it; an empty list withdraws it."""
        self.suggestion = suggestions[0] if suggestions and not self.text else ""

    def update_suggestion(self) -> None:
        """(Textual's hook, after every edit): any edit dismisses the ghost text, a draft never shows one."""
        self.suggestion = ""

    async def _on_key(self, event: events.Key) -> None:
        menu = self.menu if self.menu.is_open else self.file_menu if self.file_menu.is_open else None
        if event.key == "tab" and self.suggestion and menu is None:  # take the agent's suggested prompt
            event.prevent_default()
            event.stop()
            self.insert(self.suggestion)
            return
        if menu is not None and event.key in ("up", "down", "tab", "enter", "escape"):
            event.prevent_default()
            event.stop()
            if event.key in ("up", "down"):
                menu.move(-1 if event.key == "up" else 1)
            elif event.key == "escape":
                self._menu_dismissed = True
                menu.close()
            elif menu is self.file_menu:
                if (path := self.file_menu.selected_path) is not None:
                    self.insert_file(path)
            elif (name := self.menu.selected_name) is not None:
                self.insert_command(name)
            return
        if event.key in ("tab", "up", "down") and shell_keys.handle(self, event):  # a `!command` line
            event.prevent_default()
            event.stop()
            return
        if event.key in ("up", "down") and self._walk_history(event.key):
            event.prevent_default()
            event.stop()
            return
        if event.character == "?" and not self.text and menu is None:
            event.prevent_default()  # `?` on an empty prompt: the keys (F1)
            event.stop()
            await self.app.run_action("key_help")
            return
        if event.key == "enter":
            event.prevent_default()
            event.stop()
            text = self.text
            if text.strip():
                self.post_message(self.Submitted(self, text))
            else:
                self.post_message(self.SendNext(self))
            return
        if event.key in NEWLINE_KEYS:
            event.prevent_default()
            event.stop()
            self.insert("\n")
            return
        if event.key.startswith("alt+"):
            # A terminal sends Alt+M as ESC m, parsed as key "alt+m" with character "m": TextArea would
            # type the "m". Let it bubble to the bindings instead (Alt+M, Alt+R, Alt+W, ...).
            event.prevent_default()
            return
        if not (event.character and event.character.isprintable()) and await self._run_own_binding(event):
            return
        await super()._on_key(event)

    async def _run_own_binding(self, event: events.Key) -> bool:
        """Run a key bound on the composer itself (Backspace, Delete, arrows, Home, ...) now, in order.

        Textual runs a binding once the key has bubbled up to the app, a hop through every ancestor's
        queue, while letters are typed here at once: "quiet", five Backspaces and "hello" typed quickly
        became "quiethello" less five letters ("quiet", "qhelo"). Run here, each key acts where it fell."""
        if all(key != event.key for key, _binding in bindings_of(self)):
            return False  # (Escape, F-keys, ...: the app's; the whole chain is walked only for the composer's)
        active = self.screen.active_bindings.get(event.key)
        if active is None or active.node is not self or not active.enabled or active.binding.priority:
            return False
        event.prevent_default()
        event.stop()
        await self.run_action(active.binding.action)
        return True
