"""Provides the transcript line of a prompt steered into a running turn (session/agent_controls.py). No I/O."""

from __future__ import annotations

from .models import Change, EntryAdded, MessageEntry, SessionState


def add_steered_message(state: SessionState, text: str) -> list[Change]:
    """The user's words, shown where they joined the turn; not a turn of their own."""
    state.next_key += 1
    entry = MessageEntry(f"u{state.next_key}", "user", None, [text], ("↪ steered into the running turn",))
    state.entries.append(entry)
    state.by_key[entry.key] = entry
    state.open_message = None
    return [EntryAdded(entry)]
