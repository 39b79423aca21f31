"""Provides the check of `[keymap]` entries: keys Textual can parse, binding ids that exist.

An entry that names a key nobody can press (`ctrl+nonsense`) would replace the binding's keys and
leave the action without any: Ctrl+Q remapped to nonsense means no way to quit. So every key of an
entry is checked before the keymap is applied; an entry with a bad key is reported and left out,
and the binding keeps its default keys. Unknown binding ids are reported too (they would do
nothing; usually a typo).
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import sys
import unicodedata

from textual.binding import Binding
from textual.dom import DOMNode
from textual.keys import KEY_ALIASES, KEY_NAME_REPLACEMENTS, KEY_TO_UNICODE_NAME, Keys

MODIFIERS = {"ctrl", "alt", "shift", "super", "meta", "hyper"}
_NAMED = ({key.value.rsplit("+", 1)[-1] for key in Keys} | set(KEY_NAME_REPLACEMENTS.values()) | set(KEY_TO_UNICODE_NAME)
          | {alias.rsplit("+", 1)[-1] for aliases in KEY_ALIASES.values() for alias in aliases} | set(KEY_ALIASES)
          | {f"f{n}" for n in range(1, 25)} | {"space", "enter", "tab", "backspace", "escape", "minus", "plus"})


def key_problem(key: str) -> str | None:
    """Why `key` (one key of a comma-separated list, e.g. "ctrl+shift+p") cannot be pressed; None if it can."""
    key = key.strip()
    if not key:
        return "an empty key"
    if len(key) == 1:
        return None if key.isprintable() and not key.isspace() else f"{key!r} is not a key"
    *modifiers, name = key.split("+") if not key.endswith("++") else [*key[:-2].split("+"), "+"]
    unknown = [m for m in modifiers if m not in MODIFIERS]
    if unknown:
        return f"{key!r}: unknown modifier {unknown[0]!r} (use ctrl, alt, shift, super, meta or hyper)"
    if len(name) == 1 or name in _NAMED:
        return None
    try:
        unicodedata.lookup(name.replace("_", " "))
        return None
    except KeyError:
        return f"{key!r}: unknown key {name!r}"


def checked_keymap(keymap: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The entries whose every key can be pressed, and a message for each one left out."""
    valid: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, keys in keymap.items():
        bad = [why for key in str(keys).split(",") if (why := key_problem(key)) is not None]
        if bad:
            problems.append(f"[keymap] {binding_id} = {keys!r} ignored ({bad[0]}); the binding keeps its default keys.")
        else:
            valid[binding_id] = keys
    return valid, problems


def binding_ids() -> set[str]:
    """The id of every binding rat-tui declares (all of its UI modules imported first)."""
    import rat_tui.ui as ui

    for module in pkgutil.walk_packages(ui.__path__, "rat_tui.ui."):
        if module.name not in sys.modules:
            try:
                importlib.import_module(module.name)
            except Exception:  # a module that cannot import is someone else's problem, not the keymap's
                continue
    ids: set[str] = set()
    pending: list[type] = [DOMNode]
    seen: set[type] = set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        pending.extend(cls.__subclasses__())
        if not cls.__module__.startswith("rat_tui"):
            continue
        for binding in cls.__dict__.get("BINDINGS", []):
            if isinstance(binding, Binding) and binding.id:
                ids.add(binding.id)
    return ids


def unknown_ids(keymap: dict[str, str], known: set[str]) -> list[str]:
    """A message for each keymap id that names no binding: where the ids are shown, and the likeliest meant."""
    messages = []
    for binding_id in keymap:
        if binding_id in known:
            continue
        close = difflib.get_close_matches(binding_id, sorted(known), n=1)
        meant = f" (did you mean {close[0]!r}?)" if close else ""
        messages.append(f"[keymap] {binding_id!r} is not a binding id (ignored){meant}; F1 shows each key's id "
                        "beside it.")
    return messages
