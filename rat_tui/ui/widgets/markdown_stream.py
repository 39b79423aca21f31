"""Provides the transcript's document model: streamed markdown cut into blocks where markdown-it cuts it,
blocks rendered to the lines Rich gives the whole message, lazy offsets."""

from __future__ import annotations

import io
import re
import threading
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING, Callable

from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from .code_lex import CodeLex

if TYPE_CHECKING:
    from rich.markdown import Markdown
    from rich.syntax import SyntaxTheme

# markdown-it, Rich's markdown and syntax (and Pygments under them) are imported once there is markdown to
# parse or render, or by the warm-up after the first frame: about 40 ms of the launch (markdown_elements.py).

MARKDOWN_KINDS = ("user", "agent", "thought")
GENERIC_COLLAPSE_LINES = 6  # a generic update longer than this starts collapsed to its title
# Long lists and long code are shown as pieces of about this many lines, so the growing end (re-rendered
# as it streams) stays small; each piece is rendered with its list's numbering and its lexer's state, so
# the pieces put together are the block rendered whole.
PIECE_LINES = 8
# A line longer than this (a 10 MB answer with no newline) is cut into plain-text pieces: markdown
# parsing and wrapping are superlinear on one huge paragraph, and only visible pieces get rendered.
LONG_LINE_PIECE = 8000
# While a flood's lines wait to be cut, the end of what arrived is shown from a point where markdown may start
# over (see MarkdownStream.preview), this many lines back at most.
PREVIEW_LINES = 120
# A line that may begin a block parsed on its own, after a blank line: not indented, no list marker or
# quote (they continue a list or quote across a blank line), no HTML or table line, no fence.
_NOT_RESYNC = re.compile(r"[ \t>|<]|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|(?:`{3,}|~{3,})")
_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})")

# A closing fence: up to 3 spaces, the fence characters, then only spaces or tabs (CommonMark).
_CLOSING_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\n?")
_SPACE = re.compile(r"\s+")
_LISTS = ("bullet_list_open", "ordered_list_open")


@dataclass(slots=True, eq=False)
class ListInfo:
    """A top-level list shown as pieces: what every piece needs to number its items as the whole list would."""

    ordered: bool
    start: int
    count: int = 0  # items so far

    @property
    def last_number(self) -> int:
        return self.start + self.count  # as Rich computes it (its number width is one past the last)


@dataclass(slots=True, eq=False)
class Block:
    """One render unit of a streamed message: its source text and how it joins its neighbours.

    kind "md" is whole top-level blocks; "code" a piece of a fenced code block; "list" a piece of a
    top-level list (whole items); "plain" a piece of an over-long line.
    """

    text: str
    lines: int
    chars: int
    kind: str = "md"
    newline_in: bool = False  # Rich puts a blank line before this block (the previous one asked for it)
    first: bool = False  # first visible block of the message: leading blank lines dropped
    tail: bool = False  # the open end of the message: trailing blank lines dropped, then the gap
    last: bool = True  # a plain piece that ends its line (the gap follows)
    lang: str | None = None  # code: the fence's language
    lex: CodeLex | None = None  # code: the lexer states of the piece's whole block
    line: int = 0  # code: the piece's first line in its block
    context: str = ""  # code: the line after the piece (lexers look ahead)
    top: bool = True  # code: the piece that opens the fence; list: the piece with the first item
    bottom: bool = True  # code: the piece that closes the fence
    rest: str = ""  # code tail: what follows the closing fence so far
    list: ListInfo | None = None
    index: int = 0  # list: the list index of the piece's first item
    _norm: str | None = None

    @property
    def plain(self) -> bool:
        return self.kind == "plain"

    @property
    def lexer(self) -> str | None:
        return self.lang if self.kind == "code" else None

    def may_use(self, labels: list[str]) -> bool:
        """Whether the text could use one of these (normalized) link reference labels."""
        if "[" not in self.text:
            return False
        if self._norm is None:
            self._norm = _SPACE.sub(" ", self.text).lower().upper()
        return any(label in self._norm for label in labels)


@dataclass(slots=True)
class Sync:
    """What a `MarkdownStream.sync` changed: blocks now final, link labels newly defined, lists renumbered."""

    done: list[Block]
    labels: list[str]
    relist: list[ListInfo]


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    from .markdown_dispatch import dispatch_block_rules

    # As rich.markdown.Markdown builds it; the block rules tried by a line's first character (same tokens).
    return dispatch_block_rules(MarkdownIt().enable("strikethrough").enable("table"))


@lru_cache(maxsize=1)
def _block_parser():
    from markdown_it import MarkdownIt

    from .markdown_dispatch import dispatch_block_rules

    # Where blocks begin and end, and link definitions, are block-level: the inline rules (half the
    # cost) run only for blocks that get rendered.
    return dispatch_block_rules(MarkdownIt().enable("strikethrough").enable("table").disable(["inline", "text_join"]))


def parse(text: str, refs: dict, *, inline: bool = True) -> tuple[list, dict]:
    """markdown-it tokens of `text`, with the message's link reference definitions known."""
    env = {"references": dict(refs)}
    tokens = (_parser() if inline else _block_parser()).parse(text, env)
    return tokens, env["references"]


def top_blocks(tokens: list) -> list[tuple[int, int, int, int]]:
    """(first token, end token, first line, end line) of each top-level block."""
    blocks = []
    i, n = 0, len(tokens)
    while i < n:
        token = tokens[i]
        j = i + 1
        if token.nesting == 1:
            depth = 1
            while depth:
                depth += tokens[j].nesting
                j += 1
        if token.map is not None:
            blocks.append((i, j, token.map[0], token.map[1]))
        i = j
    return blocks


