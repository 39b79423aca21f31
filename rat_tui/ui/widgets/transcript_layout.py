"""Provides TranscriptLayout: the transcript's rows, their heights and the walk over them (a mixin of Transcript)."""

from __future__ import annotations

import time
from typing import Iterator

from textual.strip import Strip

from .markdown_stream import Entry, Seg, TreeRows



class TranscriptLayout:
    """Transcript's layout bookkeeping: entries installed in the row tree, their segments' heights (estimated until
    rendered), and finding the segment at a line."""

    # -- layout bookkeeping ---------------------------------------------------------------------

    def _install(self, entry: Entry) -> None:
        old = self._by_key.get(entry.key)
        self._by_key[entry.key] = entry
        for seg in entry.shown():
            seg.height = self._estimate(entry, seg)
            entry.append(seg)
        if old is None:
            self.rows.append(entry)
        else:
            entry.index = old.index
            self.rows.items[old.index] = entry
            self.rows.changed(old.index, entry.total - old.total)
            self._dirty.discard(old)  # (and skipped if a cycle has it: _flush_now)
            self._withheld.pop(old, None)
            for seg in [old.header, *old.body]:
                self._rendered.pop(seg, None)
                self._previews.pop(seg, None)
        self._schedule()

    def _add_seg(self, entry: Entry, seg: Seg) -> None:
        seg.height = self._estimate(entry, seg)
        entry.body.append(seg)
        if not entry.collapsed:
            entry.append(seg)
            self.rows.changed(entry.index, seg.height)

    def _set_height(self, entry: Entry, seg: Seg, height: int) -> None:
        delta = height - seg.height
        seg.height = height
        if delta and seg.index < len(entry.items) and entry.items[seg.index] is seg:
            entry.changed(seg.index, delta)
            self.rows.changed(entry.index, delta)

    def _relayout(self, entry: Entry) -> None:
        """Rebuild one entry's rows (toggle, reset): O(its blocks)."""
        before = entry.total
        entry.items, entry.offs, entry.total = [], [0], 0
        if entry.header:
            entry.header.strips = None
        for seg in entry.shown():
            if seg.strips is None:
                seg.height = self._estimate(entry, seg)
            entry.append(seg)
        self.rows.changed(entry.index, entry.total - before)
        self._sync_size()

    def _relayout_all(self) -> None:
        """New width: every cached line is stale; estimate all heights again (O(blocks), no rendering)."""
        self._drop_strips()
        rows = TreeRows()
        for entry in self.rows.items:
            entry.items, entry.offs, entry.total = [], [0], 0
            for seg in entry.shown():
                seg.height = self._estimate(entry, seg)
                entry.append(seg)
            rows.append(entry)
        self.rows = rows
        self._sync_size()

    def _drop_strips(self) -> None:
        for seg in self._rendered:
            seg.strips = None
        self._rendered.clear()

    def _render_span(self, entry_index: int, seg_index: int, step: int, lines: int) -> None:
        for entry, seg in self._walk(entry_index, seg_index, step):
            self.strips(entry, seg)
            lines -= seg.height
            if lines <= 0:
                return

    def _walk(self, entry_index: int, seg_index: int | None, step: int) -> Iterator[tuple[Entry, Seg]]:
        """Shown segments from a position, forwards (+1) or backwards (-1)."""
        entries = self.rows.items
        while 0 <= entry_index < len(entries):
            entry = entries[entry_index]
            items = entry.items
            if seg_index is None:
                seg_index = len(items) - 1 if step < 0 else 0
            while 0 <= seg_index < len(items):
                yield entry, items[seg_index]
                seg_index += step
            entry_index += step
            seg_index = None

    def locate(self, y: int) -> tuple[Entry, Seg, int] | None:
        index = self.rows.find(y)
        if index is None:
            return None
        entry = self.rows.items[index]
        y -= self.rows.start(index)
        seg_index = entry.find(y)
        if seg_index is None:
            return None
        return entry, entry.items[seg_index], y - entry.start(seg_index)

    def _strip_at(self, y: int, budgeted: bool = False) -> Strip | None:
        found = self.locate(y)
        if found is None:
            return None
        entry, seg, line = found
        if budgeted and seg.strips is None and time.perf_counter() > self._budget_end and \
                not (seg.role == "md" and self.warming):  # (source text is what strips gives then)
            return self._placeholder(entry, seg, line)
        strips = self.strips(entry, seg)
        return strips[line] if line < len(strips) else None

    def nearest_key(self, keys: set[str] | dict[str, object]) -> str | None:
        """Of the given entry keys, the one nearest the bottom of the view (on screen first)."""
        entries = self.rows.items
        bottom = round(self.scroll_offset.y) + self.scrollable_content_region.height - 1
        index = self.rows.find(min(bottom, self.rows.total - 1))
        start = len(entries) - 1 if index is None else index
        for i in range(start, -1, -1):
            if entries[i].key in keys:
                return entries[i].key
        return next((e.key for e in entries[start + 1 :] if e.key in keys), None)

    def _nearest_collapsible(self) -> Entry | None:
        entries = self.rows.items
        bottom = round(self.scroll_offset.y) + self.scrollable_content_region.height - 1
        index = self.rows.find(min(bottom, self.rows.total - 1))
        start = len(entries) - 1 if index is None else index
        for i in range(start, -1, -1):
            if entries[i].collapsible:
                return entries[i]
        return next((e for e in entries[start + 1 :] if e.collapsible), None)
