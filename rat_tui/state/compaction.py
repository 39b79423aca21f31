"""Provides compaction markers: `compaction_update` upserts and `compaction_summary_chunk` appends. No I/O.

The first update for a compactionId fixes its place in the transcript; later ones patch it in place
(status, summary, error with patch semantics: omitted keeps, null or [] clears, a value replaces).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .children import block_text
from .models import Change, CompactionEntry, EntryAdded, EntryChanged, SessionState

if TYPE_CHECKING:
    from ..protocol.updates import CompactionSummaryChunk, CompactionUpdate


def _entry(state: SessionState, compaction_id: str, new_key: Any) -> tuple[CompactionEntry, bool]:
    entry = state.compactions.get(compaction_id)
    if entry is not None:
        return entry, False
    entry = CompactionEntry(new_key(state, "k"), compaction_id)
    state.compactions[compaction_id] = entry
    state.entries.append(entry)
    state.by_key[entry.key] = entry
    state.open_message = None
    return entry, True


def compaction_update(state: SessionState, update: CompactionUpdate, new_key: Any) -> list[Change]:
    entry, created = _entry(state, update.compaction_id, new_key)
    entry.status = update.status
    if update.status == "in_progress":
        state.compacting.add(update.compaction_id)
    else:
        state.compacting.discard(update.compaction_id)
    if "summary" in update.fields_set:
        entry.summary_parts = [block_text(b) for b in update.summary or ()]
    if "error" in update.fields_set:
        entry.error = update.error
    return [EntryAdded(entry)] if created else [EntryChanged(entry.key)]


def compaction_summary_chunk(state: SessionState, update: CompactionSummaryChunk, new_key: Any) -> list[Change]:
    entry, created = _entry(state, update.compaction_id, new_key)
    entry.summary_parts.append(block_text(update.content))
    return [EntryAdded(entry)] if created else [EntryChanged(entry.key)]


def toggle_compaction(state: SessionState, key: str) -> list[Change]:
    entry = state.by_key.get(key)
    if not isinstance(entry, CompactionEntry):
        return []
    entry.expanded = not entry.expanded
    return [EntryChanged(key)]
