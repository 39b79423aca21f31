"""Provides what the transcript's double- and triple-click select, and its code blocks for the block cursor.

- A double-click selects the word under the pointer: letters, digits and `_`, with `-./~` before or
  inside it, so a path (`rat_tui/app.py`, `~/.config`) or a flag (`--cwd`) is one word; a trailing `.`
  ends a sentence, not the word.
- A triple-click selects the block under it: a paragraph, a heading, a whole list or fenced code block
  (all its pieces when the stream cut it), a tool card, a notice; its blank edges left out.
- `code_blocks(entry)`: the fenced code blocks an entry shows (the source between the fences, the
  pieces joined), in order, with the segments they span: the block cursor steps into them (n/p) and
  `y` copies the one under it.

Selections are in the transcript's content coordinates (cells of its lines), as Textual's drag selection
is, so Ctrl+C copies them the same way (`Transcript.get_selection`, OSC 52).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual.geometry import Offset
from textual.selection import Selection

from .markdown_stream import Block, Entry, Seg, parse

if TYPE_CHECKING:
    from .transcript import Transcript

FENCE = re.compile(r" {0,3}(```|~~~)")
WORD = re.compile(r"[-./~]*\w+(?:[-./~]+\w+)*/?")


@dataclass
class CodeSpan:
    """One fenced code block of an entry: its segments (first..last, indexes into `entry.items`)."""

    first: int
    last: int
    lang: str | None
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _block(entry: Entry, seg: Seg) -> Block | None:
    if seg.role != "md":
        return None
    if seg.open:
        return entry.splitter.tail() if entry.splitter is not None else None
    return seg.block


@lru_cache(maxsize=256)
def _fenced(text: str) -> tuple[str | None, str] | None:
    """A whole top-level block that is a fenced code block: its language and source between the fences."""
    if not FENCE.match(text):
        return None
    tokens, _refs = parse(text, {}, inline=False)
    fence = next((token for token in tokens if token.type == "fence"), None)
    if fence is None or fence.level != 0:
        return None
    lang = fence.info.split()[0] if fence.info.strip() else None
    return lang, fence.content


def code_blocks(entry: Entry) -> list[CodeSpan]:
    """The fenced code blocks among the entry's shown segments (none while it is collapsed): a short one is
    one markdown block (fences included), a long one the stream's "code" pieces (the source alone)."""
    spans: list[CodeSpan] = []
    current: CodeSpan | None = None
    for index, seg in enumerate(entry.items):
        block = _block(entry, seg)
        if block is not None and block.kind == "md" and (fenced := _fenced(block.text)) is not None:
            spans.append(CodeSpan(index, index, fenced[0], [fenced[1]]))
            current = None
            continue
        if block is None or block.kind != "code":
            current = None
            continue
        if current is None or block.top:
            current = CodeSpan(index, index, block.lang)
            spans.append(current)
        current.last = index
        current.parts.append(block.text)
        if block.bottom:
            current = None
    return spans


def _continues(before: Block | None, after: Block | None) -> bool:
    """Whether `after` is the next piece of the same block as `before` (a list or code block the stream
    cut into pieces, or an over-long line cut into plain pieces)."""
    if before is None or after is None or before.kind != after.kind:
        return False
    if after.kind == "code":
        return not before.bottom and not after.top
    if after.kind == "list":
        return not after.top
    return after.kind == "plain" and not before.last


def _cells_to_chars(text: str) -> list[int]:
    """For each character of `text`, the cell it starts at (one more at the end: the line's width)."""
    starts, cell = [], 0
    for char in text:
        starts.append(cell)
        cell += cell_len(char)
    starts.append(cell)
    return starts


def word_selection(line: str, y: int, x: int) -> Selection | None:
    """The word of `line` (content line `y`) covering cell `x`, or None where there is no word."""
    starts = _cells_to_chars(line)
    index = next((i for i in range(len(line)) if starts[i] <= x < starts[i + 1]), None)
    if index is None:
        return None
    for match in WORD.finditer(line):
        start, end = match.span()
        if start <= index < end:
            return Selection(Offset(starts[start], y), Offset(starts[end], y))
    return None


def block_selection(transcript: Transcript, y: int) -> Selection | None:
    """The block under content line `y`: its segments (all pieces of it), blank lines at its edges left out."""
    found = transcript.locate(y)
    if found is None:
        return None
    entry, seg, _line = found
    first = last = seg.index
    while first > 0 and _continues(_block(entry, entry.items[first - 1]), _block(entry, entry.items[first])):
        first -= 1
    while last + 1 < len(entry.items) and _continues(_block(entry, entry.items[last]),
                                                    _block(entry, entry.items[last + 1])):
        last += 1
    lines: list[tuple[int, str]] = []
    for index in range(first, last + 1):
        transcript.strips(entry, entry.items[index])  # rendered now: the heights are exact
    top = transcript.rows.start(entry.index)
    for index in range(first, last + 1):
        part = entry.items[index]
        start = top + entry.start(index)
        for offset, strip in enumerate(transcript.strips(entry, part)):
            lines.append((start + offset, strip.text.rstrip()))
    shown = [(line_y, text) for line_y, text in lines if text.strip()]
    if not shown:
        return None
    (start_y, _), (end_y, end_text) = shown[0], shown[-1]
    return Selection(Offset(0, start_y), Offset(cell_len(end_text), end_y))


def code_block_lines(transcript: Transcript, entry: Entry, span: CodeSpan) -> tuple[int, int]:
    """The content lines (first, last + 1) a code block takes on screen."""
    top = transcript.rows.start(entry.index)
    start = top + entry.start(span.first)
    end = top + entry.start(span.last) + entry.items[span.last].height
    return start, end