def _new_line_after(tokens: list, start: bool) -> bool:
    """Rich's `new_line` after rendering `tokens` (whether it puts a blank line before what follows).

    Mirrors the loop of `rich.markdown.Markdown.__rich_console__`: the flag of the last element closed.
    """
    from .markdown_elements import Md, UnknownElement

    new_line = start
    stack = list(reversed(tokens))
    elements, inlines = Md.elements, Md.inlines
    while stack:
        token = stack.pop()
        kind = token.type
        if token.children and not (kind == "fence" or token.tag == "img"):
            stack.extend(reversed(token.children))
            continue
        if kind in ("text", "hardbreak", "softbreak", "link_open", "link_close", "html_inline"):
            continue
        if token.tag in inlines and kind not in ("fence", "code_block"):
            continue
        if token.nesting == -1:
            new_line = (elements.get(kind[: -len("close")] + "open") or UnknownElement).new_line
        elif token.nesting == 0:
            new_line = (elements.get(kind) or UnknownElement).new_line
    return new_line


def _shows_nothing(tokens: list) -> bool:
    """Whether Rich renders these tokens as blank lines only (HTML, empty headings, quotes, list items)."""
    stack = list(tokens)
    while stack:
        token = stack.pop()
        if token.type in ("fence", "code_block", "hr", "table_open", "image"):
            return False
        if token.type in ("text", "code_inline", "inline") and token.content.strip():
            return False  # (the stream parses block-level only: an inline token's content is its source)
        if token.children:
            stack.extend(token.children)
    return True


def _blank(line: list[Segment]) -> bool:
    return all(not seg.text.strip() and not (seg.style and seg.style.bgcolor) for seg in line)


def _lines_after(lines: list[str], start: int, end: int | None = None) -> bool:
    """Whether any line from `start` on (to `end`) has something other than whitespace."""
    return any(lines[i].strip() for i in range(start, len(lines) if end is None else end))


