"""Provides `wrap_joins` and `join_lines`: copied text with the screen's soft wraps joined.

The transcript copies what it shows, line by line; a paragraph the screen wrapped at its width came out with a line
break at every wrap. A segment is rendered a second time as wide as `WIDE` cells (only when text is copied): each
line of that rendering is a line of its own (a paragraph, a list item, a line of code), and the lines on screen
are matched to it by their non-blank characters. Where a logical line goes on to the next screen line, the two are
joined with the blanks the logical line has there (a space at a word wrap, nothing where a long word or a line of
code was cut). Lines that do not match (a box drawn around a card, where each screen line has its own borders)
keep their line breaks.
"""

from __future__ import annotations

WIDE = 2000
"""Cells to render a segment at to find its logical lines (a paragraph longer than that breaks there too)."""

JOIN_LINES = 4000
"""A selection of more screen lines than this is copied as shown, its wraps not joined: rendering each of its
segments a second time doubles what copying a whole long session costs, on the loop, keys waiting
(bench/copy_select.py)."""

NEWLINE = "\n"


def wrap_joins(shown: list[str], wide: list[str]) -> list[str] | None:
    """For each pair of neighbouring `shown` lines, what joins them: a line break, or the blanks of the logical
    line (from `wide`) that the wrap took; None when `shown` is not `wide` wrapped (then keep every break)."""
    joins: list[str] = []
    at = 0  # the next shown line
    for logical in wide:
        logical = logical.rstrip()
        if at >= len(shown):
            return None
        if not logical.strip():  # a blank line is one blank line on screen
            if shown[at].strip():
                return None
            joins.append(NEWLINE)
            at += 1
            continue
        position = 0  # in `logical`, after what the shown lines so far matched
        while True:
            if at >= len(shown):
                return None
            position = _match(logical, position, shown[at])
            if position is None:
                return None
            at += 1
            rest = logical[position:]
            if not rest.strip():
                joins.append(NEWLINE)
                break
            blanks = len(rest) - len(rest.lstrip())
            joins.append(logical[position:position + blanks])  # the wrap took these (or nothing, a cut)
            position += blanks
    if at != len(shown):
        return None
    return joins[:-1] if joins else []


def _match(logical: str, position: int, line: str) -> int | None:
    """Where in `logical` (from `position`) the non-blank characters of `line` end, or None if they differ."""
    for char in line:
        if char.isspace():
            continue
        while position < len(logical) and logical[position].isspace():
            position += 1
        if position >= len(logical) or logical[position] != char:
            return None
        position += 1
    return position


def join_lines(lines: list[str], joins: list[str]) -> str:
    """`lines` joined by `joins` (one fewer): a soft wrap drops the blanks either side of it and puts the logical
    line's own in."""
    text = lines[0] if lines else ""
    for join, line in zip(joins, lines[1:]):
        text = text + NEWLINE + line if join == NEWLINE else text.rstrip() + join + line.lstrip()
    return text
