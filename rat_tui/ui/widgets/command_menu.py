"""Provides CommandMenu: the slash-command completion dropdown a PromptComposer opens on `/`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.content import Content
from textual.fuzzy import Matcher
from textual.geometry import Region
from textual.widgets import OptionList
from textual.widgets.option_list import Option

# Width of the "/name hint" column, so that descriptions line up.
NAME_COLUMN_MAX = 32


def command_hint(command: dict[str, Any]) -> str:
    """The input hint of an AvailableCommand (`input: {hint}`, unstructured input), or ""."""
    spec = command.get("input")
    hint = spec.get("hint") if isinstance(spec, dict) else None
    return hint if isinstance(hint, str) else ""


def match_commands(commands: list[dict[str, Any]], query: str) -> list[dict[str, Any]]:
    """Commands whose name starts with `query` (in the agent's order), then fuzzy matches by score."""
    if not query:
        return list(commands)
    lowered = query.lower()
    names = [str(c.get("name", "")) for c in commands]
    prefixed = [i for i, name in enumerate(names) if name.lower().startswith(lowered)]
    taken = set(prefixed)  # a set: 500 commands made the list lookup quadratic per keystroke
    matcher = Matcher(query)
    scored = [(-matcher.match(name), i) for i, name in enumerate(names) if i not in taken]
    fuzzy = [i for score, i in sorted(scored) if score < 0]
    return [commands[i] for i in prefixed + fuzzy]


class CommandMenu(OptionList, can_focus=False):
    """A dropdown that never takes focus: the composer drives it with its own keys.

    It lives on the screen as an overlay (the composer mounts it) and is placed above the composer,
    or below it when there is no room above.
    """

    DEFAULT_CSS = """
    CommandMenu {
        overlay: screen;
        position: absolute;
        constrain: inside inside;
        display: none;
        height: auto;
        max-height: 10;
        border: round $border;
        background: $surface;
        padding: 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        & > .option-list--option-highlighted {
            color: $block-cursor-foreground;
            background: $block-cursor-background;
            text-style: $block-cursor-text-style;
        }
    }
    """

    MAX_ROWS = 8
    MAX_MATCHES = 100

    def __init__(self) -> None:
        super().__init__()
        self.matches: list[dict[str, Any]] = []
        self.query: str | None = None

    @property
    def is_open(self) -> bool:
        return self.display

    @property
    def selected_name(self) -> str | None:
        """The name of the highlighted command."""
        index = self.highlighted
        if index is None or not 0 <= index < len(self.matches):
            return None
        return str(self.matches[index].get("name", ""))

    def show_matches(self, commands: list[dict[str, Any]], query: str, anchor: Region) -> bool:
        """Fill with the commands matching `query` and open next to `anchor`; False (closed) if none."""
        # The best MAX_MATCHES: the menu shows 8 rows and typing narrows it; an agent may send 500 commands.
        matches = [c for c in match_commands(commands, query) if c.get("name")][: self.MAX_MATCHES]
        # The column grows past NAME_COLUMN_MAX up to half the menu: a hint is cut only when room runs out.
        room = max(NAME_COLUMN_MAX, (anchor.width - 4) // 2)
        column = min(room, max((len(self._label(c)) for c in matches), default=0))
        return self._show(query, matches, lambda c: self._prompt(c, column), anchor)

    def _show(self, query: str, matches: list[dict[str, Any]], prompt: Callable[[dict[str, Any]], Content],
              anchor: Region) -> bool:
        """Fill with `matches` (each with a "name"), shown by `prompt`, and open next to `anchor`."""
        # A new query starts at the best match; the same one (a new list) keeps the highlight.
        previous = self.selected_name if query == self.query else None
        self.query = query
        self.matches = matches
        if not matches:
            self.close()
            return False
        self.set_options(Option(prompt(match)) for match in matches)
        names = [match["name"] for match in matches]
        self.highlighted = names.index(previous) if previous in names else 0
        self._place(anchor)
        self.display = True
        return True

    def close(self) -> None:
        self.display = False
        self.query = None

    def move(self, step: int) -> None:
        if self.matches:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.matches)

    def _place(self, anchor: Region) -> None:
        height = min(len(self.matches), self.MAX_ROWS) + 2  # + the border
        above = anchor.y - height
        self.styles.width = max(anchor.width, 20)
        self.styles.offset = (anchor.x, above if above >= 0 else anchor.bottom)

    @staticmethod
    def _label(command: dict[str, Any]) -> str:
        hint = command_hint(command)
        return f"/{command['name']} {hint}" if hint else f"/{command['name']}"

    @staticmethod
    def _prompt(command: dict[str, Any], column: int) -> Content:
        name = f"/{command['name']}"
        hint = command_hint(command)
        label = f"{name} {hint}" if hint else name
        if len(label) > column:
            label = label[: column - 1] + "…"
        description = str(command.get("description") or "").strip().splitlines()
        return Content.assemble(
            (label[: len(name)], "bold $text-accent"),
            (label[len(name):], "$text-muted"),
            " " * (column - len(label) + 2),
            description[0] if description else "",
        )
