"""Provides `Md`: Rich's Markdown as the transcript renders a block (markdown_stream.render_block).

Its own module so that the transcript's module does not import Rich's markdown and syntax (markdown-it and
Pygments under them, about 40 ms) before the first frame: markdown_stream imports this one when a block is
first rendered, or the warm-up does after the first frame (tests/test_startup_imports.py).
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, ListElement, Markdown, MarkdownElement, UnknownElement
from rich.syntax import Syntax

from .markdown_lists import LIST_ELEMENTS
from .markdown_stream import _rich_lexer, _theme

__all__ = ["Md", "UnknownElement"]


class _Carry(MarkdownElement):
    """A token that renders nothing and leaves Rich's `new_line` set: the previous block asked for a gap."""

    new_line = True


class _CodeBlock(CodeBlock):
    """Rich's code block, with the transcript's background and a lexer looked up once."""

    @classmethod
    def create(cls, markdown: Markdown, token) -> CodeBlock:
        block = super().create(markdown, token)
        block.background = getattr(markdown, "code_background", None)
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        yield Syntax(code, _rich_lexer(self.lexer_name), theme=_theme(self.theme), word_wrap=True, padding=1,
                     background_color=self.background)


class _ListElement(ListElement):
    """Rich's list; a top-level list shown in pieces numbers its items as the whole list."""

    @classmethod
    def create(cls, markdown: Markdown, token) -> ListElement:
        element = super().create(markdown, token)
        element.numbering = getattr(markdown, "numbering", None) if token.level == 0 else None
        return element

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.numbering is None or self.list_type == "bullet_list_open":
            yield from super().__rich_console__(console, options)
            return
        number, last_number = self.numbering
        last_number = max(last_number, number + len(self.items))
        for index, item in enumerate(self.items):
            yield from item.render_number(console, options, number + index, last_number)


class Md(Markdown):
    elements = {**Markdown.elements, **LIST_ELEMENTS, "fence": _CodeBlock, "code_block": _CodeBlock,
                "bullet_list_open": _ListElement, "ordered_list_open": _ListElement, "rat_carry": _Carry}
