"""Provides DiffView: one file's diff, unified or side by side, drawing and highlighting only what is on screen."""

from __future__ import annotations

from collections import OrderedDict

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax, SyntaxTheme
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...state import diff_cache
from ...state.diffing import FileDiff, Row, SplitRow
from ...protocol.sanitize import clean
from ..loop_hop import from_any_thread
from ..textual_ext.widgets import DefaultCSS

MODES = ("unified", "split")
CHUNK_LINES = 32  # source lines highlighted together: keeps most multi-line strings intact, stays cheap
MAX_CHUNKS = 64  # highlighted chunks kept (about 2,000 lines), least recently drawn dropped first
STRIP_CACHE = 1024  # drawn rows kept: scrolling by a line or a page redraws only what is new
MAX_LINE_CHARS = 2000  # longer lines (minified code) are cut before highlighting and measuring
TAB_SIZE = 4
# Control characters would reach the terminal raw; draw them as their Unicode "control pictures".
_MARKERS = {"added": "+", "removed": "-", "context": " "}
CUT_MARK = "→"  # in the last column of a line cut there: more of it to the right (→ or scroll)


def _lexer_for(path: str) -> Lexer | None:
    """Pygments lexer chosen by file name; stripnl=False so leading blank lines keep their numbers."""
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _clean(line: str) -> str:
    return clean(line[:MAX_LINE_CHARS].rstrip("\r\n").expandtabs(TAB_SIZE))


