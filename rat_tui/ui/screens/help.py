"""Provides HelpScreen (F1): every key that works where the focus is, read from the live bindings
(so a key remapped in `[keymap]` shows as remapped), grouped by the part of the screen it belongs to."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Static

from .dialog import Dialog

# What the user calls each part (a class attribute HELP_AREA on a widget or screen wins).
AREAS = {
    "PromptComposer": "Prompt",
    "Transcript": "Transcript",
    "SessionView": "Session",
    "MainScreen": "Session",
    "RatApp": "Everywhere",
    "ReplayApp": "Everywhere",
    "PermissionScreen": "Permission request",
    "ElicitationScreen": "Agent's form",
    "UrlElicitationScreen": "Agent's link",
    "AskUserScreen": "Agent's question",
    "AuthScreen": "Login",
    "HistoryScreen": "History",
    "HistoryTranscriptScreen": "History transcript",
    "ChangeReviewScreen": "Change review",
    "DiffScreen": "Diff",
    "TrafficScreen": "Traffic inspector",
    "OutputViewer": "Output viewer",
}


def area_name(node: DOMNode) -> str:
    return getattr(node, "HELP_AREA", None) or AREAS.get(type(node).__name__) or type(node).__name__


@dataclass
class KeyRow:
    area: str
    keys: str
    what: str
    ident: str = ""
    """The binding's id: the name `[keymap]` in config.toml remaps it by."""


def key_rows(screen: Screen) -> list[KeyRow]:
    """The keys that work on `screen` with its current focus, innermost part first."""
    app = screen.app
    grouped: dict[tuple[int, str], KeyRow] = {}
    order: list[tuple[int, str]] = []
    focused = screen.focused
    # Keys a widget handles itself rather than through bindings (Enter in the prompt, `@`, `/`, ...).
    extra = [KeyRow(area_name(focused), keys, what) for keys, what in getattr(focused, "HELP_KEYS", ())]
    for key, active in screen.active_bindings.items():
        binding: Binding = active.binding
        if binding.system or not (binding.description or binding.tooltip):
            continue
        if not active.enabled:
            continue
        node = active.node
        ident = (id(node), binding.id or binding.action)
        row = grouped.get(ident)
        shown = app.get_key_display(Binding(key, binding.action))
        if row is None:
            what = binding.tooltip or binding.description
            grouped[ident] = KeyRow(area_name(node), shown, what, binding.id or "")
            order.append(ident)
        elif shown not in row.keys.split(", "):
            row.keys += f", {shown}"
    return extra + [grouped[ident] for ident in order]


class HelpScreen(Dialog[None]):
    """F1 (or `?` on an empty prompt): the keys of the focused area, then of what contains it."""

    DEFAULT_CSS = """
    HelpScreen > #dialog { max-width: 100; border: round $accent; }
    HelpScreen #title { color: $accent; text-style: bold; }
    HelpScreen VerticalScroll { height: auto; max-height: 1fr; }
    """
    BINDINGS = [Binding("escape,f1,q", "close", "Close", id="help.close")]

    def __init__(self, focus_area: str, rows: list[KeyRow]) -> None:
        super().__init__()
        self.focus_area = focus_area
        self.rows = rows

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Static(Text(f"Keys — {self.focus_area}"), id="title")
            table = Table(box=None, show_header=False, expand=True, padding=(0, 1))
            table.add_column("key", style="bold", no_wrap=True)
            table.add_column("what", ratio=1)
            table.add_column("keymap id", style="dim", no_wrap=True)
            area = None
            for row in self.rows:
                if row.area != area:
                    area = row.area
                    table.add_row(Text(area, style="underline"), "", "")
                table.add_row(row.keys, row.what, row.ident)
            yield Static(table, id="keys")
            yield Static("Esc, F1 or q closes · Ctrl+P lists every command · ids remap keys ([keymap])", id="hint")

    def action_close(self) -> None:
        self.dismiss(None)


def help_for(screen: Screen) -> HelpScreen:
    focused = screen.focused
    area = area_name(focused) if focused is not None and area_name(focused) in AREAS.values() else area_name(screen)
    if area == "Screen":
        area = "Session"
    return HelpScreen(area, key_rows(screen))