class MarkdownStream:
    """Streamed markdown cut into top-level blocks where markdown-it (the parser Rich uses) puts them.

    `feed` only collects lines (O(chunk)). `sync`, once per batch, parses the open end of the message:
    every top-level block but the last is final and handed out once; the last is the open tail. A
    long list or fenced code block at the tail is handed out in pieces (whole items; lines up to a
    point where the lexer's state is known), parsing and lexing only from the open piece on, so the
    cost of a batch does not grow with the block. Link reference definitions apply to the whole
    message: `sync` reports labels newly defined so blocks already rendered can be rendered again.
    """

    # One per message: a `session/load` replay makes tens of thousands. Slots, not a dict each: an agent
    # entry with its splitter takes 1,174 bytes instead of 2,542, and the splitter is made in 5.4 us, not 8.5.
    __slots__ = ("line_count", "_refs", "_guess", "_merged", "_lines", "_chars", "_partial", "_partial_chars",
                 "_fresh", "_stopped", "_partial_fresh", "_no_list", "_parsed", "_covered", "_done", "_labels", "_relist",
                 "_newline_in", "_first", "_mode", "_fence", "_lang", "_code", "_code_line", "_given", "_top",
                 "_closed", "_scanned", "_list", "_items", "_index", "_pv_at", "_pv_fence", "_pv_base",
                 "_pv_spans", "_pv_safes")

    def __init__(self) -> None:
        self.line_count = 0  # complete source lines seen
        self._refs: dict = {}  # link reference definitions on complete lines (the first of a label wins)
        self._guess: dict = {}  # ... and on the unterminated last line, which may still change
        self._merged: dict | None = None
        self._lines: list[str] = []  # complete lines of the open region
        self._chars = 0
        self._partial: list[str] = []
        self._partial_chars = 0
        self._fresh = False  # complete lines arrived since the last sync
        self._stopped = False  # the last sync stopped at its limit (`behind`)
        self._partial_fresh = False
        self._no_list = False
        self._parsed: list | None = None  # the open region's tokens, when parsed already (its definitions learnt)
        self._covered: int | None = None  # ... of its first lines only (a flood's prefix), or of all of it (None)
        self._done: list[Block] = []  # final blocks not yet handed out
        self._labels: list[str] = []
        self._relist: list[ListInfo] = []
        self._newline_in = False
        self._first = True
        self._mode = "md"
        # code mode: the open fence
        self._fence = ""
        self._lang = "text"
        self._code: CodeLex | None = None
        self._code_line = 0  # the open region's first line in the block
        self._given = 0  # lines of the open region handed to _code
        self._top = True
        self._closed: int | None = None  # index in _lines of the closing fence
        self._scanned = 0
        # list mode: the open list, the first lines of the open piece's items
        self._list: ListInfo | None = None
        self._items: list[int] = []
        self._index = 0
        self._reset_preview_scan()

    def _reset_preview_scan(self) -> None:
        """The preview's scan starts over (`_scan_preview`): the open region's lines scanned for fences so far,
        the fence open there, the lines from which its end may be parsed on its own (PREVIEW_LINES back at most,
        in order: the last is the preview's start), and the fences the scan met, as [opening line, closing line
        or None, fence] numbered from the region's start when the scan began, `_pv_base` lines before the
        region's start now (what a cut needs to keep the scan: _keep_preview_from)."""
        self._pv_at = 0
        self._pv_fence = ""
        self._pv_base = 0
        self._pv_spans: list[list] = []
        self._pv_safes: list[int] = []

    # -- feeding ------------------------------------------------------------------------------

    @property
    def has_tail(self) -> bool:
        return bool(self._lines or self._partial or self._mode != "md")

    @property
    def lines_seen(self) -> int:
        """Source lines so far, counting an unterminated last line."""
        return self.line_count + (1 if self._partial else 0)

    @property
    def tail_size(self) -> tuple[int, int]:
        """(lines, characters) of the open region, kept up to date per chunk for height estimates."""
        return len(self._lines) + (1 if self._partial else 0), self._chars + self._partial_chars

    @property
    def tail_is_code(self) -> bool:
        return self._mode == "code"

    def feed(self, text: str) -> None:
        """Take a chunk: O(chunk), no parsing."""
        start = 0
        while True:
            end = text.find("\n", start)
            if end < 0:
                if start < len(text):
                    self._partial.append(text[start:])
                    self._partial_chars += len(text) - start
                    self._partial_fresh = True
                    if self._partial_chars > LONG_LINE_PIECE:
                        self._cut_long_line()
                return
            if self._partial:
                self._partial.append(text[start : end + 1])
                line = "".join(self._partial)
                self._partial.clear()
                self._partial_chars = 0
            else:
                line = text[start : end + 1]
            self.line_count += 1
            if len(line) > LONG_LINE_PIECE:
                self._close_all()
                for offset in range(0, len(line), LONG_LINE_PIECE):
                    piece = line[offset : offset + LONG_LINE_PIECE]
                    self._done.append(Block(piece, 1, len(piece), "plain", last=offset + LONG_LINE_PIECE >= len(line)))
            else:
                self._lines.append(line)
                self._chars += len(line) - 1
                self._fresh = True
            start = end + 1

    def _cut_long_line(self) -> None:
        """Hand out the open region as it is, then whole pieces of the unterminated line."""
        # Plain pieces hold no link definition: none is guessed on the line (a scan of all of it).
        self._partial_fresh = False
        self._close_all()
        line = "".join(self._partial)
        cut = len(line) - len(line) % LONG_LINE_PIECE
        for offset in range(0, cut, LONG_LINE_PIECE):
            self._done.append(Block(line[offset : offset + LONG_LINE_PIECE], 1, LONG_LINE_PIECE, "plain", last=False))
        rest = line[cut:]
        self._partial = [rest] if rest else []
        self._partial_chars = len(rest)

    def _close_all(self) -> None:
        """Make the open region final as it stands (only before an over-long line: fidelity gives way)."""
        self._advance()
        tail = self.tail(partial=False)
        if tail is not None:
            tail.tail = False
            self._done.append(tail)
        self._set_region([], "md")
        self._newline_in = False
        self._first = False

    def _set_region(self, lines: list[str], mode: str) -> None:
        self._lines = lines
        self._parsed = self._covered = None
        self._reset_preview_scan()
        self._chars = sum(len(line) - 1 for line in lines)
        self._mode = mode

    def _keep_from(self, start: int, mode: str) -> None:
        """The open region from its line `start` on, in `mode`: its size in O(start), not O(region) (a
        flood's batch is cut a prefix at a time, and the rest of it is the region meanwhile)."""
        lines = self._lines
        self._chars -= sum(len(line) - 1 for line in lines[:start])
        self._lines = lines[start:]
        self._parsed = self._covered = None
        self._keep_preview_from(start, mode)
        self._mode = mode

    def _keep_preview_from(self, start: int, mode: str) -> None:
        """The preview's scan, kept for the region from its line `start` on, when it is what a scan of that
        region alone gives: the fence open at `start` is the one such a scan starts with (none, or code mode's
        own). Then the lines after it scan the same. A flood is cut a prefix at a time while it is behind:
        scanned again from the region's start at each cut, a 20,000-chunk answer spent 0.7 s of its 1.5 s
        scanning the same lines (about 1.9 million of them). O(log fences) a cut: the fences met are kept in
        the scan's own numbering (`_pv_base`, the region's first line in it), in order."""
        spans = self._pv_spans
        at = self._pv_base + start
        k = bisect_left(spans, at, key=itemgetter(0))  # spans[:k] opened before `start`
        span = spans[k - 1] if k else None
        open_at_start = span[2] if span is not None and (span[1] is None or span[1] >= at) else ""
        if start > self._pv_at or open_at_start != (self._fence if mode == "code" else ""):
            self._reset_preview_scan()
            return
        self._pv_at -= start
        self._pv_safes = [safe - start for safe in self._pv_safes if safe > start]
        self._pv_base = at
        if k > 1:
            del spans[: k - 1]  # (the one open at `start`, if any, is kept)

    # -- syncing ------------------------------------------------------------------------------

    def sync(self, limit: int | None = None) -> Sync:
        """Parse what arrived since the last sync; return what became final (once per batch).

        With `limit`, a region of more lines than that (a flood's batch) is parsed a prefix of `limit`
        lines at a time, one prefix per sync: the blocks the prefix completes are final (as for any text
        so far), the rest waits for the next sync, and `behind` says so. Where a prefix completes no block
        to hand out (one long paragraph, list item or table), one twice as long is parsed, and so on (at
        worst the whole region, as without a limit): every sync makes progress, at most twice the parse
        that block needs.
        """
        self._advance(limit)
        result = Sync(self._done, self._labels, self._relist)
        self._done, self._labels, self._relist = [], [], []
        return result

    def defer(self, limit: int) -> bool:
        """A flood came in one batch: when more than `limit` lines arrived since the last sync, say so (`behind`)
        without cutting any, so that its end shows as its `preview` first (the next sync cuts as any does).
        Returns `behind`."""
        if self._fresh and self._mode == "md" and len(self._lines) > limit:
            self._stopped = True
        return self._stopped

    @property
    def behind(self) -> bool:
        """The last sync stopped at its limit: lines that arrived are not cut into blocks yet, sync again
        (lines merely fed since a complete sync are not: the tail renders them, as it always did)."""
        return self._stopped

    def _advance(self, limit: int | None = None) -> None:
        if self._mode == "list" and self._partial_fresh:
            self._fresh = True  # an item begun on the unterminated line counts for the numbering
        guess = self._partial_fresh and self._mode != "list"
        self._partial_fresh = False
        while self._fresh:
            self._fresh = False
            if self._mode == "md":
                if self._sync_md(limit):
                    self._stopped = True
                    return  # stopped at the limit: the rest, and the definitions guessed, at the next sync
            elif self._mode == "code":
                self._sync_code()  # (no parse: a regex per line, pieces cut without lexing)
            elif self._sync_list(limit):
                self._stopped = True
                return
        self._stopped = False
        self._no_list = False
        if guess or (self._guess and not self._partial):
            # A definition on the unterminated last line counts for now (the message may end there).
            part = "".join(self._partial)
            if "]:" in part or self._guess:
                lines = self._lines[self._closed + 1 :] if self._mode == "code" and self._closed is not None else \
                    self._lines if self._mode == "md" else []
                _tokens, refs = parse("".join(lines) + part, self._refs, inline=False)
                self._learn(refs, len(lines))

    @property
    def refs(self) -> dict:
        """The message's link reference definitions so far, for rendering any of its blocks."""
        if self._merged is None:
            self._merged = {**self._guess, **self._refs}
        return self._merged

    def _learn(self, refs: dict, complete: int) -> None:
        """Keep the definitions parsed on the first `complete` lines; those after are a guess."""
        guess = {}
        for label, ref in refs.items():
            if label in self._refs:
                continue
            if ref["map"][1] <= complete:
                self._refs[label] = ref
                if self._guess.get(label) != ref:
                    self._labels.append(label)
                self._merged = None
            else:
                guess[label] = ref
        if guess != self._guess:
            self._labels.extend(label for label in guess.keys() | self._guess.keys()
                                if guess.get(label) != self._guess.get(label))
            self._guess = guess
            self._merged = None

    def _emit(self, block: Block) -> None:
        self._done.append(block)

    def _sync_md(self, limit: int | None = None) -> bool:
        """Cut the md region into blocks; True when only a prefix of `limit` lines was parsed (see `sync`)."""
        lines = self._lines
        tokens, self._parsed = self._parsed, None
        covered, self._covered = self._covered, None
        if tokens is not None and covered is not None and limit is None:
            tokens = None  # (parsed under a flood's limit, a prefix: parsed whole here)
        if tokens is not None:
            cut = covered is not None and covered < len(lines)  # tokens of a prefix: go on from it as from ours
            if cut:
                limit = covered
        else:
            cut = limit is not None and len(lines) > limit
        if tokens is None:
            tokens, refs = parse("".join(lines[:limit] if cut else lines), self._refs, inline=False)
            # A definition on the prefix's last line may go on past it: a guess until the next sync.
            self._learn(refs, limit - 1 if cut else len(lines))
        blocks = top_blocks(tokens)
        if cut and (not blocks or (len(blocks) == 1 and not self._opens_mode(tokens, blocks[0]))):
            return self._sync_md(2 * limit)  # no block ends inside the prefix: twice as long a one
        if not blocks:
            if not _lines_after(lines, 0):
                self._set_region([], "md")
            return False
        # Blocks that show nothing (an HTML comment) stay in the tail after the last one that shows
        # something: the blank lines Rich puts around them are trimmed at the message's end.
        keep = len(blocks) - 1
        while keep > 0 and _shows_nothing(tokens[blocks[keep - 1][0] : blocks[keep - 1][1]]):
            keep -= 1
        # A long fenced code block goes through code mode even when it arrived whole: in pieces.
        big = next((k for k in range(keep) if tokens[blocks[k][0]].type == "fence" and tokens[blocks[k][0]].level == 0
                    and blocks[k][3] - blocks[k][2] > 2 * PIECE_LINES + 2 and lines[blocks[k][2]][:1] in ("`", "~")), None)
        if big is not None:
            blocks, keep = blocks[: big + 1], big
        elif cut and keep == 0 and len(blocks) > 1:
            # Only blocks that show nothing before the last: nothing to hand out, so a prefix twice as long
            # (every sync makes progress).
            return self._sync_md(2 * limit)
        for t0, t1, l0, l1 in blocks[:keep]:
            text = "".join(lines[l0:l1])
            block = Block(text, l1 - l0, len(text), "md", newline_in=self._newline_in, first=self._first)
            self._newline_in = _new_line_after(tokens[t0:t1], self._newline_in)
            # A block that shows nothing leaves the message's first line still to come.
            self._first = self._first and _shows_nothing(tokens[t0:t1])
            self._emit(block)
        if keep < len(blocks) - 1:
            self._keep_from(blocks[keep][2], "md")
            if cut:
                self._fresh = True
            return cut
        t0, _t1, l0, _l1 = blocks[-1]
        token = tokens[t0]
        if token.type == "fence" and token.level == 0 and lines[l0][:1] in ("`", "~"):
            self._fence = token.markup
            self._lang = token.info.partition(" ")[0] or "text"
            self._code = CodeLex(_rich_lexer(self._lang))
            self._code_line = self._given = 0
            self._top = True
            self._closed = None
            self._scanned = 0
            self._keep_from(l0 + 1, "code")
            self._fresh = True
        elif token.type in _LISTS and token.level == 0 and not self._no_list:
            self._list = ListInfo(token.type == "ordered_list_open", int(token.attrs.get("start", 1)))
            self._items = [0]
            self._index = 0
            self._top = True
            self._keep_from(l0, "list")
            self._fresh = True
        elif l0:
            self._keep_from(l0, "md")
        if cut:
            self._fresh = True
        return cut

    def _opens_mode(self, tokens: list, block: tuple[int, int, int, int]) -> bool:
        """Whether this block, last in the region, is shown in pieces (a fenced code block, a list)."""
        token = tokens[block[0]]
        if token.level:
            return False
        return (token.type == "fence" and self._lines[block[2]][:1] in ("`", "~")) or \
            (token.type in _LISTS and not self._no_list)

    # code mode

    def _scan_close(self) -> None:
        if self._closed is not None:
            return
        lines = self._lines
        char, length = self._fence[0], len(self._fence)
        for i in range(self._scanned, len(lines)):
            match = _CLOSING_FENCE.fullmatch(lines[i])
            if match and match.group(1)[0] == char and len(match.group(1)) >= length:
                self._closed = i
                break
        self._scanned = len(lines)

    def _code_block(self, text: str, **kw) -> Block:
        return Block(text, text.count("\n"), len(text), "code", newline_in=self._newline_in and self._top,
                     first=self._first and self._top, lang=self._lang, lex=self._code, line=self._code_line, top=self._top,
                     **kw)

    def _sync_code(self) -> None:
        self._scan_close()
        lines = self._lines
        code = self._code
        end = len(lines) if self._closed is None else self._closed
        if code.kind is not None:
            # Cut pieces off the front as lines come, without lexing: CodeLex learns the lexer's states
            # a slice at a time, and a piece's render lexes it from them.
            code.add(lines[self._given : end])
            self._given = end
            start = 0
            while end - start > PIECE_LINES and _lines_after(lines, start + PIECE_LINES, end):
                cut = start + PIECE_LINES
                self._emit(self._code_block("".join(lines[start:cut]), context=lines[cut], bottom=False))
                self._code_line += PIECE_LINES
                self._top = False
                self._first = False
                start = cut
            if start:
                self._keep_from(start, "code")
                self._given -= start
                self._scanned -= start
                if self._closed is not None:
                    self._closed -= start
                lines = self._lines
        if self._closed is not None:
            if not _lines_after(lines, self._closed + 1):
                return  # the closed fence stays the tail until something follows it
            self._emit(self._code_block("".join(lines[: self._closed])))
            self._newline_in = True
            self._first = False
            self._keep_from(self._closed + 1, "md")
            self._fresh = True
            return

    # list mode

    def _list_block(self, lines: list[str], count: int, tail: bool = False) -> Block:
        text = "".join(lines)
        block = Block(text, len(lines), len(text), "list", newline_in=self._newline_in, first=self._first and self._top,
                      top=self._top, list=self._list, index=self._index, tail=tail)
        return block

    def _renumber(self, count: int) -> None:
        info = self._list
        width = len(str(info.last_number))
        info.count = count
        if info.ordered and len(str(info.last_number)) != width:
            self._relist.append(info)

    def _sync_list(self, limit: int | None = None) -> bool:
        """Cut finished items into pieces; True when only a prefix of `limit` lines (from the open piece's
        last item) was parsed (see `sync`): what it completes is final, as for any lines so far."""
        lines = self._lines
        last = self._items[-1]
        cut = limit is not None and len(lines) - last > limit
        end_line = last + limit if cut else len(lines)
        complete = end_line - last
        for partial in ("",) if cut else ("".join(self._partial), ""):
            tokens, refs = parse("".join(lines[last:end_line]) + partial, self._refs, inline=False)
            blocks = top_blocks(tokens)
            if blocks and tokens[blocks[0][0]].type in _LISTS and blocks[0][2] == 0:
                break
            # The unterminated line may make something else of the item (an underline, a rule).
        else:
            # Not the list it was (not seen: a list parsed from one of its items is that list).
            self._keep_from(0, "md")
            self._no_list = True
            self._fresh = True
            return False
        t0, t1, _l0, l1 = blocks[0]
        starts = [t.map[0] for t in tokens[t0:t1] if t.type == "list_item_open" and t.level == 1]
        ended = len(blocks) > 1 and blocks[1][2] < complete
        if cut and not ended and len(starts) < 2:
            return self._sync_list(2 * limit)  # the open item goes on past the prefix: twice as long a one
        # (cut: a definition on the prefix's last line may go on past it, a guess until the next sync)
        self._learn(refs, complete - 1 if cut else complete)
        items = self._items[:-1] + [last + s for s in starts]
        if ended:
            items = [i for i in items if i < last + l1]
        self._renumber(self._index + len(items))
        final = [i for i in items if i < end_line]  # items starting at a complete line
        if ended:
            end = last + l1
            self._emit(self._list_block(lines[:end], len(items)))
            self._newline_in = True
            self._first = self._first and self._top and _shows_nothing(tokens[t0:t1])
            self._keep_from(end, "md")
            if not partial and (not cut or complete > l1):
                # What follows the list was parsed with it, from a top-level boundary: its tokens are what
                # parsing it alone gives (a flood's whole batch can follow a list's end: not parsed twice).
                # Under a flood's limit they are those of a prefix (the rest of the one parsed here), and
                # _sync_md goes on from them as from a prefix of its own: each list of the 20,000-chunk
                # answer had that prefix parsed twice, a third more parsing than the answer's length.
                rest = tokens[t1:]
                for token in rest:
                    if token.map is not None:
                        token.map = [token.map[0] - l1, token.map[1] - l1]
                self._parsed = rest
                self._covered = complete - l1 if cut else None
            self._fresh = True
            return cut
        self._items = final
        # Hand out finished items as pieces of at least PIECE_LINES lines (final[0] is the region's start).
        start = 0
        for k in range(1, len(final)):
            if final[k] - final[start] >= PIECE_LINES:
                self._emit(self._list_block(lines[final[start] : final[k]], k - start))
                self._top = False
                self._first = False
                self._index += k - start
                start = k
        if start:
            end = final[start]
            self._items = [i - end for i in final[start:]]
            self._keep_from(end, "list")
        if cut:
            self._fresh = True  # the rest of the region at the next sync
        return cut

    # -- the tail -----------------------------------------------------------------------------

    def preview(self, lines: int = 0) -> Block | None:
        """The end of an open region not cut yet (`behind`: a flood), from a line where markdown may start over
        (`preview_from`: `lines` back at least where there is one), for showing while the region waits to be
        cut; None when there is no such line (then nothing is shown until it is cut, as before). Shown in place
        of the cut blocks, it is what they render to but where a definition or a construct before that line
        reaches past it; the cut replaces it."""
        start = self.preview_from(lines)
        if start < 0:
            return None
        part = "".join(self._partial)
        text = "".join(self._lines[start:]) + part
        count = len(self._lines) - start + (1 if part else 0)
        return Block(text, count, len(text) - count, "md", newline_in=True, first=False, tail=True)

    def preview_from(self, lines: int = 0) -> int:
        """The open region's last line where markdown may start over, `lines` before its end or more (the
        nearest such one; else the farthest there is): after a blank line, outside any fence, a line that
        continues no list, quote or indented code and is no HTML or table line; -1 when there is none in its
        last PREVIEW_LINES. A fence opened after it shows as the open code block it is so far. An HTML block
        that spans blank lines (a comment) is not followed: its later lines may show as text until the cut
        replaces the preview. The scan goes on from where it stopped: O(lines new since).

        `lines` (the transcript's height): a preview from the last such line was often a few lines, drawn
        under the question with the screen blank below it until the cut caught up (60-120 ms after the end of
        a 2,000-chunk answer), when the end jumped to the screen's foot."""
        safe = self._scan_preview()
        if safe < 0:
            return -1
        count = len(self._lines)
        if lines > 0 and count - safe < lines:
            far = count - PREVIEW_LINES
            for candidate in reversed(self._pv_safes):
                if candidate < far:
                    break
                safe = candidate
                if count - candidate >= lines:
                    break
        return -1 if count - safe > PREVIEW_LINES else safe

    def _scan_preview(self) -> int:
        """The region's last safe line for a preview (see `preview_from`), -1 for none, scanned on from where
        the last scan stopped; the safe lines met are kept (`_pv_safes`), PREVIEW_LINES back at most."""
        lines = self._lines
        at, fence, spans, base, safes = self._pv_at, self._pv_fence, self._pv_spans, self._pv_base, self._pv_safes
        if at == len(lines):
            return safes[-1] if safes else -1
        if at == 0:
            fence = self._fence if self._mode == "code" else ""  # (code mode: the region is the fence's inside)
            spans.clear()
            safes.clear()
            self._pv_base = base = 0
            if fence:
                spans.append([-1, None, fence])
        blank = at == 0 or not lines[at - 1].strip()
        for i in range(at, len(lines)):
            line = lines[i]
            if fence:
                opened = _FENCE_LINE.match(line)
                if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                        and not line[opened.end():].strip():
                    fence = ""
                    spans[-1][1] = base + i
                blank = False
                continue
            if not line.strip():
                blank = True
                continue
            if blank and i > 0 and not _NOT_RESYNC.match(line):
                safes.append(i)
            opened = _FENCE_LINE.match(line)
            if opened and (opened.group(1)[0] == "~" or "`" not in line[opened.end():]):
                fence = opened.group(1)  # (a backtick fence's info string has no backtick)
                spans.append([base + i, None, fence])
            blank = False
        self._pv_at, self._pv_fence = len(lines), fence
        if safes and safes[0] < len(lines) - PREVIEW_LINES:
            del safes[: bisect_left(safes, len(lines) - PREVIEW_LINES)]  # (too far back to preview from)
        return safes[-1] if safes else -1

    def tail(self, partial: bool = True) -> Block | None:
        """The open region as it stands (joined here, so O(tail), called once per frame at most)."""
        part = "".join(self._partial) if partial else ""
        if self._mode == "code":
            self._scan_close()
            lines = self._lines
            if self._closed is not None:
                block = self._code_block("".join(lines[: self._closed]), tail=True)
                block.rest = "".join(lines[self._closed + 1 :]) + part
            elif part and _CLOSING_FENCE.fullmatch(part) and part.strip()[0] == self._fence[0] \
                    and len(part.strip()) >= len(self._fence):
                block = self._code_block("".join(lines), tail=True)
            else:
                block = self._code_block("".join(lines) + part, tail=True)
            return block
        if self._mode == "list":
            return self._list_block(self._lines + ([part] if part else []), 0, tail=True)
        if not self._lines and not part:
            return None
        text = "".join(self._lines) + part
        lines, chars = self.tail_size
        return Block(text, lines, chars, "md", newline_in=self._newline_in, first=self._first, tail=True)


