"""Provides the ordered-list item every Markdown render of rat-tui uses: Rich's, with the item's period.

Rich's `ListItem.render_number` prints `1 ` where the source said `1.`. `OrderedItem` prints the delimiter
the source used (`1.` or `1)`), keeping Rich's layout otherwise: the numbers right-aligned to the widest
one, one space before and after, the item's lines indented under its text. The streamed transcript
(`markdown_elements.Md`), the whole-document reference the fidelity tests compare it with, the plan
panel and the subagent card all render through it (`MarkdownWithLists` is Rich's `Markdown` with it).
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import ListItem, Markdown
from rich.segment import Segment


class OrderedItem(ListItem):
    """A list item whose number keeps its delimiter: ` 9. ` and ` 10. ` right-aligned as Rich aligns them."""

    delimiter = "."

    @classmethod
    def create(cls, markdown: Markdown, token) -> OrderedItem:
        item = cls()
        if token.markup in (".", ")"):  # an ordered list's item (a bullet item's markup is its bullet)
            item.delimiter = token.markup
        return item

    def render_number(
        self, console: Console, options: ConsoleOptions, number: int, last_number: int
    ) -> RenderResult:
        # Rich's width is the widest number plus a space each side; the delimiter takes one cell more.
        number_width = len(str(last_number)) + 3
        render_options = options.update(width=options.max_width - number_width)
        lines = console.render_lines(self.elements, render_options, style=self.style)
        number_style = console.get_style("markdown.item.number", default="none")
        new_line = Segment("\n")
        padding = Segment(" " * number_width, number_style)
        numeral = Segment(f"{number}{self.delimiter}".rjust(number_width - 1) + " ", number_style)
        first = True
        for line in lines:
            yield numeral if first else padding
            first = False
            yield from line
            yield new_line


LIST_ELEMENTS = {"list_item_open": OrderedItem}


class MarkdownWithLists(Markdown):
    """Rich's Markdown, its ordered lists numbered `1.` as written."""

    elements = {**Markdown.elements, **LIST_ELEMENTS}
