"""Provides child sessions (subagents) as nested state: announce, route, message, describe. No I/O.

A `subagent_update` on a session announces (or patches) a child that session owns; the child's own
updates arrive under the child's sessionId and go to the child's SessionState, never into the
parent's text. `session_message` upserts a message between two sessions: the parent's view of a
message to or from a child and the child's own view land in the child's transcript once (keyed by
the child-side message id). A card entry in the parent's transcript stands for the child: the
parent's store tells its widgets `EntryChanged(card)` and `ChildChanged` with the child's own changes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .models import (
    Change,
    ChildChanged,
    ChildSessionEntry,
    EntryAdded,
    EntryChanged,
    FieldChanged,
    MessageEntry,
    SessionState,
    TextAppended,
    ToolCallEntry,
)

if TYPE_CHECKING:
    from ..protocol.updates import SessionMessage, SessionMessageChunk, SubagentUpdate

ACTIVITY_CHARS = 80


def block_text(block: Any) -> str:
    """Markdown for one raw content block (dict): text as is, the rest as a short line."""
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "resource_link":
        return f"\n[{block.get('title') or block.get('name') or block.get('uri')}]({block.get('uri')})\n"
    if kind == "resource" and isinstance(block.get("resource"), dict):
        resource = block["resource"]
        if isinstance(resource.get("text"), str):
            return f"\n`{resource.get('uri')}`\n```\n{resource['text']}\n```\n"
        return f"\n*[resource: {resource.get('uri')}]*\n"
    if kind in ("image", "audio"):
        return f"\n*[{kind}: {block.get('mimeType', '?')}]*\n"
    return f"\n```json\n{json.dumps(block, indent=2, ensure_ascii=False)}\n```\n"


def _top(state: SessionState) -> SessionState:
    while state.parent is not None:
        state = state.parent
    return state


def _is_under(child: ChildSessionEntry, state: SessionState) -> bool:
    """Whether `child` is a child of `state` at any depth (walks up: never recursive)."""
    owner = child.state.parent
    while owner is not None:
        if owner is state:
            return True
        owner = owner.parent
    return False


def find(state: SessionState, session_id: Any) -> ChildSessionEntry | None:
    """The child (at any depth) with this sessionId, or None: one lookup in the top state's index."""
    if not isinstance(session_id, str):
        return None
    top = _top(state)
    child = top.descendants.get(session_id)
    if child is None or (state is not top and not _is_under(child, state)):
        return None
    return child


def running_count(state: SessionState) -> int:
    """Children (at any depth) running or waiting on the user: the tab badge counts them."""
    return sum(1 for child in all_children(state) if child.running)


def all_children(state: SessionState) -> list[ChildSessionEntry]:
    """Every child at any depth, depth first in announcement order (an explicit stack: chains of any depth)."""
    found: list[ChildSessionEntry] = []
    stack = [iter(state.children.values())]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        found.append(child)
        if child.state.children:
            stack.append(iter(child.state.children.values()))
    return found


def subagent_update(state: SessionState, update: SubagentUpdate, new_key: Any) -> list[Change]:
    """Announce a child (first update for its id: a card where it happens) or patch it."""
    child = state.children.get(update.session_id)
    created = child is None
    if child is None:
        child_state = SessionState(agent_name=state.agent_name, session_id=update.session_id, cwd=state.cwd,
                                   parent=state)
        child = ChildSessionEntry(new_key(state, "c"), update.session_id, child_state)
        child_state.owner = child
        state.children[update.session_id] = child
        _top(state).descendants.setdefault(update.session_id, child)
    # Announced again after a load (Claude 0.109 re-announces a live subagent): the same card, live again.
    child.replayed = False
    fields = update.fields_set
    if "title" in fields:
        child.title = update.title
    if "description" in fields:
        child.description = update.description
    if "capabilities" in fields:
        child.can_cancel = update.can_cancel
    if "cwd" in fields and update.cwd:
        child.state.cwd = update.cwd
    if "state" in fields:
        # A concrete state replaces the previous one whole; null leaves the activity unconfirmed.
        state_word = update.state.get("state") if update.state else None
        if child.run_state != (state_word if isinstance(state_word, str) else None):
            child.since = time.monotonic()
        child.run_state = state_word if isinstance(state_word, str) else None
        stop = update.state.get("stopReason") if update.state else None
        child.stop_reason = stop if isinstance(stop, str) else None
        if child.run_state == "running":
            child.state.status = "working"
        elif child.run_state == "idle":
            child.state.status = "ready"
    parent_tool = _parent_tool_use(update.meta)
    if parent_tool:
        child.parent_tool_call_id = parent_tool
    state.open_message = None
    if created:
        state.entries.append(child)
        state.by_key[child.key] = child
        return [EntryAdded(child), FieldChanged("children")]
    return [EntryChanged(child.key), FieldChanged("children")]


