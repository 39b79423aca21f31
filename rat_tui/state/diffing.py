"""Provides the diff model: (path, old text | None, new text) -> hunks and display rows, no Textual.

Kept apart from the widget so the diff logic (and "revert one hunk") can be tested and reused
without a UI, and so the widget only has to draw rows it is handed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cached_property
from typing import NamedTuple

CONTEXT = 3  # lines of context around each change, as `diff -u` and git show
# difflib's full search (autojunk=False) finds the smallest diff but goes quadratic when many lines
# repeat; on a stretch without unique lines longer than this, let it treat very common lines (blank
# lines, lone brackets) as junk, as `difflib.unified_diff` always does.
EXACT_LIMIT = 2000
MAX_DEPTH = 100  # patience recursion; deeper stretches go to difflib (Python's stack is ~1000 frames)

Opcode = tuple[str, int, int, int, int]


class Row(NamedTuple):
    """One line of the unified view. `kind` is hunk (its header), context, added or removed."""

    kind: str
    old_no: int | None  # 1-based line number in the old text (None on added and header rows)
    new_no: int | None  # 1-based line number in the new text (None on removed and header rows)
    text: str  # the line without its line ending (the "@@ ... @@" header on hunk rows)
    hunk: int


class Cell(NamedTuple):
    """One half of a side-by-side row: a numbered line of the old (left) or new (right) text."""

    number: int
    text: str
    kind: str  # context, removed (left) or added (right)


class SplitRow(NamedTuple):
    """One line of the side-by-side view; a side is None where the other side has no partner."""

    hunk: int
    left: Cell | None
    right: Cell | None
    header: str | None = None  # the "@@ ... @@" text on a hunk's header row (both sides None)


@dataclass(frozen=True, slots=True)
class Hunk:
    """A group of changes with their context: old_lines[old_start:old_end] became new_lines[new_start:new_end]."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int
    opcodes: tuple[Opcode, ...]

    @property
    def header(self) -> str:
        return f"@@ -{_range(self.old_start, self.old_end)} +{_range(self.new_start, self.new_end)} @@"


def _range(start: int, end: int) -> str:
    """A unified-diff range: 1-based start, count omitted when 1, the line before when empty."""
    count = end - start
    if count == 1:
        return str(start + 1)
    return f"{start if count == 0 else start + 1},{count}"


def split_lines(text: str | None) -> list[str]:
    """Lines with their endings kept, cut at "\\n" only: str.splitlines also cuts at form feeds and
    other separators, which would number lines differently from the agent's and the editor's."""
    if not text:
        return []
    lines = [line + "\n" for line in text.split("\n")]
    last = lines.pop()
    if last != "\n":  # no newline at end of file
        lines.append(last[:-1])
    return lines


def _display(line: str) -> str:
    return line.rstrip("\r\n")


def diff_opcodes(a: list[str], b: list[str], pause: Callable[[], object] | None = None) -> list[Opcode]:
    """Opcodes (SequenceMatcher's format) for a -> b by patience diff: lines that occur once on each
    side anchor the match, and difflib only sees the short stretches between anchors. difflib over a
    whole 20,000-line file with a change every 15 lines takes seconds (minutes with autojunk=False).

    `pause`, from a worker thread: called between stretches (about 18,000 times for that file), it may
    sleep to hand the GIL to the loop (priority.give_way)."""
    blocks: list[tuple[int, int, int]] = []
    _match(a, 0, len(a), b, 0, len(b), blocks, 0, pause)
    return _opcodes(blocks, len(a), len(b))


