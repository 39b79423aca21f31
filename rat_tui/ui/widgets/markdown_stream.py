"""Provides MarkdownSplitter (streamed markdown -> blocks in O(new text)) and render_block (a block -> Strips)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme

# A fence opens with 3+ backticks or tildes indented at most 3 spaces (CommonMark).
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_HEADING = re.compile(r" {0,3}#{1,6}(\s|$)")
_LIST_ITEM = re.compile(r"([-*+]|\d{1,9}[.)])\s")
# An open block is cut into pieces this long so the growing tail (re-rendered as it streams) stays
# small: code at any line, tight lists only at a top-level item (rendering is then the same).
CODE_PIECE_LINES = 48
LIST_PIECE_LINES = 48


@dataclass(slots=True)
class Block:
    """One render unit: a markdown block, or a piece of a fenced code block (`lexer` set)."""

    text: str
    lines: int
    chars: int
    lexer: str | None = None
    first: bool = True  # a code piece that opens its fence (top padding)
    last: bool = True  # a code piece that closes its fence (bottom padding and a gap after)


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
    if block.lexer is not None:
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
    if block.lexer is None:
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