# -- lexing in pieces ----------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _rich_lexer(name: str):
    """The lexer Rich's code blocks use for a fence's language (looked up once per name, not per block)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=True, tabsize=4)
    except ClassNotFound:
        return get_lexer_by_name("text", stripnl=False, ensurenl=True, tabsize=4)


class _Tokens:
    """Stands in for a lexer: the tokens of one code piece, already lexed."""

    def __new__(cls, tokens: list[tuple]):
        from pygments.lexer import Lexer

        class Replay(Lexer):
            def get_tokens(self, text, unfiltered=False):
                return iter(tokens)

        return Replay(stripnl=False, ensurenl=True, tabsize=4)


# The app's warm-up thread imports markdown-it, Rich's markdown and the lexers after the first frame. From
# when it is planned until it is done, the transcript shows markdown as its source text and cuts nothing
# (`warming`): importing them on the loop meanwhile waited on the import lock behind a thread holding the
# GIL for the ACP models, 100-300 ms with the keys typed meanwhile waiting (20 tabs opened at once).
_warm_planned = False
_warmed = threading.Event()
_warm_lock = threading.Lock()
_warm_waiters: list[Callable[[], None]] = []


def plan_warm_up(planned: bool = True) -> None:
    """A warm-up thread will call `warm_up` soon: until it is done, the loop leaves markdown to it
    (`planned=False`: it will not after all, an app closing before it began)."""
    global _warm_planned
    _warm_planned = planned


def warming() -> bool:
    """A planned warm-up has not imported the markdown parsers yet (show source text, cut nothing)."""
    return _warm_planned and not _warmed.is_set()


def when_warm(callback: Callable[[], None]) -> None:
    """Call `callback` once the warm-up has imported markdown: from the warm-up's thread, or at once."""
    with _warm_lock:
        if not _warmed.is_set():
            _warm_waiters.append(callback)
            return
    callback()


