"""Provides the transcript's document model: streamed markdown cut into blocks, blocks rendered to lines, lazy offsets."""

from __future__ import annotations

import io
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme
from rich.text import Text
from textual.strip import Strip

# A fence opens with 3+ backticks or tildes indented at most 3 spaces (CommonMark).
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_HEADING = re.compile(r" {0,3}#{1,6}(\s|$)")
_LIST_ITEM = re.compile(r"([-*+]|\d{1,9}[.)])\s")
# An open block is cut into pieces this long so the growing tail (re-rendered as it streams) stays
# small: code at any line, tight lists only at a top-level item (rendering is then the same).
MARKDOWN_KINDS = ("user", "agent", "thought")
GENERIC_COLLAPSE_LINES = 6  # a generic update longer than this starts collapsed to its title
CODE_PIECE_LINES = 48
LIST_PIECE_LINES = 48
# A line longer than this (a 10 MB answer with no newline) is cut into plain-text pieces: markdown
# parsing and wrapping are superlinear on one huge paragraph, and only visible pieces get rendered.
LONG_LINE_PIECE = 8000


@dataclass(slots=True)
class Block:
    """One render unit: a markdown block, or a piece of a fenced code block (`lexer` set)."""

    text: str
    lines: int
    chars: int
    lexer: str | None = None
    first: bool = True  # a code piece that opens its fence (top padding)
    last: bool = True  # a code piece that closes its fence (bottom padding and a gap after)
    plain: bool = False  # a piece of an over-long line: shown as plain wrapped text


class MarkdownSplitter:
    """Cuts streamed markdown into blocks at blank lines, headings and fences without re-scanning.

    Each chunk is scanned once; completed blocks are returned by `feed` and never looked at again,
    the growing block is kept as a list of lines and joined only when it is rendered.
    """

    def __init__(self) -> None:
        self.line_count = 0  # complete source lines seen
        self._lines: list[str] = []  # complete lines of the open block (code only, inside a fence)
        self._chars = 0
        self._partial: list[str] = []  # pieces of the current unterminated line
        self._partial_chars = 0
        self._fence: tuple[str, int] | None = None  # (fence char, length) while inside a fence
        self._lexer = "text"
        self._code_first = True

    @property
    def has_tail(self) -> bool:
        return bool(self._lines or self._partial or self._fence)

    @property
    def lines_seen(self) -> int:
        """Source lines so far, counting an unterminated last line."""
        return self.line_count + (1 if self._partial else 0)

    @property
    def tail_size(self) -> tuple[int, int]:
        """(lines, characters) of the open block, kept up to date per chunk for height estimates."""
        return len(self._lines) + (1 if self._partial else 0), self._chars + self._partial_chars

    @property
    def tail_is_code(self) -> bool:
        return self._fence is not None

    def tail(self) -> Block | None:
        """The open block as it stands (joined here, so O(tail), called once per frame at most)."""
        if not self.has_tail:
            return None
        text = "".join(self._lines) + "".join(self._partial)
        lines, chars = self.tail_size
        if self._fence is not None:
            return Block(text, lines, chars, self._lexer, self._code_first, True)
        return Block(text, lines, chars)

    def feed(self, text: str) -> list[Block]:
        """Take a chunk; return the blocks it completed."""
        done: list[Block] = []
        start = 0
        while True:
            end = text.find("\n", start)
            if end < 0:
                if start < len(text):
                    self._partial.append(text[start:])
                    self._partial_chars += len(text) - start
                    if self._partial_chars > LONG_LINE_PIECE:
                        self._cut_long_line(done)
                return done
            if self._partial:
                self._partial.append(text[start : end + 1])
                line = "".join(self._partial)
                self._partial.clear()
                self._partial_chars = 0
            else:
                line = text[start : end + 1]
            self._take_line(line, done)
            start = end + 1

    def _cut_long_line(self, done: list[Block]) -> None:
        """Emit the open block, then whole pieces of the unterminated line; keep the remainder open."""
        self._emit(done, last=False)
        line = "".join(self._partial)
        cut = len(line) - len(line) % LONG_LINE_PIECE
        for offset in range(0, cut, LONG_LINE_PIECE):
            done.append(Block(line[offset : offset + LONG_LINE_PIECE], 1, LONG_LINE_PIECE, last=False, plain=True))
        rest = line[cut:]
        self._partial = [rest] if rest else []
        self._partial_chars = len(rest)

    def _emit(self, done: list[Block], *, last: bool = True) -> None:
        if self._lines or self._fence is not None:
            text = "".join(self._lines)
            if self._fence is not None:
                done.append(Block(text, len(self._lines), self._chars, self._lexer, self._code_first, last))
                self._code_first = False
            else:
                done.append(Block(text, len(self._lines), self._chars))
        self._lines = []
        self._chars = 0

    def _add(self, line: str) -> None:
        self._lines.append(line)
        self._chars += len(line) - 1

    def _take_line(self, line: str, done: list[Block]) -> None:
        self.line_count += 1
        if len(line) > LONG_LINE_PIECE:
            self._emit(done, last=False)
            for offset in range(0, len(line), LONG_LINE_PIECE):
                piece = line[offset : offset + LONG_LINE_PIECE]
                done.append(Block(piece, 1, len(piece), last=offset + LONG_LINE_PIECE >= len(line), plain=True))
            return
        if self._fence is not None:
            match = _FENCE.match(line)
            char, length = self._fence
            if match and match.group(1)[0] == char and len(match.group(1)) >= length and not match.group(2).strip():
                self._emit(done, last=True)
                self._fence = None
                return
            if len(self._lines) >= CODE_PIECE_LINES:
                self._emit(done, last=False)
            self._add(line)
            return
        if not line.strip():
            self._emit(done)
            return
        match = _FENCE.match(line)
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            self._emit(done)
            self._fence = (match.group(1)[0], len(match.group(1)))
            self._lexer = match.group(2).strip().partition(" ")[0] or "text"
            self._code_first = True
            return
        if _HEADING.match(line):
            self._emit(done)
            self._add(line)
            self._emit(done)
            return
        if len(self._lines) >= LIST_PIECE_LINES and _LIST_ITEM.match(line):
            self._emit(done)
        self._add(line)


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt().enable("strikethrough").enable("table")