def apply_child(state: SessionState, session_id: str, update: Any, apply: Any) -> list[Change]:
    """Apply a parsed update sent under a child's sessionId (at any depth) to that child's state.

    `apply` is reducer.apply_update (passed in: the reducer imports this module)."""
    child = find(state, session_id)
    if child is None:
        return []
    child.replayed = False  # the agent names it now: it is live (again)
    changes = apply(child.state, update)
    _note_activity(child, changes, update)
    # The cards from `state`'s own down to the child's: each wraps what changed beneath it, as seen from its own
    # state. Only the top level is built here; the levels beneath are built when read (a full-screen view of
    # a child reads down to it), so a chain of any depth costs a walk up, not a nested event per level.
    path = [child]
    while child.state.parent is not state and child.state.parent is not None and child.state.parent.owner is not None:
        child = child.state.parent.owner
        path.append(child)
    path.reverse()
    return _nested(path, 0, tuple(changes))


def nested_changes(path: list[ChildSessionEntry], changes: tuple[Change, ...]) -> list[Change]:
    """`changes` of the child at the end of `path` (the cards from the top session's down to it), as the top
    session's store delivers them: each card changed, with the changes beneath it."""
    return _nested(path, 0, changes)


def _nested(path: list[ChildSessionEntry], level: int, changes: tuple[Change, ...]) -> list[Change]:
    card = path[level]
    inner: Any = changes if level == len(path) - 1 else _Beneath(path, level + 1, changes)
    return [EntryChanged(card.key), ChildChanged(card.key, card.child_id, inner)]


class _Beneath(Sequence):
    """The changes beneath a card on a path to a deeper child: read as the tuple of them, built when read."""

    __slots__ = ("_path", "_level", "_changes")

    def __init__(self, path: list[ChildSessionEntry], level: int, changes: tuple[Change, ...]) -> None:
        self._path, self._level, self._changes = path, level, changes

    def _built(self) -> list[Change]:
        return _nested(self._path, self._level, self._changes)

    def __getitem__(self, index: Any) -> Any:
        return self._built()[index]

    def __len__(self) -> int:
        return 2

    def __iter__(self) -> Iterator[Change]:
        return iter(self._built())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def session_message(state: SessionState, update: SessionMessage | SessionMessageChunk, new_key: Any) -> list[Change]:
    """An inter-session message: into the child it concerns, else into this session's own transcript."""
    if update.session_update == "session_message_chunk":
        target, role, key = _chunk_target(state, update.message_id)
        inner = _append(target, role, key, block_text(update.content), new_key)
        child = next((c for c in state.children.values() if c.state is target), None)
        if child is None:
            return inner
        _note_activity(child, inner, None)
        return [EntryChanged(child.key), ChildChanged(child.key, child.child_id, tuple(inner))]
    sender, recipient = update.sender, update.recipient
    child = state.children.get(sender or "") or state.children.get(recipient or "")
    own = state.session_id
    if child is not None:
        target = child.state
        role = "agent" if sender == child.child_id else "user"
        # The child's own view of the same message has the child-side id: key by it, so both land once.
        link = update.sender_message_id if role == "agent" else update.recipient_message_id
        key = link or update.message_id
    else:
        target, child = state, None
        role = "agent" if sender is not None and sender == own else "user"
        key = update.message_id
    _remember(state, update.message_id, target, role, key)
    if update.content is None:
        return []
    text = "".join(block_text(b) for b in update.content)
    existing = target.messages.get((role, key))
    if existing is not None:
        if existing.text == text:
            return []
        existing.parts[:] = [text]
        inner: list[Change] = [EntryChanged(existing.key)]
    else:
        inner = _append(target, role, key, text, new_key)
    if child is None:
        return inner
    _note_activity(child, inner, None)
    return [EntryChanged(child.key), ChildChanged(child.key, child.child_id, tuple(inner))]


def _remember(state: SessionState, message_id: str, target: SessionState, role: str, key: str) -> None:
    state.message_routes[message_id] = (target, role, key)


def _chunk_target(state: SessionState, message_id: str) -> tuple[SessionState | None, str, str]:
    return state.message_routes.get(message_id) or (state, "agent", message_id)


