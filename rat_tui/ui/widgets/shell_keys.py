"""Provides the composer's keys for `!command`: Tab completes a path, ↑/↓ on `!` walk the shell commands sent.

Paths complete where the tab's shell is now (after its `cd`s), `~` included; several candidates complete
to what they share and are listed in a toast. ↑ on a composer holding just `!` shows the last `!command`
of the prompt history (which keeps them with the prompts), ↑/↓ go on while it is unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events

if TYPE_CHECKING:
    from .prompt import PromptComposer

LISTED = 12  # candidates named in the toast


@dataclass
class _Walk:
    index: int
    shown: str


def handle(composer: PromptComposer, event: events.Key) -> bool:
    """Handle `event` for a `!` line; True when it was (the caller stops it)."""
    text = composer.text
    if not text.startswith("!"):
        return False
    if event.key == "tab":
        complete(composer)
        return True
    if event.key in ("up", "down"):
        return walk(composer, event.key)
    return False


def walk(composer: PromptComposer, key: str) -> bool:
    history = composer.prompt_history
    items = [item for item in (history.items if history is not None else []) if item.startswith("!") and item != "!"]
    state: _Walk | None = getattr(composer, "shell_walk", None)
    if state is None or composer.text != state.shown:
        if key != "up" or composer.text != "!" or not items:
            composer.shell_walk = None  # type: ignore[attr-defined]
            return False
        state = _Walk(len(items), "!")
    index = state.index + (-1 if key == "up" else 1)
    if index < 0:
        composer.app.bell()
        return True
    if index >= len(items):
        composer.shell_walk = None  # type: ignore[attr-defined]
        composer.text = "!"
        composer.move_cursor(composer.document.end)
        return True
    composer.shell_walk = _Walk(index, items[index])  # type: ignore[attr-defined]
    composer.text = items[index]
    composer.move_cursor(composer.document.end)
    return True


def complete(composer: PromptComposer) -> None:
    row, column = composer.cursor_location
    before = composer.document.get_line(row)[:column]
    if row == 0:
        before = before[1:]  # the `!`
    word = before.split(" ")[-1] if before and not before.endswith(" ") else ""
    cwd_of: Callable[[], Path] | None = getattr(composer, "shell_cwd", None)
    cwd = cwd_of() if cwd_of is not None else composer.cwd or Path.cwd()
    found = candidates(word, Path(cwd))
    if not found:
        composer.app.bell()
        return
    common = os.path.commonprefix([name for name, _ in found])
    if len(found) == 1:
        name, is_dir = found[0]
        addition = name[len(word):] + ("/" if is_dir else " ")
    else:
        addition = common[len(word):]
        if not addition:
            names = [os.path.basename(name.rstrip("/")) + ("/" if is_dir else "") for name, is_dir in found]
            more = f" … and {len(names) - LISTED} more" if len(names) > LISTED else ""
            composer.notify("  ".join(names[:LISTED]) + more, title="Completions", timeout=4, markup=False)
            return
    composer.insert(addition)


def candidates(word: str, cwd: Path) -> list[tuple[str, bool]]:
    """The paths `word` may complete to, as typed (relative, absolute or `~/…`), with whether each is a directory."""
    head, _, prefix = word.rpartition("/")
    typed_dir = head + "/" if "/" in word else ""
    base = os.path.expanduser(typed_dir) if typed_dir.startswith("~") else typed_dir
    directory = Path(base) if os.path.isabs(base) else cwd / base
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    found = []
    for name in names:
        if not name.startswith(prefix) or (name.startswith(".") and not prefix.startswith(".")):
            continue
        found.append((typed_dir + name, (directory / name).is_dir()))
    return found