def _warm_done() -> None:
    with _warm_lock:
        _warmed.set()
        waiters = _warm_waiters[:]
        _warm_waiters.clear()
    for callback in waiters:
        try:
            callback()
        except RuntimeError:  # a transcript whose loop is closed (call_soon_threadsafe): the others still hear
            pass


def warm_up() -> None:
    """Build the markdown parsers and the commonest lexers ahead of the first answer."""
    try:
        from . import markdown_elements  # noqa: F401  (Rich's markdown and syntax)

        _parser()
        _block_parser()
        for name in ("python", "text", "bash", "json"):
            _rich_lexer(name)
        # The code themes of the dark and light app themes (Transcript._code_theme): the first code block
        # imported its pygments style on the loop, 50 ms in a stall log while this thread held the GIL.
        for theme in ("monokai", "default"):
            _theme(theme)
    finally:  # failed or not, the loop renders from now on (importing what is missing itself)
        _warm_done()


@lru_cache(maxsize=8)
def _theme(name: str) -> SyntaxTheme:
    from rich.syntax import Syntax

    return Syntax.get_theme(name)


# -- rendering -----------------------------------------------------------------------------------


def markdown(tokens: list, code_theme: str, code_background: str | None = None,
             numbering: tuple[int, int] | None = None) -> Markdown:
    """Rich's Markdown over tokens already parsed (building a markdown-it parser per block is most of its cost)."""
    from .markdown_elements import Md

    md = Md.__new__(Md)
    md.markup = ""
    md.parsed = tokens
    md.code_theme = code_theme
    md.justify = None
    md.style = "none"
    md.hyperlinks = True
    md.inline_code_lexer = None
    md.inline_code_theme = code_theme
    md.code_background = code_background
    md.numbering = numbering
    return md


