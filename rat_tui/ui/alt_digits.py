"""Provides `alt_digits_as_keys`: ESC+digit (what xterm, tmux and most terminals send for Alt+1..9)
parsed as the keys alt+1..alt+9, so Alt+digit switches tabs.

Textual maps ESC+digit to the characters macOS's Option key types (ESC 1 → "¡", ESC 2 → "™", …,
for WezTerm on macOS), which left Alt+1..9 typing `¡™£` in tmux. Without those entries its parser
reads ESC+digit like ESC+letter: the key with Alt.
"""

from __future__ import annotations

from textual._ansi_sequences import ANSI_SEQUENCES_KEYS


def alt_digits_as_keys() -> None:
    for digit in "123456789":
        ANSI_SEQUENCES_KEYS.pop(f"\x1b{digit}", None)  # type: ignore[attr-defined]
