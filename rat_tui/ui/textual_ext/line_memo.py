"""Provides MemoLines: a widget's lines styled once per line of content, not once per frame.

Textual styles each line a widget renders (`StylesCache.render_line`: its background, padding, tint, a new
`Strip` with seven caches of its own, then the app's line filters on that new strip) and keeps the result
by row only until the widget refreshes. A scrolled widget refreshes whole, so every frame of a flood
styled all of the transcript's 43 rows again (2-10 ms of a frame in timelines of the diff and chunks2000
workloads), though most had only moved up. And its scrollbar, 43 rows of two cells, took 3.7-5 ms a frame
headless and up to 15 ms in those timelines, as much as the transcript: each row is styled like any other.

`MemoStylesCache` remembers the styled strip of each content row by the identity of the strip the widget
gave for it (the transcript hands out the same `Strip` for a line as long as the line is unchanged, see
`Transcript.render_line`; `LeanScrollBar` interns its rows). It is used only while what styling reads is
the same (width, padding, colours, opacity, theme; see `_context`) and never for a widget with a border,
an outline, a hatch, a tint or a text opacity: those rows go through Textual's own path as before.
"""

from __future__ import annotations

from typing import Any

from rich.color import Color
from rich.segment import Segment
from textual._styles_cache import StylesCache
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.widget import _RenderCache

MEMO_CAP = 256  # styled rows kept per widget, cleared whole beyond it: about five screenfuls


class MemoStylesCache(StylesCache):
    """A StylesCache that styles each content line once (see the module's docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._memo: dict[int, tuple[Strip, Strip]] = {}
        self._memo_context: tuple | None = None
        self.memo_hits = 0  # (tests: the memo is used)

    def render(self, styles: Any, size: Any, base_background: Any, background: Any, render_content_line: Any,
               filters: Any, border_title: Any, border_subtitle: Any, **kwargs: Any) -> list[Strip]:
        titled = border_title is not None or border_subtitle is not None
        context = None if titled else _context(styles, size, base_background, background, kwargs)
        if context != self._memo_context:
            self._memo.clear()
            self._memo_context = context
        return super().render(styles, size, base_background, background, render_content_line, filters,
                              border_title, border_subtitle, **kwargs)

    def render_line(self, styles: Any, y: int, size: Any, content_size: Any, padding: Any, base_background: Any,
                    background: Any, render_content_line: Any, *args: Any) -> Strip:
        if self._memo_context is None:
            return super().render_line(styles, y, size, content_size, padding, base_background, background,
                                       render_content_line, *args)
        top = padding.top
        content_y = y - top
        if content_y < 0 or y >= size.height - padding.bottom or content_y >= content_size.height:
            return super().render_line(styles, y, size, content_size, padding, base_background, background,
                                       render_content_line, *args)
        content = render_content_line(content_y)
        memo = self._memo
        found = memo.get(id(content))
        if found is not None and found[0] is content:
            self.memo_hits += 1
            return found[1]
        strip = super().render_line(styles, y, size, content_size, padding, base_background, background,
                                    lambda _y: content, *args)
        if len(memo) >= MEMO_CAP:
            memo.clear()
        memo[id(content)] = (content, strip)  # (the content kept alive: its id is not reused meanwhile)
        return strip


def _context(styles: Any, size: Any, base_background: Any, background: Any, kwargs: dict) -> tuple | None:
    """What styling a content row reads, or None where a row's styling may depend on more than its content
    (a border or outline on its sides, a hatch, a tint, text opacity): no memo then."""
    if any(edge for edge, _ in styles.border) or any(edge for edge, _ in styles.outline):
        return None
    if styles.tint.a or styles.text_opacity != 1.0 or (styles.has_rule("hatch") and styles.hatch != "none"):
        return None
    padding = kwargs.get("padding") or styles.padding
    content_size = kwargs.get("content_size") or size
    return (size, content_size, tuple(padding), base_background, background, kwargs.get("opacity", 1.0),
            id(kwargs.get("ansi_theme")), kwargs.get("native_ansi", False))


class MemoLines:
    """Mixin for a Widget (before it in the bases): its rows styled through a MemoStylesCache."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._styles_cache = MemoStylesCache()


class LeanScrollBar(MemoLines, ScrollBar):
    """A vertical ScrollBar whose rows are Textual's, rendered once per kind of row: a bar has three or four
    (the track above and below the thumb, the thumb, its ends drawn to an eighth of a cell).

    Textual renders the bar's renderable anew at each refresh (50 new `Strip`s, 3.7 ms a frame headless with
    the styling of each), and a scrolled view refreshes its bar at every move. Here each row is the one
    Textual rendered for the same segment of `ScrollBarRender.render_bar` (the bar's row `i` is its segment
    `i`), learnt from a whole render when a segment is new; the same objects each time, so each kind is also
    styled once (MemoStylesCache)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._known: dict[Segment, Strip] = {}
        self._known_context: tuple | None = None

    def _bar(self) -> tuple[tuple, list[Segment]] | None:
        """What every row depends on besides its segment, and the segments of the bar drawn now; None when
        not a plain vertical bar (rendered by Textual then)."""
        bar = self.render()
        if type(bar) is not ScrollBarRender or not self.vertical or self.text_selection is not None:
            return None
        width, height = self.size
        style = self.app.console.get_style(bar.style)
        segments = bar.render_bar(size=height, virtual_size=bar.virtual_size, window_size=bar.window_size,
                                  position=bar.position, thickness=width, vertical=True,
                                  back_color=style.bgcolor or Color.parse("#555555"),
                                  bar_color=style.color or Color.parse("bright_magenta"))
        return (width, self.visual_style, style, self.styles.content_align), segments.segments

    def _render_content(self) -> None:
        drawn = self._bar()
        if drawn is not None:
            context, segments = drawn
            if context != self._known_context:
                self._known.clear()
                self._known_context = context
            known = self._known
            rows = [known.get(segment) for segment in segments]
            if None not in rows:
                self._render_cache = _RenderCache(self.size, rows)  # type: ignore[arg-type]
                self._dirty_regions.clear()
                return
        super()._render_content()
        if drawn is not None and len(self._render_cache.lines) == len(drawn[1]):
            if len(self._known) > 64:
                self._known.clear()
            for segment, row in zip(drawn[1], self._render_cache.lines):
                self._known.setdefault(segment, row)
            self._render_cache = _RenderCache(self.size, [self._known[segment] for segment in drawn[1]])


def lean_vertical_scrollbar(widget: Any) -> ScrollBar:
    """What `Widget.vertical_scrollbar` does (textual 8.2.8, pinned), with a LeanScrollBar."""
    if widget._vertical_scrollbar is not None:
        return widget._vertical_scrollbar
    widget._vertical_scrollbar = scroll_bar = LeanScrollBar(vertical=True, name="vertical",
                                                           thickness=widget.scrollbar_size_vertical)
    scroll_bar.display = False
    widget.app._start_widget(widget, scroll_bar)
    return scroll_bar