def _carry() -> list:
    from markdown_it.token import Token

    return [Token("rat_carry", "", 0)]


def _render(console: Console, renderable: RenderableType, width: int) -> list[list[Segment]]:
    return console.render_lines(renderable, console.options.update_width(max(width, 1)), pad=True)


def render_block(
    console: Console,
    block: Block,
    width: int,
    *,
    code_theme: str,
    code_background: str | None,
    refs: dict | None = None,
) -> list[list[Segment]]:
    """Render one block to padded lines of `width` cells: together, the lines Rich gives the whole message."""
    if refs is None:
        refs = {}
    kind = block.kind
    if kind == "plain":
        lines = _render(console, Text(block.text.rstrip("\n")), width)
        if block.last:
            lines.append([Segment(" " * width, Style())])
        return lines
    if kind == "code":
        lines = _render_code(console, block, width, code_theme, code_background)
        if block.rest:
            tokens, _refs = parse(block.rest, refs)
            lines += _render(console, markdown(_carry() + tokens, code_theme, code_background), width)
    elif kind == "list":
        tokens, _refs = parse(block.text, refs)
        info = block.list
        numbering = (info.start + block.index, info.last_number)
        lines = _render(console, markdown(tokens, code_theme, code_background, numbering), width)
        if not block.top and lines and _blank(lines[0]):
            lines = lines[1:]  # Rich's blank line before the list: the first piece has it
    else:
        tokens, _refs = parse(block.text, refs)
        if block.newline_in:
            tokens = _carry() + tokens
        lines = _render(console, markdown(tokens, code_theme, code_background), width)
    if block.first:
        start = 0
        while start < len(lines) and _blank(lines[start]):
            start += 1
        lines = lines[start:]
    if block.tail:
        end = len(lines)
        while end and _blank(lines[end - 1]):
            end -= 1
        del lines[end:]
        lines.append([Segment(" " * width, Style())])
    return lines


