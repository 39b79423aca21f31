"""Provides Transcript: the whole chat as one virtualised line widget, streaming markdown at constant cost per chunk."""

from __future__ import annotations

import time
from collections import OrderedDict, deque

from rich.cells import cell_len
from rich.console import RenderableType
from rich.style import Style
from textual import events, on
from textual.actions import SkipAction
from textual.binding import Binding
from textual.geometry import Offset, Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.selection import Selection
from textual.strip import Strip

from ... import priority
from ..flush_pacer import FlushPacer
from ..textual_ext.line_memo import MemoLines, lean_vertical_scrollbar
from ..textual_ext.widgets import SteadyBars
from .markdown_stream import MARKDOWN_KINDS, Block, Entry, Seg, TreeRows
from .transcript_cursor import TranscriptCursor
from .transcript_layout import TranscriptLayout
from .transcript_render import RENDER_BUDGET, TranscriptRendering
from .transcript_select import block_selection, word_selection
from .soft_wraps import JOIN_LINES, NEWLINE, WIDE, join_lines, wrap_joins
from ..app_api import rat_app

# A flush cuts at most this many new lines into blocks, of one message or of many, then lets the loop turn
# (keys go between) and goes on with the next; nothing is drawn until the batch is cut. Each entry a flush
# looks at counts ENTRY_SYNC_LINES more (its heights, its sync's setup): a `session/load` delivers a thousand
# small messages at a time. When flushes come and whether they draw: ui/flush_pacer.py.
FLOOD_SYNC_LINES = 200
ENTRY_SYNC_LINES = 4