def _match(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int,
           out: list[tuple[int, int, int]], depth: int, pause: Callable[[], object] | None = None) -> None:
    """Append the matching blocks of a[alo:ahi] and b[blo:bhi] to `out`, in order."""
    if pause is not None:
        pause()
    a0, b0 = alo, blo
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        alo += 1
        blo += 1
    if alo > a0:
        out.append((a0, b0, alo - a0))
    suffix = 0
    while alo < ahi - suffix and blo < bhi - suffix and a[ahi - 1 - suffix] == b[bhi - 1 - suffix]:
        suffix += 1
    ahi, bhi = ahi - suffix, bhi - suffix
    if alo < ahi and blo < bhi:
        anchors = _anchors(a, alo, ahi, b, blo, bhi) if depth < MAX_DEPTH else []
        if anchors:
            i, j = alo, blo
            for ai, bj in anchors:
                _match(a, i, ai, b, j, bj, out, depth + 1, pause)
                out.append((ai, bj, 1))
                i, j = ai + 1, bj + 1
            _match(a, i, ahi, b, j, bhi, out, depth + 1, pause)
        else:
            exact = (ahi - alo) + (bhi - blo) <= EXACT_LIMIT
            matcher = SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=not exact)
            out.extend((alo + i, blo + j, size) for i, j, size in matcher.get_matching_blocks()[:-1])
    if suffix:
        out.append((ahi, bhi, suffix))


def _anchors(a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int) -> list[tuple[int, int]]:
    """Pairs (i, j) of lines unique in both ranges, the longest run of them in the same order."""
    only_a: dict[str, int] = {}
    for i in range(alo, ahi):
        line = a[i]
        only_a[line] = -1 if line in only_a else i
    only_b: dict[str, int] = {}
    for j in range(blo, bhi):
        line = b[j]
        only_b[line] = -1 if line in only_b else j
    # Dicts keep first-insertion order, so these pairs come sorted by i.
    pairs = [(i, only_b[line]) for line, i in only_a.items() if i >= 0 and only_b.get(line, -1) >= 0]
    if not pairs:
        return []
    # Longest increasing subsequence of j (patience sorting): tails[k] ends the best run of length k + 1.
    tails: list[int] = []
    tail_js: list[int] = []
    back = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        k = bisect_left(tail_js, j)
        back[index] = tails[k - 1] if k else -1
        if k == len(tails):
            tails.append(index)
            tail_js.append(j)
        else:
            tails[k] = index
            tail_js[k] = j
    run: list[tuple[int, int]] = []
    index = tails[-1]
    while index >= 0:
        run.append(pairs[index])
        index = back[index]
    run.reverse()
    return run


def _opcodes(blocks: list[tuple[int, int, int]], len_a: int, len_b: int) -> list[Opcode]:
    """Matching blocks (adjacent ones merged) -> opcodes, as SequenceMatcher.get_opcodes does."""
    codes: list[Opcode] = []
    i = j = 0
    for ai, bj, size in [*blocks, (len_a, len_b, 0)]:
        tag = "replace" if i < ai and j < bj else "delete" if i < ai else "insert" if j < bj else ""
        if tag:
            codes.append((tag, i, ai, j, bj))
        if size:
            if not tag and codes and codes[-1][0] == "equal":
                _, i1, _, j1, _ = codes.pop()
                codes.append(("equal", i1, ai + size, j1, bj + size))
            else:
                codes.append(("equal", ai, ai + size, bj, bj + size))
        i, j = ai + size, bj + size
    return codes


def group_hunks(codes: list[Opcode], context: int = CONTEXT) -> list[Hunk]:
    """Changes grouped with `context` lines around them: SequenceMatcher.get_grouped_opcodes's rule
    (changes less than 2 * context lines apart share a hunk), over our prefix-trimmed opcodes."""
    if not codes or all(code[0] == "equal" for code in codes):
        return []
    codes = list(codes)
    tag, i1, i2, j1, j2 = codes[0]
    if tag == "equal":
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    tag, i1, i2, j1, j2 = codes[-1]
    if tag == "equal":
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    hunks: list[Hunk] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            hunks.append(_hunk(group))
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if not (len(group) == 1 and group[0][0] == "equal"):
        hunks.append(_hunk(group))
    return hunks


def _hunk(group: list[Opcode]) -> Hunk:
    return Hunk(group[0][1], group[-1][2], group[0][3], group[-1][4], tuple(group))