@lru_cache(maxsize=64)
def _lexer(name: str):
    """Pygments looks lexers up by scanning its registry: once per name, not once per block."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return get_lexer_by_name("text")


def warm_up() -> None:
    """Build the markdown parser and the commonest lexers ahead of the first answer."""
    _parser()
    for name in ("python", "text", "bash", "json"):
        _lexer(name)


@lru_cache(maxsize=8)
def _theme(name: str) -> SyntaxTheme:
    return Syntax.get_theme(name)


def markdown(text: str, code_theme: str) -> Markdown:
    """Rich's Markdown, minus building a new markdown-it parser per block (most of its cost)."""
    md = Markdown.__new__(Markdown)
    md.markup = text
    md.parsed = _parser().parse(text)
    md.code_theme = code_theme
    md.justify = None
    md.style = "none"
    md.hyperlinks = True
    md.inline_code_lexer = None
    md.inline_code_theme = code_theme
    return md


def _is_blank(line: list[Segment]) -> bool:
    return all(not seg.text.strip() and not (seg.style and seg.style.bgcolor) for seg in line)


def render_block(
    console: Console,
    block: Block,
    width: int,
    *,
    code_theme: str,
    code_background: str | None,
) -> list[list[Segment]]:
    """Render one block to padded lines of `width` cells, plus the blank gap that follows it."""
    renderable: RenderableType
    if block.plain:
        renderable = Text(block.text.rstrip("\n"))
    elif block.lexer is not None:
        code = block.text.rstrip("\n") if block.last else block.text[:-1] if block.text.endswith("\n") else block.text
        renderable = Syntax(
            code,
            _lexer(block.lexer),
            theme=_theme(code_theme),
            word_wrap=True,
            background_color=code_background,
            padding=(1 if block.first else 0, 1, 1 if block.last else 0, 1),
        )
    else:
        renderable = markdown(block.text, code_theme)
    lines = console.render_lines(renderable, console.options.update_width(max(width, 1)), pad=True)
    if block.lexer is None and not block.plain:
        # Rich puts blank lines around some elements (lists, tables); our own gap replaces them.
        start, end = 0, len(lines)
        while start < end and _is_blank(lines[start]):
            start += 1
        while end > start and _is_blank(lines[end - 1]):
            end -= 1
        lines = lines[start:end]
    if block.last:
        lines.append([Segment(" " * width, Style())])
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
        self.splitter = MarkdownSplitter() if kind in MARKDOWN_KINDS else None
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
            if seg.open:
                lines, chars = self.splitter.tail_size
                code, first, last = self.splitter.tail_is_code, True, True
            else:
                block = seg.block
                lines, chars, code, first, last = block.lines, block.chars, block.lexer is not None, block.first, block.last
            inner = width - (2 if self.kind == "user" else 0)
            return lines + chars // inner + (first + last if code else 0) + last
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