class Transcript(TranscriptCursor, TranscriptLayout, TranscriptRendering, MemoLines, SteadyBars, ScrollView,
                 can_focus=True):
    """The chat: entries keyed by id, streamed markdown cut into blocks, each rendered once per width.

    Lines are drawn through `render_line` from per-block caches; blocks far from the viewport are
    only estimated, so a 20,000-chunk answer costs O(chunk) per append and O(viewport) per frame.
    """

    # A key's frame leaves the transcript's new lines to the next one, unless the transcript has the focus
    # (FramesMixin.draw_key).
    DRAWN_AFTER_KEYS = True

    COMPONENT_CLASSES = {
        "transcript--user-header",
        "transcript--user-bar",
        "transcript--thought",
        "transcript--generic",
        "transcript--notice-info",
        "transcript--notice-warning",
        "transcript--notice-error",
        "transcript--code",
        "transcript--new-below",
        "transcript--search-match",
        "transcript--cursor",
        "transcript--search-current",
    }

    DEFAULT_CSS = """
    Transcript {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: scroll;
        scrollbar-gutter: stable;
        &:focus { background-tint: $foreground 3%; }
        & > .transcript--user-header { color: $accent; text-style: bold; }
        & > .transcript--user-bar { color: $accent; }
        & > .transcript--thought { color: $text-muted; text-style: italic; }
        & > .transcript--generic { color: $text-muted; }
        & > .transcript--notice-info { color: $text-muted; }
        & > .transcript--notice-warning { color: $text-warning; }
        & > .transcript--notice-error { color: $text-error; text-style: bold; }
        & > .transcript--code { background: $surface-darken-1; }
        & > .transcript--cursor { background: $accent 15%; }
        & > .transcript--search-match { background: $warning 40%; }
        & > .transcript--search-current { background: $accent; color: $text; text-style: bold; }
        & > .transcript--new-below { background: $accent; color: $text; text-style: bold; }
    }
    """

    BINDINGS = [
        Binding("t", "toggle_collapsed", "Expand/collapse", id="transcript.toggle",
                tooltip="Expand or collapse the nearest thought or long update"),
        Binding("end", "scroll_end", "End", id="transcript.end", show=False, tooltip="Jump to the end and follow"),
        Binding("home", "scroll_home", "Home", id="transcript.home", show=False, tooltip="Jump to the start"),
        # n/p, not j/k: the history transcript's j exports the journal, and its c continues.
        Binding("n", "move_block(1)", "Next block", id="transcript.next_block", show=False,
                tooltip="Block cursor: the next message, code block, thought or tool call (x, d, o, v, y act on it)"),
        Binding("p", "move_block(-1)", "Previous block", id="transcript.previous_block", show=False,
                tooltip="Block cursor: the previous message, thought or tool call"),
        Binding("]", "move_prompt(1)", "Next prompt", id="transcript.next_prompt", show=False,
                tooltip="Block cursor: your next prompt"),
        Binding("[", "move_prompt(-1)", "Previous prompt", id="transcript.previous_prompt", show=False,
                tooltip="Block cursor: your previous prompt"),
        # The app's tab keys, not Textual's horizontal page scroll: a transcript that wraps never scrolls sideways
        # (the key fell through to the app), but F1 listed it as "Page Left". Same ids: remapped with them.
        Binding("ctrl+pageup", "app.step_tab(-1)", "Previous tab", id="app.previous_tab", show=False),
        Binding("ctrl+pagedown", "app.step_tab(1)", "Next tab", id="app.next_tab", show=False),
    ]

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """Textual's, with its rows styled once per kind of row (line_memo.LeanScrollBar): it scrolls with every
        frame of a flood."""
        return lean_vertical_scrollbar(self)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.rows = TreeRows()
        self._by_key: dict[str, Entry] = {}
        self._dirty: set[Entry] = set()  # entries whose open tail grew since the last flush
        self.pacer = FlushPacer(self)  # when a flush comes and whether it draws
        self._forced = False  # visible_text: render markdown even while the warm-up imports it
        self._warm_waiting = False  # called back at the warm-up's end (wait_warm)
        self._previews: dict[Seg, str] = {}  # open tails drawn as their preview: the text drawn
        self._withheld: dict[Entry, list[Block]] = {}  # ... and the blocks cut meanwhile, not shown yet
        # The entries a cycle is cutting: `_dirty` when it began, cut a slice per flush (_flush_now), taken
        # from the left (an entry replaced meanwhile is skipped there).
        self._cycle: deque[Entry] = deque()
        self._follow = True
        self._settling = False
        self._width = 0
        self.max_width = 0  # the text's width at most ([ui] max_width; 0: the widget's), centred (_centre)
        self._style_key: tuple | None = None
        self._base_style: Style | None = None
        self._styles: dict[str, Style] = {}
        self._rendered: OrderedDict[Seg, None] = OrderedDict()
        self.render_count = 0
        """Blocks rendered so far (tests use it to prove appends don't re-render old blocks)."""
        self._budget_end = 0.0
        self._catch_up_pending = False
        self._lexing: dict[Seg, Block] = {}  # code pieces drawn as plain text until their lexer's states reach them
        self._lex_pending = False
        self.new_below = False
        self.cursor_key: str | None = None  # the block under the keyboard cursor (n/p), highlighted
        self.cursor_code: int | None = None  # a fenced code block of that entry the cursor stepped into
        self._cursor_lines: tuple[int, int] | None = None  # the content lines highlighted, per frame
        self.search_query = ""  # lower case; its matches are highlighted in the lines shown
        self.search_line: int | None = None  # the line of the current match, highlighted brighter
        """Content arrived below the view while scrolled up: a marker on the last line says so."""
    # -- public API -----------------------------------------------------------------------------

    def add_entry(self, key: str, kind: str, text: str = "", *, title: str | None = None) -> None:
        """Add an entry (or reset the one with this key); `kind` is user/agent/thought/notice/generic."""
        if kind not in MARKDOWN_KINDS and kind not in ("notice", "generic"):
            kind = "generic"
        entry = Entry(key, kind, title)
        if kind == "notice":
            entry.body.append(Seg("notice"))
        elif kind == "generic":
            entry.body.append(Seg("generic"))
        self._install(entry)
        if text:
            self.append_text(key, text)
        if entry.collapsible and kind == "generic":
            entry.collapsed = True
            self._relayout(entry)

    def append_text(self, key: str, text: str) -> None:
        """Stream a chunk into an entry: O(chunk); the screen catches up once per batch."""
        entry = self._by_key.get(key)
        if entry is None:
            self.add_entry(key, "agent")
            entry = self._by_key[key]
        if not text:
            return
        entry.parts.append(text)
        splitter = entry.splitter
        if splitter is None:  # notice / generic: small, re-laid out whole
            entry.newlines += text.count("\n")
            seg = entry.body[0]
            seg.strips = None
            if entry.header:
                entry.header.strips = None
            self._dirty.add(entry)
            self._schedule()
            return
        splitter.feed(text)  # O(chunk): blocks are cut once per batch, in _flush
        if splitter.behind and splitter.preview_from() >= 0:
            self.pacer.preview_fresh = True  # the end shown while the rest waits to be cut (preview) came on
        # An open tail keeps its lines until the flush renders it again (_sync): a frame drawn meanwhile
        # must not render an end that has not been cut into blocks yet.
        if not (entry.body and entry.body[-1].open) and splitter.has_tail:
            self._add_seg(entry, Seg("md", open=True))
        if entry.collapsed and entry.header:
            entry.header.strips = None
        self._dirty.add(entry)
        self._schedule()

    def _sync(self, entry: Entry) -> None:
        """Hand the blocks a batch completed to their own segments; drop lines a new definition changes."""
        splitter = entry.splitter
        result = splitter.sync(FLOOD_SYNC_LINES)
        tail = entry.body[-1] if entry.body and entry.body[-1].open else None
        # A tail shown as its preview stays as drawn while the rest is cut: the blocks cut meanwhile are held
        # back, and shown all at once when the cut has caught up (put in as they come, each pushed the
        # preview out of the viewport until the next draw scrolled back to it).
        done = result.done
        if tail is not None and tail in self._previews and splitter.behind:
            self._withheld.setdefault(entry, []).extend(done)
            done = []
        elif entry in self._withheld:
            done = self._withheld.pop(entry) + done
        for block in done:
            if tail is not None:
                tail.block, tail.open, tail.strips = block, False, None
                self._previews.pop(tail, None)
                self._rendered.pop(tail, None)
                self._set_height(entry, tail, self._estimate(entry, tail))
                tail = None
            else:
                self._add_seg(entry, Seg("md", block))
        if splitter.has_tail:
            if tail is None:
                self._add_seg(entry, Seg("md", open=True))
            elif not self._preview_kept(entry, tail):
                tail.strips = None
        if result.labels or result.relist:
            # A link reference defined, or a list's number width grown: the few blocks concerned render again.
            for seg in entry.body:
                block = seg.block
                if seg.strips is not None and block is not None and (
                        block.may_use(result.labels) or (block.list is not None and block.list in result.relist)):
                    seg.strips = None
                    self._rendered.pop(seg, None)

    def _preview_kept(self, entry: Entry, tail: Seg) -> bool:
        """Whether a tail drawn as its preview (MarkdownStream.preview) keeps its lines: what is cut meanwhile
        comes before the preview's first line, and nothing new came after it."""
        shown = self._previews.get(tail)
        if shown is None or not entry.splitter.behind:
            self._previews.pop(tail, None)
            return False
        block = entry.splitter.preview(self._preview_lines())
        return block is not None and block.text == shown

    def set_renderable(self, key: str, renderable: RenderableType) -> None:
        """Add or replace an entry drawn from any Rich renderable (tool-call cards); only it re-renders."""
        entry = self._by_key.get(key)
        if entry is None or entry.kind != "renderable":
            entry = Entry(key, "renderable", None)
            entry.body.append(Seg("renderable"))
            entry.renderable = renderable
            self._install(entry)
            return
        entry.renderable = renderable
        entry.body[0].strips = None
        self._dirty.add(entry)
        self._schedule()

    def toggle_collapsed(self, key: str | None = None) -> None:
        """Expand or collapse a thought / long generic entry; None picks the one nearest the view's end."""
        entry = self._by_key.get(key) if key is not None else self._nearest_collapsible()
        if entry is None or not entry.collapsible:
            return
        entry.collapsed = not entry.collapsed
        self._relayout(entry)
        self._settle()

    def collapsible(self, key: str) -> bool:
        """Whether the entry `key` folds (a thought, a long generic update)."""
        entry = self._by_key.get(key)
        return entry is not None and entry.collapsible

    def has_entry(self, key: str) -> bool:
        return key in self._by_key

    def entry_text(self, key: str) -> str | None:
        """The source text an entry holds (what was added and appended), or None if there is none."""
        entry = self._by_key.get(key)
        return "".join(entry.parts) if entry is not None else None

    @property
    def plain_text(self) -> str:
        """The whole transcript as plain source text, built from what was appended (not from lines)."""
        return "\n\n".join(entry.plain_text(self._width or 80) for entry in self.rows.items)

    def visible_text(self) -> str:
        """The rendered lines in the viewport, as the user sees them once all is cut and rendered (markdown
        imported now if the warm-up has not yet)."""
        self._forced = True
        try:
            while self.pending:
                self.pacer.flush_pending = True
                self.pacer.flush(force=True)
            top = round(self.scroll_offset.y)
            lines = []
            for y in range(top, min(top + self.scrollable_content_region.height, self.rows.total)):
                strip = self._strip_at(y)
                lines.append(strip.text.rstrip() if strip is not None else "")
        finally:
            self._forced = False
        return "\n".join(lines).rstrip("\n")

    @property
    def following(self) -> bool:
        """Whether the view sticks to the end as content arrives."""
        return self._follow

    # -- actions --------------------------------------------------------------------------------

    def action_toggle_collapsed(self) -> None:
        self.toggle_collapsed()

    def action_scroll_end(self) -> None:
        drawn_at_end = (self._follow and not self.new_below and not self.pacer.unsettled and not self.pending
                        and round(self.scroll_offset.y) >= self.max_scroll_y)
        self._follow = True
        self.new_below = False
        if drawn_at_end:
            # Nothing to draw again: settled, it repainted the whole transcript in the frame after every Enter,
            # as the answer's first lines came in.
            return
        self._settle()

    def action_scroll_home(self) -> None:
        self._follow = False
        self.scroll_to(y=0, animate=False, immediate=True)

    # Not animated: blocks rendered as they come into view fix their heights, and the view is
    # re-anchored on the line it showed, which an animation in flight would fight.
    def action_scroll_up(self) -> None:
        self._scroll_by(-1)

    def action_scroll_down(self) -> None:
        self._scroll_by(1)

    def action_page_up(self) -> None:
        self._scroll_by(-self.scrollable_content_region.height)

    def action_page_down(self) -> None:
        self._scroll_by(self.scrollable_content_region.height)

    def _scroll_by(self, lines: int) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction()
        self.scroll_to(y=self.scroll_offset.y + lines, animate=False, immediate=True)

    # -- Textual hooks --------------------------------------------------------------------------

    def on_mount(self) -> None:
        super().on_mount()
        app = rat_app(self)
        if app is not None:
            self.max_width = app.config.ui.max_width
        self._schedule()
        # Pygments builds a lexer's tables on first use (slowly): RatApp._warm_up builds them before the
        # first answer, after the first frame and the agent's handshake (a thread started here slowed both).

    def on_resize(self, event: events.Resize) -> None:
        width = self.scrollable_content_region.width
        if self._centre():  # (the region above is laid out with the old padding until the next layout)
            width = self.region.width - self.styles.scrollbar_size_vertical - self.styles.padding.left
        if self.max_width:  # rendered at that width (wrapped, not clipped), the rest of the line left blank
            width = min(width, self.max_width)
        if width != self._width:
            self._width = width
            self._relayout_all()
        self._settle()

    def _centre(self) -> bool:
        """On a terminal wider than [ui] max_width, the text is a column in the middle, as a page is read,
        not against the left edge with the width of another one blank to its right. Whether it changed."""
        pad = 0
        if self.max_width:
            # (the scrollbar's columns stay at the right edge: they are not part of the text)
            pad = max(0, (self.region.width - self.styles.scrollbar_size_vertical - self.max_width) // 2)
        if self.styles.padding.left == pad:
            return False
        self.styles.padding = (0, 0, 0, pad)
        return True

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_style = None
        self._styles.clear()
        key = self._current_style_key() if self.is_mounted else None
        if key != self._style_key:
            self._style_key = key
            self._drop_strips()
            self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._settling:
            return
        # Only a move up stops following: a scroll down that lands short of an end which grew meanwhile
        # (a flood, a replay) must not drop the view off the end.
        if new_value >= self.max_scroll_y:
            self._follow = True
            if self.new_below:
                self.new_below = False
                self.refresh()
        elif new_value < old_value:
            self._follow = False
        if round(old_value) != round(new_value):
            # Re-anchoring from inside an animation step would break Textual's animator.
            self._settle(anchor=not self.app.animator.is_being_animated(self, "scroll_y"))

    class CardClicked(Message):
        """A click on the first line of an entry drawn from a renderable (a tool call's card header)."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    _pressed_at: Offset | None = None

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._pressed_at = event.screen_offset

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or event.chain > 1 or event.screen_offset != self._pressed_at:
            return  # a double click selects a word; a drag that ended here selected text
        found = self.locate(round(self.scroll_offset.y) + offset.y)
        if found and found[1].role == "header" and found[0].collapsible:
            self.toggle_collapsed(found[0].key)
        elif found and found[1].role == "renderable" and found[2] == 0:
            self._follow = False  # the header clicked stays where it is as the card grows below it
            self.post_message(self.CardClicked(found[0].key))

    @on(events.Click)
    async def _select_by_clicks(self, event: events.Click) -> None:
        """Double-click selects the word under the pointer, triple-click its block (paragraph, list, code
        block, card), instead of Widget._on_click's whole transcript. Ctrl+C copies it (OSC 52)."""
        if event.widget is not self or event.chain not in (2, 3) or not (
                self.allow_select and self.screen.allow_select and self.app.ALLOW_SELECT):
            return
        event.prevent_default()  # this class's handlers still run; Widget._on_click (select all) does not
        offset = event.get_content_offset(self)
        if offset is not None:
            y = round(self.scroll_offset.y) + offset.y
            strip = self._strip_at(y)
            if event.chain == 2:
                selection = word_selection(strip.text, y, offset.x) if strip is not None else None
            else:
                selection = block_selection(self, y)
            self.screen.selections = {self: selection} if selection is not None else {}
        await self.broker_event("click", event)  # what Widget._on_click would have done besides selecting

    def render_lines(self, crop: Region) -> list[Strip]:
        # One frame's budget for rendering blocks: keystrokes must not wait on a screenful of markdown.
        self._budget_end = time.perf_counter() + RENDER_BUDGET
        self._cursor_lines = self._cursor_span() if self.cursor_key is not None and self.has_focus else None
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        content_y = round(self.scroll_offset.y) + y
        strip = self._strip_at(content_y, budgeted=True)
        if strip is None:
            return Strip.blank(width, self._base())
        if strip.cell_length != width:
            strip = strip.crop_extend(0, width, self._base())
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(content_y)) is not None:
            strip = self._highlight(strip, span[0], width if span[1] == -1 else span[1], "screen--selection")
        cursor = self._cursor_lines
        if cursor is not None and cursor[0] <= content_y < cursor[1]:
            strip = self._highlight(strip, 0, width, "transcript--cursor")
        if self.search_query:
            strip = self._highlight_matches(strip, content_y)
        if self.new_below and y == self.scrollable_content_region.height - 1:
            strip = self._marker(strip, width)
        # Offsets tell Textual's mouse selection where in the content a cell is.
        return strip.apply_offsets(0, content_y)

    def on_blur(self) -> None:
        self.refresh()  # the cursor shows only while the transcript has the focus

    def on_focus(self) -> None:
        self.refresh()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text, from the lines as shown (only the selected lines are rendered), the screen's soft
        wraps joined (soft_wraps.py): a wrapped paragraph is copied as one line."""
        total = self.rows.total
        if not total:
            return None
        first = selection.start.y if selection.start is not None else 0
        last = min(selection.end.y if selection.end is not None else total - 1, total - 1)
        lines = []
        for y in range(first, last + 1):
            strip = self._strip_at(y)
            lines.append(strip.text.rstrip() if strip is not None else "")
        start = Offset(selection.start.x, 0) if selection.start is not None else None
        end = Offset(selection.end.x, selection.end.y - first) if selection.end is not None else None
        picked = Selection(start, end).extract("\n".join(lines)).split("\n")
        return join_lines(picked, self._wrap_joins(first, first + len(picked))), "\n"

    def _wrap_joins(self, first: int, end: int) -> list[str]:
        """What joins each content line from `first` to `end` to the next: a break, or a soft wrap's blanks."""
        if end - first > JOIN_LINES:  # (a copy that long would take twice as long: soft_wraps.JOIN_LINES)
            return [NEWLINE] * max(0, end - first - 1)
        joins: list[str] = []
        seen: dict[Seg, list[str] | None] = {}
        previous: tuple[Seg, int] | None = None
        for y in range(first, end):
            found = self.locate(y)
            seg, line = (found[1], found[2]) if found is not None else (None, 0)
            if previous is not None:
                seg_joins = seen[previous[0]] if seg is previous[0] else None
                within = seg_joins is not None and previous[1] < len(seg_joins)
                joins.append(seg_joins[previous[1]] if within else NEWLINE)  # type: ignore[index]
            if found is not None and seg not in seen:
                seen[found[1]] = self._seg_joins(found[0], found[1])
            previous = (seg, line) if seg is not None else None
        return joins

    def _seg_joins(self, entry: Entry, seg: Seg) -> list[str] | None:
        if entry.kind == "user":  # each line has its bar: kept as shown
            return None
        shown = [strip.text.rstrip() for strip in self.strips(entry, seg)]
        if sum(1 for line in shown if line) < 2:
            return None  # one line: nothing wrapped
        # Wide enough for the longest logical line: at most all the shown characters and a blank per wrap (the
        # lines are padded to the width: WIDE for each would cost more than the rendering).
        width = min(WIDE, max(self._width, sum(cell_len(line) for line in shown) + len(shown) + 4))
        wide = ["".join(segment.text for segment in line) for line in self._render_seg(entry, seg, width)]
        return wrap_joins(shown, wide)

    def _sync_size(self) -> None:
        size = Size(self._width, self.rows.total)
        if self.virtual_size != size:
            if not self._follow and size.height > self.virtual_size.height and not self.new_below:
                self.new_below = True
            # Not `self.virtual_size = size`: that reactive lays out the whole screen (at every batch of
            # a flood), but the transcript's own size does not depend on its content; only its scrollbar
            # does, and a scrollbar appearing or going lays out by its own reactive.
            self.set_reactive(Transcript.virtual_size, size)
            self.update_scrollbars(size)
            self.refresh()

    @property
    def pending(self) -> bool:
        """Text that arrived is still to be cut into blocks or drawn (a flush is coming)."""
        return self.pacer.flush_pending or bool(self._dirty) or bool(self._cycle)

    # -- the pacer's target (FlushTarget) -------------------------------------------------------

    @property
    def in_background(self) -> bool:
        """A tab in the background (laid out once, no region now): nothing to draw."""
        return not self.region and bool(self._width)

    @property
    def has_dirty(self) -> bool:
        return bool(self._dirty)

    @property
    def cutting(self) -> bool:
        return bool(self._cycle)

    def _schedule(self) -> None:
        self.pacer.schedule()

    def reader_idle(self) -> None:
        """The agent's output is drained (SessionStore.reader_idle): see FlushPacer.reader_idle."""
        self.pacer.reader_idle()

    def _flush_now(self, yielding: bool = False) -> None:
        self.pacer.flush_now(yielding)

    def sync_slice(self, parking: bool) -> bool:
        """A slice of a cycle: cut at most FLOOD_SYNC_LINES lines of what arrived into blocks (the cycle's
        entries are what was dirty when it began) and estimate the heights of the tails; `parking`: an entry a
        flood has yet to cut is left for later, its end shown meanwhile (MarkdownStream.preview). True if one
        was parked."""
        cycle = self._cycle
        if not cycle:
            cycle.extend(self._dirty)
            self._dirty = set()
        # A slice takes its entries from the cycle's left and puts those still behind at its right: O(slice),
        # not O(cycle) (a set of the rest, made anew each slice, was millions of adds over a session/load of
        # 50,000 updates), and every entry makes progress in turn.
        behind = []
        budget = FLOOD_SYNC_LINES
        warming = self.warming
        by_key = self._by_key
        parked = False
        while cycle and budget > 0:  # the rest at the next slice (their tails render as fed meanwhile)
            entry = cycle.popleft()
            if by_key.get(entry.key) is not entry:
                continue  # replaced since (Transcript._install)
            budget -= ENTRY_SYNC_LINES
            splitter = entry.splitter
            if splitter is not None and warming:
                self._dirty.add(entry)  # cut once the warm-up has imported the parser (wait_warm)
            elif splitter is not None and parking and splitter.defer(FLOOD_SYNC_LINES) and splitter.preview_from() >= 0:
                self._dirty.add(entry)
                parked = True
                tail = entry.body[-1] if entry.body and entry.body[-1].open else None
                if tail is not None:
                    tail.strips = None  # its preview: the end that came since
                    self.pacer.preview_fresh = True
            elif splitter is not None:
                budget -= min(splitter.tail_size[0], FLOOD_SYNC_LINES)
                self._sync(entry)
                if splitter.behind:
                    behind.append(entry)
            for seg in (entry.header, entry.body[-1] if entry.body else None):
                if seg is not None and seg.strips is None:
                    self._set_height(entry, seg, self._estimate(entry, seg))
        cycle.extend(behind)
        return parked

    def set_heights(self) -> None:
        self._sync_size()

    def draw(self, yielding: bool) -> bool:
        return self._settle(yielding=yielding)

    def drawn_to_end(self) -> None:
        """The end of what the agent sent so far, all of it read: on screen at once (RatApp.draw_now)."""
        app = rat_app(self)
        if app is not None:
            app.draw_now(self)

    def _preview_lines(self) -> int:
        """How many lines back a flood's preview starts at least (MarkdownStream.preview_from): a screenful
        once the agent has paused, so that the end is drawn at the screen's foot with what precedes it above,
        as it stays once cut (from the last place markdown may start over, the end often came a few lines
        under the question with the screen blank below it, and jumped once cut). While the reader is still at
        it (`reading`: not `bursting`, which still holds as the end is drawn), from the last such place: a
        screenful rendered at each of the flood's draws made a long answer end later."""
        return 0 if self.pacer.reading() else self.size.height

    def on_show(self) -> None:
        if self.pacer.background_stale:
            self.pacer.background_stale = False
            self._sync_size()
            self._settle()

    def _settle(self, anchor: bool = True, yielding: bool = False) -> bool:
        """Render the blocks in and around the viewport, then pin to the end or keep the top line still.

        `yielding` (a flush): following the end, a key that arrives meanwhile stops it before the next block
        not rendered yet, and nothing is drawn (False): the screenful of new blocks a flood's flush renders
        is slow under load (a long code block's), and the key's own frame came after it."""
        if self._settling or not self._width:
            return True
        height = max(self.scrollable_content_region.height, 1)
        self._settling = True
        try:
            if self._follow:
                need = height
                for entry, seg in self._walk(len(self.rows.items) - 1, None, -1):
                    if yielding and seg.strips is None and priority.input_wait():
                        return False
                    self.strips(entry, seg)
                    need -= seg.height
                    if need <= 0:
                        break
                self._sync_size()
                self.scroll_end(animate=False, immediate=True, x_axis=False)
            else:
                top = round(self.scroll_offset.y)
                anchor = self.locate(top)
                if anchor is not None:
                    entry, seg, line = anchor
                    self._render_span(entry.index, seg.index, -1, height)
                    self._render_span(entry.index, seg.index, +1, 2 * height + line)
                    self._sync_size()
                    new_top = self.rows.start(entry.index) + entry.start(seg.index) + min(line, seg.height - 1)
                    if new_top != top and anchor:
                        self.scroll_to(y=new_top, animate=False, immediate=True)
        finally:
            self._settling = False
        self.refresh()
        return True
