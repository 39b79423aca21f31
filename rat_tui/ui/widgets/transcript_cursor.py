"""Provides TranscriptCursor: the transcript's block cursor (n/p, ]/[) and its search (a mixin of Transcript)."""

from __future__ import annotations



from .markdown_stream import Entry
from .transcript_select import CodeSpan, code_block_lines, code_blocks



class TranscriptCursor:
    """Transcript's block cursor (moved by n/p and ]/[, stepping into code blocks) and the search's reveal."""

    # -- block cursor ---------------------------------------------------------------------------

    def action_move_block(self, delta: int) -> None:
        self.move_block(delta)

    def action_move_prompt(self, delta: int) -> None:
        self.move_block(delta, kind="user")

    def move_block(self, delta: int, kind: str | None = None) -> str | None:
        """Move the block cursor (n/p) to the next (+1) or previous (-1) entry (of `kind`), from the cursor,
        else from the entry at the bottom of the view; bring it into view. Its key, or None.

        Without `kind`, the cursor also steps into an entry's fenced code blocks (`cursor_code`): an answer,
        then each of its code blocks, then the next entry; backwards the same way in reverse."""
        entries = self.rows.items
        if not entries:
            return None
        current = self._by_key.get(self.cursor_key) if self.cursor_key else None
        inside = current is not None and current.index < len(entries) and entries[current.index] is current
        if inside and kind is None and current is not None:
            codes = code_blocks(current)
            step = (-1 if self.cursor_code is None else self.cursor_code) + delta
            if codes and (0 <= step < len(codes) or (step == -1 and self.cursor_code is not None)):
                self.cursor_code = step if step >= 0 else None
                self._bring_cursor_into_view(current)
                return current.key
        if inside and current is not None:
            index = current.index + delta
        else:
            bottom = round(self.scroll_offset.y) + self.scrollable_content_region.height - 1
            found = self.rows.find(min(bottom, self.rows.total - 1))
            index = len(entries) - 1 if found is None else found
        while kind is not None and 0 <= index < len(entries) and entries[index].kind != kind:
            index += delta
        if not 0 <= index < len(entries):
            self.app.bell()
            return self.cursor_key
        entry = entries[index]
        self.cursor_key = entry.key
        self.cursor_code = None
        if kind is None and inside and delta < 0:  # back into an entry: its last code block first
            codes = code_blocks(entry)
            self.cursor_code = len(codes) - 1 if codes else None
        self._bring_cursor_into_view(entry)
        return entry.key

    def put_cursor(self, key: str) -> bool:
        """Put the block cursor on the entry `key` and bring it into view (the fleet board's Enter on a card)."""
        entry = self._by_key.get(key)
        if entry is None:
            return False
        self.cursor_key = entry.key
        self.cursor_code = None
        self._bring_cursor_into_view(entry)
        return True

    def _bring_cursor_into_view(self, entry: Entry) -> None:
        span = self._cursor_span()
        start = span[0] if span is not None else self.rows.start(entry.index)
        height = max(self.scrollable_content_region.height, 1)
        top = round(self.scroll_offset.y)
        if not top <= start < top + height - 1:
            self._follow = False
            self.scroll_to(y=max(0, start - height // 3), animate=False, immediate=True)
        self.refresh()

    def _cursor_span(self) -> tuple[int, int] | None:
        """The content lines under the block cursor: its entry, or the code block of it the cursor is on."""
        entry = self._by_key.get(self.cursor_key) if self.cursor_key else None
        if entry is None or entry.index >= len(self.rows.items) or self.rows.items[entry.index] is not entry:
            return None
        if self.cursor_code is not None:
            codes = code_blocks(entry)
            if self.cursor_code < len(codes):
                return code_block_lines(self, entry, codes[self.cursor_code])
        start = self.rows.start(entry.index)
        return start, start + entry.total

    def cursor_in_view(self) -> bool:
        """Whether any line under the block cursor is on screen (a cursor left behind as the view scrolled is not)."""
        span = self._cursor_span()
        if span is None:
            return False
        top = round(self.scroll_offset.y)
        return span[0] < top + max(self.scrollable_content_region.height, 1) and span[1] > top

    def cursor_code_block(self) -> tuple[CodeSpan, int, int] | None:
        """The code block under the block cursor, its number (from 1) and how many its entry has, or None."""
        entry = self._by_key.get(self.cursor_key) if self.cursor_key and self.cursor_code is not None else None
        codes = code_blocks(entry) if entry is not None else []
        if self.cursor_code is None or self.cursor_code >= len(codes):
            return None
        return codes[self.cursor_code], self.cursor_code + 1, len(codes)

    # -- search (ui/tabs/search.py drives it) ---------------------------------------------------

    def entry_source(self, key: str) -> str:
        entry = self._by_key.get(key)
        return "".join(entry.parts) if entry is not None else ""

    def search_keys(self) -> list[str]:
        """The entries' keys in transcript order."""
        return [entry.key for entry in self.rows.items]

    def reveal(self, key: str, nth: int) -> bool:
        """Open the entry if collapsed, and bring its `nth` line matching the search into view (True),
        or say it has no such line (False). Renders the entry's blocks only up to that line."""
        entry = self._by_key.get(key)
        if entry is None or not self.search_query:
            return False
        if entry.collapsed:
            entry.collapsed = False
            self._relayout(entry)
        count = 0
        for seg in list(entry.items):
            block = seg.block if seg.role == "md" and not seg.open else None
            if block is not None and self.search_query not in block.text.lower():
                continue  # its source lacks the text: not rendered (a 20,000-chunk answer stays cheap)
            for line, strip in enumerate(self.strips(entry, seg)):
                if self.search_query in strip.text.lower():
                    if count == nth:
                        target = self.rows.start(entry.index) + entry.start(seg.index) + line
                        self.search_line = target
                        self._follow = False
                        self._sync_size()
                        self.scroll_to(y=max(0, target - self.scrollable_content_region.height // 2),
                                       animate=False, immediate=True)
                        self.refresh()
                        return True
                    count += 1
        return False

    def reveal_entry(self, key: str) -> None:
        """Bring an entry's first line into view (a match its lines do not show)."""
        entry = self._by_key.get(key)
        if entry is None:
            return
        target = self.rows.start(entry.index)
        self.search_line = None
        self._follow = False
        self.scroll_to(y=target, animate=False, immediate=True)
        self.refresh()
