"""Streams a markdown document through the transcript's document model and compares it with Rich.

`streamed` follows the protocol of `Transcript` (ui/widgets/transcript.py): feed every chunk, sync
once per batch, hand final blocks to their own cached lines, drop the cached lines of blocks a new
link definition or a renumbered list concerns, render the open tail at frame points. `reference` is
Rich's `Markdown` rendered whole at the same width (with the ordered-list item the transcript uses, which
keeps the number's period: ui/widgets/markdown_lists.py). Both trim the blank lines at the message's ends
(the transcript's own gap separates entries).
"""

from __future__ import annotations

import io
import random

from rich.console import Console
from rich.segment import Segment

from rat_tui.ui.widgets.markdown_lists import MarkdownWithLists
from rat_tui.ui.widgets.markdown_stream import Block, MarkdownStream, render_block

WIDTH = 80
THEME = "monokai"


def console() -> Console:
    return Console(file=io.StringIO(), width=WIDTH, color_system="truecolor", force_terminal=True,
                   legacy_windows=False)


def _blank(line: list[Segment]) -> bool:
    return all(not seg.text.strip() and not (seg.style and seg.style.bgcolor) for seg in line)


def _norm(line: list[Segment]) -> tuple:
    return tuple((seg.text, seg.style) for seg in Segment.simplify(line) if seg.text)


def reference(con: Console, doc: str) -> list[tuple]:
    lines = con.render_lines(MarkdownWithLists(doc, code_theme=THEME), con.options.update_width(WIDTH), pad=True)
    start, end = 0, len(lines)
    while start < end and _blank(lines[start]):
        start += 1
    while end > start and _blank(lines[end - 1]):
        end -= 1
    return [_norm(line) for line in lines[start:end]]


def streamed(con: Console, chunks: list[str], frames: set[int] | None = None, limit: int | None = None) -> list[tuple]:
    """The message's lines once every chunk is in; the tail is also rendered after the chunks in `frames`
    (all of them when None), as frames would, so what a render caches is exercised. With `limit`, each
    sync parses at most a prefix of that many lines, as the transcript's flushes do under a flood (one
    sync per chunk, the tail not rendered while the stream is behind, syncs at the end until caught up)."""
    stream = MarkdownStream()
    cache: list[list] = []  # [block, lines or None]

    def render(block: Block) -> list[list[Segment]]:
        return render_block(con, block, WIDTH, code_theme=THEME, code_background=None, refs=stream.refs)

    def sync() -> None:
        result = stream.sync(limit)
        if result.labels or result.relist:
            for item in cache:
                block = item[0]
                if block.may_use(result.labels) or (block.list is not None and block.list in result.relist):
                    item[1] = None
        for block in result.done:
            cache.append([block, render(block)])

    for n, chunk in enumerate(chunks):
        stream.feed(chunk)
        sync()
        if (frames is None or n in frames) and not stream.behind:
            tail = stream.tail()
            if tail is not None:
                render(tail)
    sync()
    while stream.behind:
        sync()
    out: list[list[Segment]] = []
    for item in cache:
        if item[1] is None:
            item[1] = render(item[0])
        out += item[1]
    tail = stream.tail()
    if tail is not None:
        out += render(tail)[:-1]  # less the gap before the next entry
    return [_norm(line) for line in out]


def chunkings(doc: str, seed: int = 16) -> dict[str, list[str]]:
    rnd = random.Random(seed)
    pieces, i = [], 0
    while i < len(doc):
        size = rnd.randint(1, 40)
        pieces.append(doc[i : i + size])
        i += size
    return {
        "1 char": list(doc),
        "7 chars": [doc[i : i + 7] for i in range(0, len(doc), 7)],
        "random": pieces,
        "line by line": doc.splitlines(keepends=True),
    }


def line_ends(chunks: list[str]) -> set[int]:
    """Frames after the chunks that end a line (a frame per character would be far faster than any agent)."""
    return {n for n, chunk in enumerate(chunks) if chunk.endswith("\n")}


def first_difference(want: list[tuple], got: list[tuple]) -> str:
    for i, (a, b) in enumerate(zip(want, got)):
        if a != b:
            return f"line {i}:\n  Rich:     {''.join(t for t, _ in a)!r}\n  streamed: {''.join(t for t, _ in b)!r}"
    return f"{len(want)} lines from Rich, {len(got)} streamed"
