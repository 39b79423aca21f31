"""Provides typed `session/update` variants newer than the pinned SDK models (ACP schema 1.19).

Compaction (stable since 1.25), subagent sessions, inter-session messages and plan operations
(unstable in v1-latest/schema.unstable.json, announced stable since). Small frozen dataclasses,
parsed by hand from the raw dict: no pydantic, so nothing here slows startup. Patch semantics are
kept: a field the agent omitted is not in `fields_set`, a field it sent as `null` is (cleared).
Every parser returns None on a malformed update; wire.parse_update turns that into UnknownUpdate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _meta(raw: dict[str, Any]) -> dict[str, Any] | None:
    meta = raw.get("_meta")
    return meta if isinstance(meta, dict) else None


def _blocks(value: Any) -> list[dict[str, Any]]:
    """A ContentBlock array: invalid items skipped (x-deserialize-skip-invalid-items)."""
    if not isinstance(value, list):
        return []
    return [b for b in value if isinstance(b, dict) and isinstance(b.get("type"), str)]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class CompactionUpdate:
    """`compaction_update`: an upsert of one compaction, placed where it was first seen."""

    compaction_id: str
    status: str
    summary: tuple[dict[str, Any], ...] | None = None  # None: cleared or never sent (see fields_set)
    error: str | None = None
    fields_set: frozenset[str] = frozenset()
    meta: dict[str, Any] | None = None
    session_update: str = "compaction_update"


@dataclass(frozen=True)
class CompactionSummaryChunk:
    """`compaction_summary_chunk`: one content block appended to a compaction's summary."""

    compaction_id: str
    content: dict[str, Any]
    meta: dict[str, Any] | None = None
    session_update: str = "compaction_summary_chunk"


@dataclass(frozen=True)
class SubagentUpdate:
    """`subagent_update`: the parent announces or patches a child session it owns."""

    session_id: str
    title: str | None = None
    description: str | None = None
    can_cancel: bool = False
    # {"state": "running" | "idle" | "requires_action" | "unknown" | other, "stopReason"?: ...}
    state: dict[str, Any] | None = None
    cwd: str | None = None
    fields_set: frozenset[str] = frozenset()
    meta: dict[str, Any] | None = None
    session_update: str = "subagent_update"


@dataclass(frozen=True)
class SessionMessage:
    """`session_message`: an upsert of a message between two sessions (parent → child and back)."""

    message_id: str
    sender: str | None = None
    recipient: str | None = None
    # The same message's id in the other session's transcript (incoming view / outgoing view).
    sender_message_id: str | None = None
    recipient_message_id: str | None = None
    content: tuple[dict[str, Any], ...] | None = None
    fields_set: frozenset[str] = frozenset()
    meta: dict[str, Any] | None = None
    session_update: str = "session_message"


@dataclass(frozen=True)
class SessionMessageChunk:
    """`session_message_chunk`: one streamed content block of an inter-session message."""

    message_id: str
    content: dict[str, Any]
    meta: dict[str, Any] | None = None
    session_update: str = "session_message_chunk"


@dataclass(frozen=True)
class PlanEntryData:
    content: str
    priority: str
    status: str


@dataclass(frozen=True)
class PlanUpdate:
    """`plan_update`: one plan, keyed by planId, replaced whole: a checklist, a Markdown document or a file."""

    plan_id: str
    kind: str  # "items" | "markdown" | "file"
    entries: tuple[PlanEntryData, ...] = ()
    markdown: str = ""
    uri: str | None = None
    meta: dict[str, Any] | None = None
    session_update: str = "plan_update"


@dataclass(frozen=True)
class PlanRemoved:
    plan_id: str
    meta: dict[str, Any] | None = None
    session_update: str = "plan_removed"


def parse_compaction_update(raw: dict[str, Any]) -> CompactionUpdate | None:
    cid, status = raw.get("compactionId"), raw.get("status")
    if not isinstance(cid, str) or not isinstance(status, str):
        return None
    fields = frozenset(k for k in ("summary", "error") if k in raw)
    summary = tuple(_blocks(raw.get("summary"))) if isinstance(raw.get("summary"), list) else None
    return CompactionUpdate(cid, status, summary or None, _str(raw.get("error")), fields, _meta(raw))


def parse_compaction_summary_chunk(raw: dict[str, Any]) -> CompactionSummaryChunk | None:
    cid, content = raw.get("compactionId"), raw.get("content")
    if not isinstance(cid, str) or not _blocks([content]):
        return None
    return CompactionSummaryChunk(cid, content, _meta(raw))