class FileDiff:
    """One file's diff, ready to draw: hunks, unified rows, side-by-side rows (built on first use)."""

    def __init__(self, path: str, old_text: str | None, new_text: str,
                 pause: Callable[[], object] | None = None) -> None:
        self.path = path
        self.is_new = old_text is None
        self.old_lines = split_lines(old_text)
        self.new_lines = split_lines(new_text)
        self.hunks = group_hunks(diff_opcodes(self.old_lines, self.new_lines, pause))
        self.pause = pause  # (also between the hunks of `unified`; DiffCache drops it once the rows are built)
        self.added = sum(j2 - j1 for h in self.hunks for tag, _, _, j1, j2 in h.opcodes if tag != "equal")
        self.removed = sum(i2 - i1 for h in self.hunks for tag, i1, i2, _, _ in h.opcodes if tag != "equal")
        self._widest: dict[str, int] = {}

    @cached_property
    def unified(self) -> list[Row]:
        """Per hunk: its header, then context, removed and added lines in order (removed before added)."""
        rows: list[Row] = []
        add = rows.append
        old, new = self.old_lines, self.new_lines
        pause = self.pause
        for index, hunk in enumerate(self.hunks):
            if pause is not None:
                pause()  # (2,000 hunks took 50 ms for a 20,000-line edit in the worker, GIL held)
            add(Row("hunk", None, None, hunk.header, index))
            for tag, i1, i2, j1, j2 in hunk.opcodes:
                if tag == "equal":
                    for i, j in zip(range(i1, i2), range(j1, j2)):
                        add(Row("context", i + 1, j + 1, _display(new[j]), index))
                    continue
                for i in range(i1, i2):
                    add(Row("removed", i + 1, None, _display(old[i]), index))
                for j in range(j1, j2):
                    add(Row("added", None, j + 1, _display(new[j]), index))
        return rows

    @cached_property
    def split(self) -> list[SplitRow]:
        """Old on the left, new on the right; a replaced block is paired line by line, the shorter
        side padded with empty cells so later lines stay aligned."""
        rows: list[SplitRow] = []
        add = rows.append
        old, new = self.old_lines, self.new_lines
        for index, hunk in enumerate(self.hunks):
            add(SplitRow(index, None, None, hunk.header))
            for tag, i1, i2, j1, j2 in hunk.opcodes:
                if tag == "equal":
                    for i, j in zip(range(i1, i2), range(j1, j2)):
                        add(SplitRow(index, Cell(i + 1, _display(old[i]), "context"),
                                     Cell(j + 1, _display(new[j]), "context")))
                    continue
                for k in range(max(i2 - i1, j2 - j1)):
                    i, j = i1 + k, j1 + k
                    left = Cell(i + 1, _display(old[i]), "removed") if i < i2 else None
                    right = Cell(j + 1, _display(new[j]), "added") if j < j2 else None
                    add(SplitRow(index, left, right))
        return rows

    @cached_property
    def unified_starts(self) -> list[int]:
        """Row index of each hunk's header in `unified` (for next/previous hunk)."""
        return [i for i, row in enumerate(self.unified) if row.kind == "hunk"]

    @cached_property
    def split_starts(self) -> list[int]:
        """Row index of each hunk's header in `split`."""
        return [i for i, row in enumerate(self.split) if row.header is not None]

    def widest(self, mode: str) -> int:
        """The longest row text of a mode, in characters (for horizontal scrolling); computed once."""
        widest = self._widest.get(mode)
        if widest is None:
            if mode == "split":
                texts = (cell.text for row in self.split for cell in (row.left, row.right) if cell)
            else:
                texts = (row.text for row in self.unified if row.kind != "hunk")
            widest = self._widest[mode] = max(map(len, texts), default=0)
        return widest

    def rows(self, mode: str) -> list[Row] | list[SplitRow]:
        return self.split if mode == "split" else self.unified

    def hunk_starts(self, mode: str) -> list[int]:
        return self.split_starts if mode == "split" else self.unified_starts


def apply_hunk_revert(old_text: str | None, new_text: str, hunk_index: int) -> str:
    """The new text with one hunk put back to the old lines, the others kept: what "reject this
    change" writes back. Raises IndexError for a hunk that does not exist."""
    diff = FileDiff("", old_text, new_text)
    hunk = diff.hunks[hunk_index]
    new = diff.new_lines
    return "".join(new[: hunk.new_start] + diff.old_lines[hunk.old_start : hunk.old_end] + new[hunk.new_end :])