class DiffView(DefaultCSS, ScrollView, can_focus=True):
    """A file diff as rows from `FileDiff`; `render_line` builds only the rows in view.

    Highlighting runs per chunk of CHUNK_LINES source lines when a row of that chunk is first drawn,
    so a 20,000-line diff shows at once and memory stays near the viewport, not the file. Line 0 is
    a sticky header (path, "new file", +N -M); row r of the current mode is drawn at y = r + 1 - scroll_y.
    """

    COMPONENT_CLASSES = {
        "diff-view--header",
        "diff-view--hunk-header",
        "diff-view--gutter",
        "diff-view--added",
        "diff-view--removed",
        "diff-view--added-marker",
        "diff-view--removed-marker",
        "diff-view--divider",
        "diff-view--filler",
    }

    # $diff-added / $diff-removed are rat's theme variables; `_get_default_css` swaps in $success /
    # $error in an app that doesn't define them, since an unknown variable fails the whole stylesheet.
    DEFAULT_CSS = """
    DiffView {
        background: $surface;
        color: $foreground;
        overflow-x: auto;
        overflow-y: scroll;
        scrollbar-gutter: stable;
        &:focus { background-tint: $foreground 3%; }
        & > .diff-view--header { background: $panel; color: $foreground; text-style: bold; }
        & > .diff-view--hunk-header { background: $boost; color: $text-accent; }
        & > .diff-view--gutter { color: $text-muted; }
        & > .diff-view--added { background: $diff-added 22%; }
        & > .diff-view--removed { background: $diff-removed 22%; }
        & > .diff-view--added-marker { color: $diff-added; text-style: bold; }
        & > .diff-view--removed-marker { color: $diff-removed; text-style: bold; }
        & > .diff-view--divider { color: $foreground 25%; }
        & > .diff-view--filler { background: $foreground 4%; }
    }
    """

    BINDINGS = [
        Binding("n,right_square_bracket", "next_hunk", "Next hunk", id="diff.next_hunk",
                tooltip="Scroll the next change to the top"),
        Binding("p,left_square_bracket", "previous_hunk", "Previous hunk", id="diff.previous_hunk",
                tooltip="Scroll the previous change to the top"),
        Binding("s", "toggle_mode", "Split/unified", id="diff.toggle_mode",
                tooltip="Switch between one column and old | new side by side"),
    ]

    mode: reactive[str] = reactive("unified", init=False)
    """"unified" (one column, removed lines above added ones) or "split" (old left, new right)."""

    def __init__(self, path: str, old_text: str | None, new_text: str, mode: str = "unified", *,
                 name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        self._styles: dict[str, Style] = {}  # set before Widget.__init__, which may update styles
        self._base: Style | None = None
        self._chunks: OrderedDict[tuple[str, int], list[list[Segment]]] = OrderedDict()
        self._token_styles: dict[object, Style] = {}
        self._strips: LRUCache[tuple[str, int, int, int], Strip] = LRUCache(STRIP_CACHE)
        self._code_theme: str | None = None
        self._syntax: SyntaxTheme | None = None
        self._nav: tuple[int, float] | None = None  # (hunk, scroll_y) after the last n/p, see _hunk_at_top
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(DiffView.mode, self.validate_mode(mode))
        self._load(path, old_text, new_text)

    # -- public API -----------------------------------------------------------------------------

    @property
    def diff(self) -> FileDiff:
        """The model on display."""
        return self._diff

    @property
    def highlighted_lines(self) -> int:
        """Source lines highlighted and cached now (tests check it tracks the viewport, not the file)."""
        return sum(len(chunk) for chunk in self._chunks.values())

    @property
    def current_hunk(self) -> int | None:
        """The hunk at the top of the view (what "revert this hunk" would act on); None without hunks."""
        return self._hunk_at_top() if self._diff.hunks else None

    def set_diff(self, path: str, old_text: str | None, new_text: str, mode: str | None = None) -> None:
        """Show another diff (or an updated one) from the top."""
        self._load(path, old_text, new_text)
        if mode is not None:
            self.set_reactive(DiffView.mode, self.validate_mode(mode))
        self.scroll_to(0, 0, animate=False, immediate=True)
        self._sync_size()
        self.refresh()

    def visible_text(self) -> str:
        """The text of the lines on screen, as drawn (for tests and the bench)."""
        height = self.scrollable_content_region.height
        return "\n".join(self.render_line(y).text.rstrip() for y in range(height))

    # -- actions ----------------------------------------------------------------------------------

    def action_next_hunk(self) -> None:
        starts = self._diff.hunk_starts(self.mode)
        if starts:
            self._go_to_hunk(min(self._hunk_at_top() + 1, len(starts) - 1))

    def action_previous_hunk(self) -> None:
        starts = self._diff.hunk_starts(self.mode)
        if not starts:
            return
        hunk = self._hunk_at_top()
        top = round(self.scroll_y)
        # Inside a hunk, go back to its own start first, as editors do.
        self._go_to_hunk(hunk if top > starts[hunk] and self._nav is None else max(hunk - 1, 0))

    def action_toggle_mode(self) -> None:
        self.mode = "split" if self.mode == "unified" else "unified"

    def action_page_down(self) -> None:
        # A page is the height less the sticky header, so no row is skipped.
        self.scroll_to(y=self.scroll_y + self._page(), animate=False)

    def action_page_up(self) -> None:
        self.scroll_to(y=self.scroll_y - self._page(), animate=False)

    def validate_mode(self, mode: str) -> str:
        return mode if mode in MODES else "unified"

    def watch_mode(self, old: str, new: str) -> None:
        """Keep the same hunk (and the same distance into it) at the top across the switch."""
        old_starts, new_starts = self._diff.hunk_starts(old), self._diff.hunk_starts(new)
        y = 0
        if old_starts:
            hunk = self._hunk_at_top(old)
            end = new_starts[hunk + 1] - 1 if hunk + 1 < len(new_starts) else len(self._diff.rows(new)) - 1
            y = min(new_starts[hunk] + round(self.scroll_y) - old_starts[hunk], end)
        self._nav = None
        self._sync_size()
        self.scroll_to(y=y, animate=False, immediate=True)
        self.refresh()

    # -- Textual hooks ----------------------------------------------------------------------------

    def default_css(self, sources: list) -> list:
        """DEFAULT_CSS with $success / $error for the diff colours when the app doesn't define them."""
        try:
            defined = self.app.get_theme_variable_defaults()
        except RuntimeError:  # NoActiveAppError: not in an app yet, leave the CSS as written
            return sources
        if "diff-added" in defined and "diff-removed" in defined:
            return sources
        return [(where, css.replace("$diff-added", "$success").replace("$diff-removed", "$error"), tie, scope)
                if where[1] == "DiffView.DEFAULT_CSS" else (where, css, tie, scope)
                for where, css, tie, scope in sources]

    def on_mount(self) -> None:
        self._sync_size()

    def on_resize(self) -> None:
        self._sync_size()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._strips.clear()
        self._base = None
        if self.is_attached and self._theme_name() != self._code_theme:
            self._chunks.clear()  # token colours belong to the old light/dark syntax theme

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width  # less the scrollbars, unlike self.size
        base = self._base_style()
        if y == 0:
            header = self._strips.get(("header", 0, width, 0))
            if header is None:
                header = self._strips[("header", 0, width, 0)] = self._header(width)
            return header
        rows = self._diff.rows(self.mode)
        scroll_x, scroll_y = self.scroll_offset
        index = round(scroll_y) + y - 1
        if not 0 <= index < len(rows):
            return Strip.blank(width, base)
        key = (self.mode, index, width, round(scroll_x))
        strip = self._strips.get(key)
        if strip is None:
            row = rows[index]
            if isinstance(row, SplitRow):
                strip = self._split_line(row, width)
            else:
                strip = self._unified_line(row, width)
            self._strips[key] = strip
        return strip

    # -- model and sizes ----------------------------------------------------------------------------

    def _load(self, path: str, old_text: str | None, new_text: str) -> None:
        # The diff is shared with the tool-call card (state/diff_cache.py): computed once, a big one in a
        # worker thread; until it is ready the view shows its header saying so.
        self._source = (path, old_text, new_text)
        ready = None
        try:
            # (in the app's context: a callback run in the worker's has no active_app for what it starts)
            ready = from_any_thread(lambda: self._diff_ready(path, old_text, new_text))
        except RuntimeError:  # no loop (built outside an app): compute in place
            pass
        diff = diff_cache.shared.diff(path, old_text, new_text, ready) if ready else FileDiff(path, old_text, new_text)
        self.pending = diff is None
        self._set_model(diff if diff is not None else FileDiff(path, "", ""))

    def _diff_ready(self, path: str, old_text: str | None, new_text: str) -> None:
        if self._source != (path, old_text, new_text):
            return  # another diff was loaded meanwhile
        diff = diff_cache.shared.get(path, old_text, new_text) or FileDiff(path, old_text, new_text)
        self.pending = False
        self._set_model(diff)
        if self.is_attached:
            self._sync_size()
            self.refresh()

    def _set_model(self, diff: FileDiff) -> None:
        self._diff = diff
        path = diff.path
        self._lexer = _lexer_for(path)
        self._chunks.clear()
        self._strips.clear()
        self._nav = None
        lines = len(self._diff.old_lines), len(self._diff.new_lines)
        self._number_width = len(str(max(*lines, 1)))

    def _widest_line(self) -> int:
        """The longest row text of the current mode, in characters (for horizontal scrolling)."""
        return min(self._diff.widest(self.mode), MAX_LINE_CHARS)

    def _sync_size(self) -> None:
        width = self.scrollable_content_region.width
        widest = self._widest_line()
        if self.mode == "split":
            left, _ = self._halves(width)
            virtual = width + max(0, widest - (left - self._number_width - 4))
        else:
            virtual = self._number_width * 2 + 4 + widest
        size = Size(virtual, len(self._diff.rows(self.mode)) + 1)
        if self.virtual_size != size:
            self.virtual_size = size

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    @staticmethod
    def _halves(width: int) -> tuple[int, int]:
        left = (width - 1) // 2
        return left, width - 1 - left

    # -- hunk navigation ----------------------------------------------------------------------------

    def _hunk_at_top(self, mode: str | None = None) -> int:
        """The last hunk starting at or above the top row; after n/p, the hunk moved to even if the
        end of the diff kept it from reaching the top (else n would pick it again and stall)."""
        if self._nav is not None and mode is None:
            hunk, scrolled = self._nav
            if scrolled == self.scroll_y:
                return hunk
            self._nav = None
        starts = self._diff.hunk_starts(mode or self.mode)
        top = round(self.scroll_y)
        low, high = 0, len(starts) - 1
        while low < high:  # bisect_right on starts, by hand to keep the index
            middle = (low + high + 1) // 2
            if starts[middle] <= top:
                low = middle
            else:
                high = middle - 1
        return low

    def _go_to_hunk(self, hunk: int) -> None:
        self.scroll_to(y=self._diff.hunk_starts(self.mode)[hunk], animate=False, immediate=True)
        self._nav = (hunk, self.scroll_y)

    # -- drawing ------------------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name)
        return style

    def _base_style(self) -> Style:
        if self._base is None:  # walks the DOM: once per style change, not once per line
            self._base = self.rich_style
        return self._base

    def _header(self, width: int) -> Strip:
        style = self._base_style() + self._style("diff-view--header")
        diff = self._diff
        tail = [Segment("  new file", style)] if diff.is_new else []
        if self.pending:
            tail += [Segment("  computing the diff…", style)]
            room = width - 1 - sum(cell_len(s.text) for s in tail)
            return Strip([Segment(" " + diff.path[:max(room, 0)], style), *tail]).crop_extend(0, width, style)
        tail += [Segment("  "), Segment(f"+{diff.added}", style + self._marker_style("added")),
                 Segment(" "), Segment(f"−{diff.removed}", style + self._marker_style("removed")), Segment(" ")]
        room = width - 1 - sum(cell_len(s.text) for s in tail)
        path = clean(diff.path)
        if cell_len(path) > room:  # keep the file name, drop the start of the directory
            path = "…" + path[len(path) - max(room - 1, 0):] if room > 1 else ""
        segments = [Segment(" " + path, style), *(Segment(s.text, s.style or style) for s in tail)]
        return Strip(segments).crop_extend(0, width, style)

    def _marker_style(self, kind: str) -> Style:
        full = self._style(f"diff-view--{kind}-marker")
        return Style(color=full.color, bold=full.bold)  # colour only: keep the row's own background

    def _row_style(self, kind: str) -> Style:
        if kind in ("added", "removed"):
            return self._base_style() + self._style(f"diff-view--{kind}")
        return self._base_style()

    def _hunk_line(self, text: str, width: int) -> Strip:
        style = self._base_style() + self._style("diff-view--hunk-header")
        return Strip([Segment(" " + text, style)]).crop_extend(0, width, style)

    def _unified_line(self, row: Row, width: int) -> Strip:
        if row.kind == "hunk":
            return self._hunk_line(row.text, width)
        style = self._row_style(row.kind)
        digits = self._number_width
        old = "" if row.old_no is None else str(row.old_no)
        new = "" if row.new_no is None else str(row.new_no)
        gutter = self._gutter(f"{old:>{digits}} {new:>{digits}} ", row.kind, style)
        code_width = max(0, width - (digits * 2 + 4))
        side, number = ("old", row.old_no) if row.kind == "removed" else ("new", row.new_no)
        code = self._code(side, number - 1, code_width, style)
        return Strip.join([gutter, code]).crop_extend(0, width, style)

    def _split_line(self, row: SplitRow, width: int) -> Strip:
        if row.header is not None:
            return self._hunk_line(row.header, width)
        left, right = self._halves(width)
        divider = Segment("│", self._base_style() + self._style("diff-view--divider"))
        return Strip.join([self._half(row.left, "old", left), Strip([divider]),
                           self._half(row.right, "new", right)]).crop_extend(0, width, self._base_style())

    def _half(self, cell, side: str, width: int) -> Strip:
        if cell is None:
            filler = self._base_style() + self._style("diff-view--filler")
            return Strip.blank(width, filler)
        style = self._row_style(cell.kind)
        digits = self._number_width
        gutter = self._gutter(f" {cell.number:>{digits}} ", cell.kind, style)
        code = self._code(side, cell.number - 1, max(0, width - digits - 4), style)
        return Strip.join([gutter, code]).crop_extend(0, width, style)

    def _gutter(self, numbers: str, kind: str, style: Style) -> Strip:
        """Line numbers in the muted gutter colour, then the +/- marker, on the row's background."""
        marker = style + self._marker_style(kind) if kind != "context" else style
        numbers_style = style + Style(color=self._style("diff-view--gutter").color)
        return Strip([Segment(numbers, numbers_style), Segment(_MARKERS[kind] + " ", marker)])

    def _code(self, side: str, index: int, width: int, style: Style) -> Strip:
        """Source line `index` of one side, highlighted, scrolled by scroll_x and cut to `width` cells; a line that
        goes on past them ends in CUT_MARK (the split view's halves cut most long lines)."""
        start = round(self.scroll_offset.x)
        line = Strip(self._highlighted(side, index))
        if width < 2 or line.cell_length <= start + width:
            return line.crop_extend(start, start + width, style).apply_style(style)
        mark = Segment(CUT_MARK, style + Style(color=self._style("diff-view--gutter").color))
        return Strip.join([line.crop_extend(start, start + width - 1, style).apply_style(style), Strip([mark])])

    # -- highlighting -------------------------------------------------------------------------------

    def _theme_name(self) -> str:
        return "monokai" if self.app.current_theme.dark else "default"

    def _highlighted(self, side: str, index: int) -> list[Segment]:
        key = (side, index // CHUNK_LINES)
        chunk = self._chunks.get(key)
        if chunk is None:
            chunk = self._chunks[key] = self._highlight_chunk(side, key[1] * CHUNK_LINES)
            while len(self._chunks) > MAX_CHUNKS:
                self._chunks.popitem(last=False)
        else:
            self._chunks.move_to_end(key)
        offset = index - key[1] * CHUNK_LINES
        return chunk[offset] if 0 <= offset < len(chunk) else []

    def _highlight_chunk(self, side: str, start: int) -> list[list[Segment]]:
        source = self._diff.old_lines if side == "old" else self._diff.new_lines
        lines = [_clean(line) for line in source[start : start + CHUNK_LINES]]
        if self._lexer is None:
            return [[Segment(line)] if line else [] for line in lines]
        theme = self._theme_name()
        if theme != self._code_theme:
            self._code_theme, self._syntax = theme, Syntax.get_theme(theme)
            self._token_styles.clear()
        out: list[list[Segment]] = [[] for _ in lines]
        row = 0
        for token_type, value in self._lexer.get_tokens("\n".join(lines) + "\n"):
            style = self._token_style(token_type)
            for k, part in enumerate(value.split("\n")):
                row += 1 if k else 0
                if part and row < len(out):
                    out[row].append(Segment(part, style))
        return out

    def _token_style(self, token_type: object) -> Style:
        style = self._token_styles.get(token_type)
        if style is None:
            full = self._syntax.get_style_for_token(token_type)  # type: ignore[union-attr]
            # Foreground only: the row's background (added / removed tint) must show through.
            style = self._token_styles[token_type] = Style(color=full.color, bold=full.bold,
                                                           italic=full.italic, underline=full.underline)
        return style