def parse_subagent_update(raw: dict[str, Any]) -> SubagentUpdate | None:
    sid = raw.get("sessionId")
    if not isinstance(sid, str) or not sid:
        return None
    fields = frozenset(k for k in ("title", "description", "capabilities", "state", "cwd") if k in raw)
    capabilities = raw.get("capabilities")
    can_cancel = isinstance(capabilities, dict) and isinstance(capabilities.get("cancel"), dict)
    state = raw.get("state")
    state = state if isinstance(state, dict) and isinstance(state.get("state"), str) else None
    return SubagentUpdate(
        sid, _str(raw.get("title")), _str(raw.get("description")), can_cancel, state, _str(raw.get("cwd")),
        fields, _meta(raw),
    )


def parse_session_message(raw: dict[str, Any]) -> SessionMessage | None:
    mid = raw.get("messageId")
    if not isinstance(mid, str):
        return None
    fields = frozenset(k for k in ("senderSessionId", "recipientSessionId", "content") if k in raw)
    content = tuple(_blocks(raw.get("content"))) if isinstance(raw.get("content"), list) else None
    return SessionMessage(
        mid, _str(raw.get("senderSessionId")), _str(raw.get("recipientSessionId")),
        _str(raw.get("senderMessageId")), _str(raw.get("recipientMessageId")), content, fields, _meta(raw),
    )


def parse_session_message_chunk(raw: dict[str, Any]) -> SessionMessageChunk | None:
    mid, content = raw.get("messageId"), raw.get("content")
    if not isinstance(mid, str) or not _blocks([content]):
        return None
    return SessionMessageChunk(mid, content, _meta(raw))


def _entries(value: Any) -> tuple[PlanEntryData, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(
        PlanEntryData(e["content"], str(e.get("priority") or "medium"), str(e.get("status") or "pending"))
        for e in value
        if isinstance(e, dict) and isinstance(e.get("content"), str)
    )


def parse_plan_update(raw: dict[str, Any]) -> PlanUpdate | None:
    plan = raw.get("plan")
    if not isinstance(plan, dict) or not isinstance(plan.get("planId"), str):
        return None
    kind = plan.get("type")
    if kind == "items":
        return PlanUpdate(plan["planId"], "items", entries=_entries(plan.get("entries")), meta=_meta(raw))
    if kind == "markdown" and isinstance(plan.get("content"), str):
        # Schema 1.34 (stable): a Markdown plan may name its file with an absolute `path` (shown, never read).
        path = plan.get("path") if isinstance(plan.get("path"), str) and plan["path"].startswith("/") else None
        return PlanUpdate(plan["planId"], "markdown", markdown=plan["content"], uri=path, meta=_meta(raw))
    if kind == "file" and isinstance(plan.get("uri"), str):
        return PlanUpdate(plan["planId"], "file", uri=plan["uri"], meta=_meta(raw))
    return None


@dataclass(frozen=True)
class PromptSuggestionsUpdate:
    """`prompt_suggestions_update` (unstable, schema 1.32): the prompts the agent predicts the user sends next,
    most likely first, each as its text (text blocks joined; a `resource_link` as `@path`); it replaces the
    list, empty withdraws it. Not part of the conversation: never a transcript entry."""

    suggestions: tuple[str, ...] = ()
    meta: dict[str, Any] | None = None
    session_update: str = "prompt_suggestions_update"


def _suggestion_text(item: Any) -> str:
    blocks = item.get("prompt") if isinstance(item, dict) and isinstance(item.get("prompt"), list) else []
    parts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "resource_link" and isinstance(block.get("uri"), str):
            uri = block["uri"]
            parts.append("@" + (uri[len("file://"):] if uri.startswith("file://") else uri))
    return " ".join(" ".join(parts).split())  # one line: the composer shows it as ghost text


def parse_prompt_suggestions_update(raw: dict[str, Any]) -> PromptSuggestionsUpdate | None:
    items = raw.get("suggestions")
    if not isinstance(items, list):
        return None
    texts = tuple(text for text in (_suggestion_text(item) for item in items) if text)
    return PromptSuggestionsUpdate(texts, _meta(raw))


def parse_plan_removed(raw: dict[str, Any]) -> PlanRemoved | None:
    pid = raw.get("planId")
    return PlanRemoved(pid, _meta(raw)) if isinstance(pid, str) else None


PARSERS = {
    "compaction_update": parse_compaction_update,
    "compaction_summary_chunk": parse_compaction_summary_chunk,
    "subagent_update": parse_subagent_update,
    "session_message": parse_session_message,
    "session_message_chunk": parse_session_message_chunk,
    "plan_update": parse_plan_update,
    "plan_removed": parse_plan_removed,
    "prompt_suggestions_update": parse_prompt_suggestions_update,
}
