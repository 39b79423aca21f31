"""Tests line_memo: rows styled once per line of content draw exactly what Textual's own styling draws.

The transcript and its scrollbar skip Textual's per-frame styling of rows already styled; every test here
compares what they draw with what a plain Textual StylesCache (or a plain ScrollBar) draws for the same
state, through the states that change a row's styling: scrolling, the thumb's size and position, hover,
a drag, a theme, a width, a selection, a search.
"""

from __future__ import annotations

from textual._styles_cache import StylesCache
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.geometry import Offset, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rat_tui.ui.textual_ext.line_memo import LeanScrollBar, MemoStylesCache, lean_vertical_scrollbar
from rat_tui.ui.widgets.transcript import Transcript

from .helpers.app import transcript_flushed, until

ANSWER = (
    "## Step {i}\n\n"
    "Read the *config* with `paths` and [a link](https://example.com/{i}).\n\n"
    "- one item\n- another **item**\n\n"
    "```python\ndef f{i}(x):\n    return x * {i}\n```\n\n"
)


class Lines(ScrollView):
    """A line-API view of 2,000 rows: Textual's scrollbar, or (Lean) the lean one."""

    DEFAULT_CSS = "Lines { width: 1fr; height: 1fr; }"

    def on_mount(self) -> None:
        self.virtual_size = Size(40, 2000)

    def render_line(self, y: int) -> Strip:
        return Strip.blank(self.size.width)


class Lean(Lines):
    @property
    def vertical_scrollbar(self):  # type: ignore[override]
        return lean_vertical_scrollbar(self)


class Bars(App):
    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Lines()
            yield Lean()


def drawn(bar) -> list[Strip]:
    """What the compositor gets from the bar: its rows, styled, the app's filters applied."""
    return bar.render_lines(bar.size.region)


async def test_the_lean_scrollbar_draws_what_textuals_draws() -> None:
    app = Bars()
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        plain_view, lean_view = app.query_one(Lines), app.query_one(Lean)
        plain, lean = plain_view.vertical_scrollbar, lean_view.vertical_scrollbar
        assert isinstance(lean, LeanScrollBar) and type(plain) is not LeanScrollBar

        async def same(what: str) -> None:
            await pilot.pause()
            assert plain.size == lean.size, what
            assert drawn(lean) == drawn(plain), what

        for y in (0, 1, 7, 500, 1234.5, 1970, 2000):  # (the thumb's ends drawn to an eighth of a cell)
            plain_view.scroll_to(y=y, animate=False, immediate=True)
            lean_view.scroll_to(y=y, animate=False, immediate=True)
            await same(f"scrolled to {y}")
        for height in (40, 300, 29, 20000):  # the thumb's size; 29: nothing to scroll
            plain_view.virtual_size = lean_view.virtual_size = Size(40, height)
            await same(f"{height} rows")
        plain_view.virtual_size = lean_view.virtual_size = Size(40, 2000)
        plain_view.scroll_to(y=300, animate=False, immediate=True)
        lean_view.scroll_to(y=300, animate=False, immediate=True)
        plain.mouse_over = lean.mouse_over = True
        await same("hovered")
        plain.grabbed = lean.grabbed = Offset(0, 3)
        await same("dragged")
        plain.grabbed = lean.grabbed = None
        plain.mouse_over = lean.mouse_over = False
        await same("let go")
        app.theme = "textual-light"
        await same("another theme")
        plain_view.styles.scrollbar_size_vertical = lean_view.styles.scrollbar_size_vertical = 1
        await same("one cell wide")
        await pilot.resize_terminal(100, 17)
        await same("a smaller terminal")


class TranscriptApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()


async def test_the_transcript_draws_what_textuals_styling_draws_and_styles_a_line_once() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        assert isinstance(transcript._styles_cache, MemoStylesCache)
        transcript.add_entry("a1", "agent")
        transcript.append_text("a1", "".join(ANSWER.format(i=i) for i in range(60)))
        await until(pilot, lambda: transcript_flushed(transcript), "the answer drawn")
        await pilot.pause()

        async def same(what: str) -> None:
            await pilot.pause()
            crop = transcript.size.region
            mine = transcript.render_lines(crop)
            textuals = StylesCache().render_widget(transcript, crop)
            for filter in transcript.get_line_filters():
                textuals = [strip.apply_filter(filter, transcript.background_colors[1]) for strip in textuals]
            assert [strip.text for strip in mine] == [strip.text for strip in textuals], what
            assert mine == textuals, what

        await same("at the end")
        hits = transcript._styles_cache.memo_hits
        for step in (-3, -3, -10, 5, 1):
            transcript.scroll_to(y=transcript.scroll_offset.y + step, animate=False, immediate=True)
            await same(f"scrolled by {step}")
        # Scrolling by a few lines styles only the lines it brings in: the others are found.
        assert transcript._styles_cache.memo_hits > hits
        transcript.search_query = "config"
        transcript.refresh()
        await same("a search")
        transcript.search_query = ""
        app.theme = "textual-light"
        await same("another theme")
        await pilot.resize_terminal(80, 30)
        await same("narrower")
