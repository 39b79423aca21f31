"""Key helpers: `alt_digits_as_keys`, the binding walks (`bindings_of`, `modal_binding_chain`, `keymap_of`) and
the tab relabel (`relabel`).

Textual internals (8.2.8): `textual._ansi_sequences.ANSI_SEQUENCES_KEYS`, `DOMNode._bindings`,
`Screen._modal_binding_chain`, `App._keymap`, `Tab._label`.

`alt_digits_as_keys`: ESC+digit (what xterm, tmux and most terminals send for Alt+1..9)
parsed as the keys alt+1..alt+9, so Alt+digit switches tabs.

Textual maps ESC+digit to the characters macOS's Option key types (ESC 1 → "¡", ESC 2 → "™", …,
for WezTerm on macOS), which left Alt+1..9 typing `¡™£` in tmux. Without those entries its parser
reads ESC+digit like ESC+letter: the key with Alt.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual._ansi_sequences import ANSI_SEQUENCES_KEYS
from textual.app import App
from textual.binding import Binding, BindingsMap
from textual.content import Content
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Static, Tab


def alt_digits_as_keys() -> None:
    for digit in "123456789":
        ANSI_SEQUENCES_KEYS.pop(f"\x1b{digit}", None)  # type: ignore[attr-defined]


def bindings_of(node: DOMNode) -> list[tuple[str, Binding]]:
    """`node`'s own bindings, as (key, binding), with the keymap applied (Textual's `_bindings`)."""
    return list(node._bindings)


def modal_binding_chain(screen: Screen) -> list[tuple[DOMNode, BindingsMap]]:
    """The bindings a key meets from the focused widget up to the app, stopping at a modal screen."""
    return screen._modal_binding_chain


def keymap_of(app: App[Any]) -> dict[str, str]:
    """The app's keymap (binding id -> keys), as `App.set_keymap` last set it."""
    return getattr(app, "_keymap", None) or {}


def relabel(tab: Tab, label: str) -> None:
    """`tab.label = label`, without laying the screen out when the label keeps its width (a badge that
    changes, ◐ to ✓). Textual's setter always lays it out: with many tabs open, every one finishing in the
    background laid out the whole screen."""
    if cell_len(tab.label.plain) != cell_len(label):
        tab.label = label  # (Tabs moves the underline after it: the tabs after this one moved)
        return
    tab._label = Content.from_text(label)  # what the setter does, but for the layout
    Static.update(tab, tab._label, layout=False)