def code_waits(block: Block) -> CodeLex | None:
    """The CodeLex a code piece waits on (shown as plain text until its `advance` reaches the piece)."""
    lex = block.lex
    return lex if lex is not None and not (block.top and (block.bottom or block.tail)) and not lex.ready(block.line) \
        else None


def _render_code(console: Console, block: Block, width: int, theme: str, background: str | None) -> list[list[Segment]]:
    from rich.syntax import Syntax

    lexer = _rich_lexer(block.lang or "text")
    closing = block.bottom or block.tail
    code = block.text.rstrip() if closing else block.text[:-1] if block.text.endswith("\n") else block.text
    if not (block.top and closing):
        if code_waits(block):
            lexer = _rich_lexer("text")  # a placeholder, as laid out as the piece: its colours come later
        else:
            processed = (code if code.endswith("\n") else code + "\n").expandtabs(4)  # as Syntax does
            if block.lex.kind == "regex":
                block.lex.advance(until=block.line)
            lexer = _Tokens(block.lex.piece_tokens(block.line, processed, "" if closing else block.context))
    syntax = Syntax(code, lexer, theme=_theme(theme), word_wrap=True, background_color=background,
                    padding=(1 if block.top else 0, 1, 1 if closing else 0, 1))
    lines = _render(console, syntax, width)
    if block.top and block.newline_in:
        lines.insert(0, [Segment(" " * width)])
    return lines


