"""Provides fit: the status bar's parts laid out in its width, by priority.

Every part has a priority. When the parts do not fit, the part of lowest priority is shortened first
(its compact form, then an ellipsis down to its minimum), then dropped, before the next one is touched.
Essential parts (the agent's name, the state word, a request waiting for the user) are never dropped:
once only they are left, a waiting request takes its compact form and the agent's name is shortened.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.cells import cell_len
from rich.text import Text

ELLIPSIS = "…"


@dataclass
class Part:
    text: Text
    priority: int = 0
    """Higher is kept longer; `essential` parts are never dropped."""
    prefix: str = "  │ "
    """What separates it from the part before (not shortened; none for the first part shown)."""
    compact: Text | None = None
    """A shorter form, tried before an ellipsis."""
    shorten: str = ""
    """"end" (cut its end), "start" (its start: a path), or "" (whole or nothing)."""
    min_cells: int = 8
    essential: bool = False

    def cells(self, first: bool) -> int:
        return cell_len(self.text.plain) + (0 if first else cell_len(self.prefix))


def fit(parts: list[Part], width: int | None) -> Text:
    """The parts joined, shortened and dropped as described above until they fit `width` (None: all)."""
    shown = [replace(part) for part in parts]  # shortened copies: the caller's parts stay whole
    if width is not None:
        for part in sorted((p for p in shown if not p.essential), key=lambda p: p.priority):
            excess = _total(shown) - width
            if excess <= 0:
                break
            if not _shrink(part, excess):
                shown.remove(part)
        essentials = [p for p in shown if p.essential]
        for part in sorted(essentials, key=lambda p: p.priority):
            excess = _total(shown) - width
            if excess <= 0:
                break
            _shrink(part, excess)
    text = Text()
    for index, part in enumerate(shown):
        if index:
            text.append(part.prefix)
        text.append_text(part.text)
    return text


def _total(parts: list[Part]) -> int:
    return sum(part.cells(index == 0) for index, part in enumerate(parts))


def _shrink(part: Part, excess: int) -> bool:
    """Make the part `excess` cells narrower if it can (True), else as narrow as it goes (False)."""
    if part.compact is not None and cell_len(part.compact.plain) < cell_len(part.text.plain):
        excess -= cell_len(part.text.plain) - cell_len(part.compact.plain)
        part.text, part.compact = part.compact, None
        if excess <= 0:
            return True
    if not part.shorten:
        return excess <= 0
    length = cell_len(part.text.plain)
    target = max(part.min_cells, length - excess)
    if target < length:
        part.text = _cut(part.text, target, part.shorten)
    return length - target >= excess


def _cut(text: Text, cells: int, where: str) -> Text:
    """`text` in `cells` cells, its end (or start) replaced by an ellipsis, styles kept."""
    plain = text.plain
    if where == "start":
        keep = len(plain)
        while keep > 0 and cell_len(plain[len(plain) - keep :]) > cells - 1:
            keep -= 1
        cut = text[len(plain) - keep :]
        result = Text(ELLIPSIS, style=cut.style)
        result.append_text(cut)
        return result
    keep = len(plain)
    while keep > 0 and cell_len(plain[:keep]) > cells - 1:
        keep -= 1
    result = text[:keep]
    result.append(ELLIPSIS)
    return result