def _append(target: SessionState, role: str, key: str, text: str, new_key: Any) -> list[Change]:
    existing = target.messages.get((role, key))
    if existing is not None:
        if not text:
            return []
        existing.parts.append(text)
        return [TextAppended(existing.key, text)]
    if not text:
        return []
    entry = MessageEntry(new_key(target, "m"), role, key, [text])  # type: ignore[arg-type]
    target.messages[(role, key)] = entry
    target.entries.append(entry)
    target.by_key[entry.key] = entry
    target.open_message = None
    return [EntryAdded(entry)]


def _parent_tool_use(meta: dict[str, Any] | None) -> str | None:
    claude = meta.get("claudeCode") if isinstance(meta, dict) else None
    value = claude.get("parentToolUseId") if isinstance(claude, dict) else None
    return value if isinstance(value, str) and value else None


def _note_activity(child: ChildSessionEntry, changes: list[Change] | tuple[Change, ...], update: Any) -> None:
    """The card's "last activity": the latest text or tool call the child produced."""
    meta = getattr(update, "field_meta", None) if update is not None else None
    parent_tool = _parent_tool_use(meta if isinstance(meta, dict) else None)
    if parent_tool and child.parent_tool_call_id is None:
        child.parent_tool_call_id = parent_tool
    for change in reversed(changes):
        key = getattr(change, "key", None)
        if isinstance(change, EntryAdded):
            key = change.entry.key
        entry = child.state.by_key.get(key) if isinstance(key, str) else None
        if isinstance(entry, MessageEntry):
            text = " ".join(entry.text.split())
            child.last_activity = ("💭 " if entry.role == "thought" else "") + _tail(text)
            return
        if isinstance(entry, ToolCallEntry):
            child.last_activity = f"⚙ {entry.title} ({entry.status.replace('_', ' ')})"
            return


def _tail(text: str) -> str:
    return text if len(text) <= ACTIVITY_CHARS else "…" + text[-(ACTIVITY_CHARS - 1):]


def counts(child: ChildSessionEntry) -> tuple[int, int]:
    """(messages, tool calls) in the child's transcript."""
    messages = sum(1 for e in child.state.entries if isinstance(e, MessageEntry))
    return messages, len(child.state.tool_calls)


def set_pending(state: SessionState, child_id: str, count: int) -> list[Change]:
    """Permission questions of this child open right now (its card says so)."""
    child = find(state, child_id)
    if child is None or child.state.pending_permissions == count:
        return []
    child.state.pending_permissions = count
    return [EntryChanged(_top_card(state, child).key), FieldChanged("children")]


def _top_card(state: SessionState, child: ChildSessionEntry) -> ChildSessionEntry:
    """The card in this session's own transcript that holds `child` (itself, or an ancestor)."""
    top = child
    while top.state.parent is not None and top.state.parent is not state and top.state.parent.owner is not None:
        top = top.state.parent.owner
    return top


def toggle_card(state: SessionState, key: str) -> list[Change]:
    """Expand or collapse a child's card in place."""
    child = state.by_key.get(key)
    if not isinstance(child, ChildSessionEntry):
        return []
    child.expanded = not child.expanded
    return [EntryChanged(key)]


def newer_update_text(update: dict[str, Any]) -> str | None:
    """The searchable text of a raw update newer than the SDK's: subagent titles, session messages,
    compaction summaries, notices (history search finds a session by them)."""
    kind = update.get("sessionUpdate")
    if kind == "subagent_update":
        words = [update.get("title"), update.get("description")]
        return " ".join(w for w in words if isinstance(w, str)) or None
    if kind in ("session_message", "compaction_update"):
        blocks = update.get("content") if kind == "session_message" else update.get("summary")
        text = "".join(block_text(b) for b in blocks) if isinstance(blocks, list) else ""
        return text or None
    if kind == "compaction_summary_chunk":
        return block_text(update.get("content")) or None
    if kind == "notice":
        words = [update.get("title"), update.get("description")]
        return "\n".join(w for w in words if isinstance(w, str)) or None
    return None


def waiting(state: SessionState) -> bool:
    """A child (at any depth) says it requires action, or has a permission question open."""
    return any(c.waiting for c in all_children(state))


def mark_replayed(state: SessionState) -> list[Change]:
    """After a session/load or resume: every child known so far is history until the agent names it again
    (a `subagent_update`, or an update under its sessionId), so none is shown running or stopped, or asked for
    anything, on the strength of what a replay (or the previous agent process) said."""
    cards: dict[str, None] = {}
    for child in all_children(state):
        if not child.replayed:
            child.replayed = True
            cards[_top_card(state, child).key] = None
    return [*(EntryChanged(key) for key in cards), FieldChanged("children")] if cards else []