class Rows:
    """Items with a `height`, and their start offsets: appends are O(1), offsets are rebuilt lazily.

    `offs[k]` is the start of item k for every k < len(offs); a height change only truncates `offs`
    after the changed item, so the common case (the last item grows) costs nothing to fix.
    """

    __slots__ = ("items", "offs", "total")

    def __init__(self) -> None:
        self.items: list = []
        self.offs = [0]
        self.total = 0

    def append(self, item) -> None:
        item.index = len(self.items)
        self.items.append(item)
        self.total += item.height

    def changed(self, index: int, delta: int) -> None:
        self.total += delta
        if len(self.offs) > index + 1:
            del self.offs[index + 1 :]

    def start(self, index: int) -> int:
        offs, items = self.offs, self.items
        while len(offs) <= index:
            offs.append(offs[-1] + items[len(offs) - 1].height)
        return offs[index]

    def find(self, y: int) -> int | None:
        """Index of the item covering line `y`, or None past the end."""
        if y < 0 or y >= self.total:
            return None
        offs, items = self.offs, self.items
        while offs[-1] <= y and len(offs) <= len(items):
            offs.append(offs[-1] + items[len(offs) - 1].height)
        return bisect_right(offs, y) - 1


class TreeRows:
    """Rows for many items whose heights change anywhere (a transcript's entries): start offsets in a
    Fenwick tree, so an append, a height change, an item's start and the item at a line each cost
    O(log n), wherever the change was.

    Rows keeps plain offsets and rebuilds them after the item that changed: free when the last item
    grows, but a tool call updated early in a long transcript (a `session/load` replay does that all the
    time) cost a rebuild from there to the end at the next frame: 685,000 offsets rebuilt over the 50,000
    updates of bench/stress.py load50000, about 15% of its frames' time.
    """

    __slots__ = ("items", "tree", "total")

    def __init__(self) -> None:
        self.items: list = []
        self.tree = [0]  # 1-based: tree[i] sums the heights of items (i - lowbit(i), i]
        self.total = 0

    def append(self, item) -> None:
        index = len(self.items)
        item.index = index
        self.items.append(item)
        height = item.height
        self.total += height
        i = index + 1
        tree, j, stop = self.tree, index, i - (i & -i)
        while j > stop:  # the sums of the subtrees this node covers
            height += tree[j]
            j -= j & -j
        tree.append(height)

    def changed(self, index: int, delta: int) -> None:
        self.total += delta
        tree, i, n = self.tree, index + 1, len(self.items)
        while i <= n:
            tree[i] += delta
            i += i & -i

    def start(self, index: int) -> int:
        tree, total = self.tree, 0
        while index > 0:
            total += tree[index]
            index -= index & -index
        return total

    def find(self, y: int) -> int | None:
        """Index of the item covering line `y`, or None past the end."""
        if y < 0 or y >= self.total:
            return None
        tree, n, pos = self.tree, len(self.items), 0
        step = 1 << (n.bit_length() - 1)
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] <= y:
                pos = nxt
                y -= tree[nxt]
            step >>= 1
        return pos


class Seg:
    """A render unit of an entry: its header, one markdown block, a notice line, a renderable."""

    __slots__ = ("role", "block", "open", "height", "strips", "index")

    def __init__(self, role: str, block: Block | None = None, *, open: bool = False) -> None:
        self.role = role
        self.block = block
        self.open = open  # the growing tail of a streamed message: its source lives in the splitter
        self.height = 0
        self.strips: list[Strip] | None = None
        self.index = 0


class Entry(Rows):
    """One transcript entry: `items` are the segments shown (just the header while collapsed)."""

    __slots__ = ("key", "kind", "title", "parts", "newlines", "splitter", "header", "body", "collapsed",
                 "renderable", "index")

    def __init__(self, key: str, kind: str, title: str | None) -> None:
        super().__init__()
        self.key, self.kind, self.title = key, kind, title
        self.parts: list[str] = []
        self.newlines = 0  # counted only for notice/generic, which have no splitter
        self.splitter = MarkdownStream() if kind in MARKDOWN_KINDS else None
        self.header: Seg | None = Seg("header") if kind in ("user", "thought", "generic") else None
        self.body: list[Seg] = []
        self.collapsed = kind == "thought"
        self.renderable: RenderableType | None = None
        self.index = 0

    @property
    def height(self) -> int:
        return self.total

    @property
    def collapsible(self) -> bool:
        return self.kind == "thought" or (self.kind == "generic" and self.newlines >= GENERIC_COLLAPSE_LINES)

    def shown(self) -> list[Seg]:
        head = [self.header] if self.header else []
        return head if self.collapsed else head + self.body

    def estimate(self, seg: Seg, width: int) -> int:
        """A height guess good enough for the scrollbar, in O(1) for blocks; corrected once rendered."""
        role = seg.role
        if role == "md":
            inner = width - (2 if self.kind == "user" else 0)
            if seg.open:
                if self.splitter.behind:
                    return 0  # not cut into blocks yet: its preview (or nothing) is measured as rendered
                lines, chars = self.splitter.tail_size
                return lines + chars // inner + (2 if self.splitter.tail_is_code else 0) + 1
            block = seg.block
            extra = block.newline_in + (block.kind == "code") * (block.top + block.bottom) + (block.kind == "plain") * block.last
            return block.lines + block.chars // inner + extra
        if role == "header":
            return 2 if self.collapsed else 1
        if role == "renderable":
            return seg.height or 3
        text = "".join(self.parts)
        return text.count("\n") + 1 + len(text) // width + 1

    def plain_text(self, width: int) -> str:
        """The entry as plain source text (markdown as written), for copying and tests."""
        text = "".join(self.parts)
        if self.kind == "user":
            return f"You\n{text}"
        if self.kind == "thought":
            return f"Thought\n{text}"
        if self.kind == "generic":
            return f"{self.title or 'Update'}\n{text}"
        if self.kind == "renderable":
            out = io.StringIO()
            Console(file=out, width=width, color_system=None, legacy_windows=False).print(self.renderable)
            return out.getvalue().rstrip("\n")
        return text
