"""Provides TranscriptRendering: how the transcript turns its blocks into styled lines (a mixin of Transcript)."""

from __future__ import annotations

import asyncio
import time

from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ... import priority
from ..flush_pacer import HIDDEN_FLUSH_GAP
from ..loop_hop import from_any_thread
from . import markdown_stream
from .markdown_stream import Block, Entry, Seg, code_waits, render_block

SEVERITIES = ("info", "warning", "error")
NOTICE_ICONS = {"info": "ℹ", "warning": "⚠", "error": "✗"}
# Until the app's warm-up has imported markdown (markdown_stream.warming), markdown shows as its source text
# and nothing is cut into blocks; the warm-up's end calls the transcript back (no polling: a redraw every
# few ms at startup delayed `ready` on screen).
SOURCE_TEXT_CAP = 20_000  # characters of one block's source text shown meanwhile (its end, for a tail)
RENDER_BUDGET = 0.010  # seconds of block rendering per frame; the rest shows as source text, then catches up
RENDERED_SEGMENT_CAP = 2000  # rendered blocks kept; older ones drop their lines (not their height)
LEX_REDRAWS = 2  # code pieces drawn again with their colours per turn of the lexing
USER_BAR = "▌ "


class TranscriptRendering:
    """Rendering of Transcript's segments: each rendered once per width and kept (`strips`), source text while
    the warm-up imports markdown, long code coloured a slice at a time (`_lex_tick`), styles computed once."""

    def _highlight_matches(self, strip: Strip, content_y: int) -> Strip:
        text = strip.text.lower()
        needle = self.search_query
        component = "transcript--search-current" if content_y == self.search_line else "transcript--search-match"
        start = text.find(needle)
        while start >= 0:
            strip = self._highlight(strip, start, start + len(needle), component)
            start = text.find(needle, start + len(needle))
        return strip

    def _marker(self, strip: Strip, width: int) -> Strip:
        label = " ▼ new content below · End "
        style = self.get_component_rich_style("transcript--new-below")
        start = max(0, width - len(label) - 1)
        marker = Strip([Segment(label[: width - start], style)])
        return Strip.join([strip.crop(0, start), marker, strip.crop(start + marker.cell_length, width)])

    def _highlight(self, strip: Strip, start: int, end: int, component: str) -> Strip:
        style = self.screen.get_component_rich_style(component) if component.startswith("screen") \
            else self.get_component_rich_style(component)
        middle = Strip([Segment(text, (seg_style or Style()) + style, control)
                        for text, seg_style, control in strip.crop(start, end)])
        return Strip.join([strip.crop(0, start), middle, strip.crop(end, strip.cell_length)])

    def _base(self) -> Style:
        """The widget's own style; computing it walks the DOM, so once per style change."""
        base = self._base_style
        if base is None:
            base = self._base_style = self.rich_style
        return base

    def _placeholder(self, entry: Entry, seg: Seg, line: int) -> Strip:
        """A not-yet-rendered line shown as its source text; a refresh soon renders it properly."""
        if not self._catch_up_pending:
            self._catch_up_pending = True
            self.set_timer(RENDER_BUDGET, self._catch_up)
        block = seg.block if seg.role == "md" and not seg.open else None
        source = block.text.splitlines() if block is not None else []
        text = source[line] if line < len(source) else ""
        width = self.size.width
        return Strip([Segment(text[:width], self._base())], min(len(text), width)).crop_extend(0, width, self._base())

    def _source_strips(self, entry: Entry, seg: Seg, width: int) -> list[Strip]:
        """While the warm-up imports markdown: the segment's source text, wrapped, kept nowhere (wrapped
        again each frame until then; rendered properly when the warm-up calls back, `wait_warm`)."""
        self.wait_warm()
        block = entry.splitter.tail() if seg.open else seg.block
        text = block.text.rstrip("\n")[-SOURCE_TEXT_CAP:] if block is not None else ""
        base = self._base()
        if entry.kind != "user":
            return [Strip(line, width).apply_style(base) for line in self._lines(Text(text), width)]
        bar = Segment(USER_BAR, self._style("transcript--user-bar"))
        return [Strip([bar, *line], width).apply_style(base) for line in self._lines(Text(text), max(width - 2, 1))]

    def wait_warm(self) -> None:
        """Flush and render again once the warm-up has imported markdown (called back from its thread)."""
        if self._warm_waiting:
            return
        self._warm_waiting = True

        def warm() -> None:
            self._warm_waiting = False
            if self.is_mounted:
                self._schedule()  # cuts what waited, and renders what showed as source text

        markdown_stream.when_warm(from_any_thread(warm))  # (in the app's context: _schedule may start a timer)

    def _catch_up(self) -> None:
        self._catch_up_pending = False
        self._settle()

    # -- rendering ------------------------------------------------------------------------------

    def _estimate(self, entry: Entry, seg: Seg) -> int:
        return entry.estimate(seg, max(self._width or 80, 10))

    @property
    def warming(self) -> bool:
        return not self._forced and markdown_stream.warming()

    def strips(self, entry: Entry, seg: Seg) -> list[Strip]:
        """The segment's lines at the current width, rendering (and fixing its height) if needed."""
        strips = seg.strips
        if strips is not None:
            self._rendered.move_to_end(seg)
            return strips
        width = self._width or 80
        if seg.role == "md" and self.warming:
            return self._source_strips(entry, seg, width)
        self.render_count += 1
        # Styled once here, not per frame in render_line: a Strip costs several caches to build.
        base = self._base()
        strips = [Strip(line, width).apply_style(base) for line in self._render_seg(entry, seg, width)]
        seg.strips = strips
        self._rendered[seg] = None
        self._rendered.move_to_end(seg)
        if len(self._rendered) > RENDERED_SEGMENT_CAP:
            old, _ = self._rendered.popitem(last=False)
            old.strips = None  # its height stays exact for this width
        if len(strips) != seg.height:
            self._set_height(entry, seg, len(strips))
            if not self._settling:  # found mid-frame: fix it next turn
                self.pacer.flush_soon()
        return strips

    # Not `_render`: Textual's Widget._render (which get_selection calls) must stay Textual's.
    def _render_seg(self, entry: Entry, seg: Seg, width: int) -> list[list[Segment]]:
        console = self.app.console
        role = seg.role
        if role == "md":
            if seg.open and entry.splitter.behind:
                # Lines not cut into blocks yet (maybe thousands in a flood): their end, from where markdown
                # may start over (a screenful back once the agent has paused: _preview_lines), else nothing
                # until they are cut.
                block = entry.splitter.preview(self._preview_lines())
                if block is not None:
                    self._previews[seg] = block.text
            else:
                self._previews.pop(seg, None)
                block = entry.splitter.tail() if seg.open else seg.block
            if block is None:
                return []
            inner = width - 2 if entry.kind == "user" else width
            lines = render_block(console, block, inner, code_theme=self._code_theme(),
                                 code_background=self._code_background(), refs=entry.splitter.refs)
            if block.kind == "code" and code_waits(block) is not None:
                self._wait_lexing(seg, block)
            if entry.kind == "user":
                bar = Segment(USER_BAR, self._style("transcript--user-bar"))
                last = len(lines) - 1 if block.tail or (block.plain and block.last) else len(lines)
                return [[bar, *line] if i < last else [Segment(" " * width)] for i, line in enumerate(lines)]
            if entry.kind == "thought":
                post = self._style("transcript--thought")
                return [list(Segment.apply_style(line, post_style=post)) for line in lines]
            return lines
        if role == "header":
            return self._render_header(entry, width)
        if role == "notice":
            severity = entry.title if entry.title in SEVERITIES else "info"
            prefix = "" if entry.title in SEVERITIES or not entry.title else f"{entry.title}: "
            text = Text(f"{NOTICE_ICONS[severity]} {prefix}{''.join(entry.parts)}",
                        style=self._style(f"transcript--notice-{severity}"))
            return self._lines(text, width) + [[Segment(" " * width)]]
        if role == "generic":
            text = Text("".join(entry.parts), style=self._style("transcript--generic"))
            return self._lines(text, width) + [[Segment(" " * width)]]
        return self._lines(entry.renderable or Text(""), width) + [[Segment(" " * width)]]

    def _wait_lexing(self, seg: Seg, block: Block) -> None:
        self._lexing[seg] = block
        if not self._lex_pending:
            self._lex_pending = True
            self.call_later(self._lex_tick)

    def _lex_tick(self) -> None:
        """One slice more of the lexing long code blocks wait on (a turn of the loop each: keys go between);
        the pieces it reached are drawn again with their colours."""
        self._lex_pending = False
        if not self._lexing or not self.is_attached:  # (woken after its removal: nothing to colour)
            return
        wait = priority.input_wait()
        if wait:  # a key on its way to the screen goes first (its slice and redraws are slow)
            self._lex_pending = True
            priority.call_after_input(asyncio.get_running_loop(), wait, self._lex_tick)
            return
        if self.in_background:
            self._lex_pending = True
            self.set_timer(HIDDEN_FLUSH_GAP, self._lex_tick)
            return
        started = time.perf_counter()
        for lex in {block.lex for block in self._lexing.values()}:
            lex.advance()
        reached = [seg for seg, block in self._lexing.items() if code_waits(block) is None][:LEX_REDRAWS]
        for seg in reached:
            del self._lexing[seg]
            seg.strips = None
            self._rendered.pop(seg, None)
        if reached:
            self._settle()
        if self._lexing and not self._lex_pending:
            self._lex_pending = True
            # A timer, not call_later: a widget's own queue never yields to the loop (keys would wait).
            # While a stream comes in, its text first: lexing takes a third of the loop at most.
            spent = time.perf_counter() - started
            self.set_timer(max(2 * spent, 0.002) if self.pacer.streaming() else 0.001, self._lex_tick)

    def _render_header(self, entry: Entry, width: int) -> list[list[Segment]]:
        if entry.kind == "user":
            text = Text("You", style=self._style("transcript--user-header"))
        else:
            style_name = "transcript--thought" if entry.kind == "thought" else "transcript--generic"
            label = "Thought" if entry.kind == "thought" else (entry.title or "Update")
            if entry.collapsible and entry.collapsed:
                count = entry.splitter.lines_seen if entry.splitter else entry.newlines + 1
                label = f"▸ {label} ({count} line{'s' if count != 1 else ''})"
            elif entry.collapsible:
                label = f"▾ {label}"
            text = Text(label, style=self._style(style_name), no_wrap=True, overflow="ellipsis")
        lines = self._lines(text, width)[:1]
        if entry.collapsed:
            lines.append([Segment(" " * width)])
        return lines

    def _lines(self, renderable: RenderableType, width: int) -> list[list[Segment]]:
        console = self.app.console
        return console.render_lines(renderable, console.options.update_width(width), pad=True)

    def _code_theme(self) -> str:
        return "monokai" if self.app.current_theme.dark else "default"

    def _code_background(self) -> str | None:
        color = self.get_component_rich_style("transcript--code", default=Style()).bgcolor
        return color.triplet.hex if color is not None and color.triplet is not None else None

    def _style(self, name: str) -> Style:
        """A component's colour and attributes blended on our background, minus the background (so the
        focus tint still shows through)."""
        style = self._styles.get(name)
        if style is None:
            full = self.get_component_rich_style(name, default=Style())
            style = self._styles[name] = Style(color=full.color, bold=full.bold, dim=full.dim, italic=full.italic,
                                               underline=full.underline, strike=full.strike, reverse=full.reverse)
        return style

    def _current_style_key(self) -> tuple:
        names = sorted(self.COMPONENT_CLASSES)
        return (self.app.current_theme.name, self.rich_style,
                *(self.get_component_rich_style(n, default=Style()) for n in names))
