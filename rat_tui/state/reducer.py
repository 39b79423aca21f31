"""Provides the reducer: (state, parsed update or local action) -> what changed. No I/O.

It mutates `state` in place (O(1) per streamed chunk) and returns the change events; it is pure in
the sense that matters for tests: the same inputs always give the same state and changes.
"""

from __future__ import annotations

import json
import time
from typing import Any

from . import children, compaction, plans, quota
from .media import annotation_badge, collect_images, media_placeholder
from ..protocol.sanitize import clean, clean_ansi, clean_data, incomplete_escape
from ..protocol.wire import NEWER_KINDS, MappedUpdate, NoticeUpdate, UnknownUpdate
from .models import (
    Change,
    Entry,
    EntryAdded,
    EntryChanged,
    FieldChanged,
    GenericEntry,
    MessageEntry,
    NoticeEntry,
    TERMINAL_DISPLAY_LIMIT,
    WORKING,
    PlanItem,
    Role,
    SessionState,
    Severity,
    TerminalState,
    TextAppended,
    ToolCallEntry,
)

CHUNK_ROLES: dict[str, Role] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
# Key prefix of the notices an agent sends, so a view can toast those and not rat-tui's own lines.
AGENT_NOTICE_PREFIX = "an"
TOOL_FIELDS = {
    "title": "title",
    "kind": "kind",
    "status": "status",
    "content": "content",
    "locations": "locations",
    "raw_input": "raw_input",
    "raw_output": "raw_output",
    "field_meta": "meta",
}


def apply_update(state: SessionState, update: Any) -> list[Change]:
    """Apply one parsed `session/update` (an acp.schema model or an UnknownUpdate)."""
    if isinstance(update, UnknownUpdate):
        return add_entry(state, GenericEntry(new_key(state, "g"), update.kind, update.raw, update.problem))
    if isinstance(update, NoticeUpdate):
        text = f"{update.title}\n{update.description}" if update.description else update.title
        state.open_message = None
        return add_entry(state, NoticeEntry(new_key(state, AGENT_NOTICE_PREFIX), text, notice_severity(update.severity)))
    if isinstance(update, MappedUpdate):  # a v2 agent's (protocol/v2.py, imported by then)
        return _apply_v2(state, update)
    newer = _newer_update(state, update)
    if newer is not None:
        return newer
    kind = update.session_update
    if kind in CHUNK_ROLES:
        changes = _chunk(state, CHUNK_ROLES[kind], update.message_id, content_text(update.content),
                         _is_discrete(getattr(update, "field_meta", None)))
        if getattr(update.content, "type", None) == "image" and state.open_message is not None:
            collect_images(state, state.open_message.key, [_dump(update.content)])
        return changes
    if kind == "tool_call":
        return _tool_call(state, update)
    if kind == "tool_call_update":
        return _tool_call(state, update)
    if kind == "plan":
        state.open_message = None  # text after a plan is a new paragraph, not glued onto the text before
        state.plan = tuple(PlanItem(e.content, str(e.priority), str(e.status)) for e in update.entries)
        return [FieldChanged("plan")]
    if kind == "available_commands_update":
        state.commands = tuple(_dump(c) for c in update.available_commands)
        return [FieldChanged("commands")]
    if kind == "current_mode_update":
        state.current_mode_id = update.current_mode_id
        return [FieldChanged("mode")]
    if kind == "config_option_update":
        state.config_options = tuple(_dump(o) for o in update.config_options)
        return [FieldChanged("config")]
    if kind == "session_info_update":
        fields = update.model_fields_set
        if "title" in fields:
            state.title = update.title
        if "updated_at" in fields:
            state.updated_at = update.updated_at
        return [FieldChanged("info")]
    if kind == "usage_update":
        state.usage = {k: v for k, v in _dump(update).items() if k != "sessionUpdate"}
        return [FieldChanged("usage")]
    raw = _dump(update)
    return add_entry(state, GenericEntry(new_key(state, "g"), str(kind), raw))


def _newer_update(state: SessionState, update: Any) -> list[Change] | None:
    """Variants newer than the SDK's models (protocol/updates.py), or None for the others."""
    kind = getattr(update, "session_update", None)
    if kind not in NEWER_KINDS:  # the SDK's models never carry these kinds
        return None
    if kind == "compaction_update":
        return compaction.compaction_update(state, update, new_key)
    if kind == "compaction_summary_chunk":
        return compaction.compaction_summary_chunk(state, update, new_key)
    if kind == "subagent_update":
        return children.subagent_update(state, update, new_key)
    if kind in ("session_message", "session_message_chunk"):
        return children.session_message(state, update, new_key)
    if kind == "prompt_suggestions_update":  # not the conversation's: no entry, the text stays open
        state.suggestions = tuple(clean(text)[:500] for text in update.suggestions)
        return [FieldChanged("suggestions")]
    state.open_message = None  # a plan splits the text around it, as a tool call does
    if kind == "plan_update":
        return plans.plan_update(state, update)
    return plans.plan_removed(state, update)


def apply_child_update(state: SessionState, session_id: str, update: Any) -> list[Change]:
    """Apply one parsed update sent under a child session's id (state/children.py) to that child."""
    return children.apply_child(state, session_id, update, apply_update)


def _is_discrete(meta: Any) -> bool:
    """qwen-code marks text its background tasks produce (`_meta.qwenDiscreteMessage`, `backgroundTask`)."""
    return isinstance(meta, dict) and (meta.get("qwenDiscreteMessage") is True or isinstance(meta.get("backgroundTask"), dict))


def _chunk(state: SessionState, role: Role, message_id: str | None, text: str, discrete: bool = False) -> list[Change]:
    if role == "user" and message_id is None and text and state.echo_left.startswith(text):
        state.echo_left = state.echo_left[len(text):]  # the prompt just sent, echoed back: shown once
        return []
    previous = state.last_chunk_kind
    if text or message_id is not None or discrete:
        state.last_chunk_kind = "id" if message_id is not None else "discrete" if discrete else "plain"
    if message_id is not None and role == "user" and _echo(state, message_id):
        return []
    if message_id is not None:
        entry = state.messages.get((role, message_id))
    else:
        entry = state.open_message if state.open_message and state.open_message.role == role else None
        if entry is not None and (entry.message_id is not None or previous != "plain" or discrete):
            # Text without a messageId after text with one, or a background task's own message
            # (qwen-code): a block of its own instead of glued onto the turn's text.
            entry = None
    if entry is not None:
        state.open_message = entry
        if not text:
            return []
        entry.parts.append(text)
        return [TextAppended(entry.key, text)]
    if not text:
        return []  # Claude opens every message with an empty chunk: no empty block for it.
    entry = MessageEntry(new_key(state, "m"), role, message_id, [text])
    if message_id is not None:
        state.messages[(role, message_id)] = entry
    state.open_message = entry
    return add_entry(state, entry)


def _tool_call(state: SessionState, update: Any) -> list[Change]:
    fields = update.model_fields_set
    patch = {}
    for attr, target in TOOL_FIELDS.items():
        if attr not in fields:
            continue
        value = getattr(update, attr)
        if attr in ("content", "locations"):
            value = [_dump(item) for item in value or []]
        patch[target] = value
    tool_name = getattr(update, "tool_name", None)  # schema 1.22's `name`, kept by wire.parse_update
    if tool_name:
        patch["name"] = tool_name
    return _patch_tool_call(state, update.tool_call_id, patch)


# What a ToolCallEntry field may hold (raw_input / raw_output: any JSON).
_FIELD_TYPES: dict[str, Any] = {"title": str, "status": str, "name": (str, type(None)), "kind": (str, type(None)),
                                "content": (list, type(None)), "locations": (list, type(None)), "meta": (dict, type(None)),
                                "capabilities": (dict, type(None))}


def _patch_tool_call(state: SessionState, call_id: str, fields: dict[str, Any], meta_by_key: bool = False) -> list[Change]:
    """Create the tool call on first sight, else patch it: title and status are never cleared; content
    and locations replace (None clears); v2's `_meta` patches by key (`meta_by_key`)."""
    entry = state.tool_calls.get(call_id)
    created = entry is None
    if entry is None:
        entry = ToolCallEntry(new_key(state, "t"), call_id)
        state.tool_calls[call_id] = entry
    for target, value in fields.items():
        if target in ("title", "status") and value is None:
            continue
        expected = _FIELD_TYPES.get(target)
        if expected is not None and not isinstance(value, expected):
            continue  # (the wire mappings check these; never a value the cards cannot draw)
        if target in ("content", "locations"):
            value = [item for item in value or [] if isinstance(item, dict)]
        elif target == "meta" and isinstance(value, dict):
            output = value.get("terminal_output")
            if isinstance(output, dict) and "data" in output:  # shown below, once; raw (clean_update): not kept
                value = {**value, "terminal_output": {k: v for k, v in output.items() if k != "data"}}
            if meta_by_key and isinstance(entry.meta, dict):
                value = {**entry.meta, **value}
        setattr(entry, target, value)
    state.open_message = None
    if "content" in fields:
        collect_images(state, entry.key, [item.get("content") for item in entry.content if isinstance(item, dict)])
    changes = add_entry(state, entry) if created else [EntryChanged(entry.key)]
    if isinstance(fields.get("meta"), dict):  # this update's own: a later update without it shows nothing again
        changes += _display_terminal(state, fields["meta"])
    return changes


def _display_terminal(state: SessionState, meta: dict[str, Any]) -> list[Change]:
    """Terminals an agent runs itself and only shows us (`_meta.terminal_*`, claude-agent-acp)."""
    changes: list[Change] = []
    output = meta.get("terminal_output")
    if isinstance(output, dict) and isinstance(output.get("terminal_id"), str):
        changes += terminal_output(state, output["terminal_id"], str(output.get("data") or ""))
    done = meta.get("terminal_exit")
    if isinstance(done, dict) and isinstance(done.get("terminal_id"), str):
        code = done.get("exit_code")
        changes += terminal_exit(state, done["terminal_id"], code if isinstance(code, int) else None, done.get("signal"))
    return changes


def terminal_output(state: SessionState, terminal_id: str, text: str) -> list[Change]:
    """Raw output appended to a terminal, cleaned here (`clean_ansi`: colours kept); an escape sequence or
    a carriage return cut off at its end waits for the next piece, to be cleaned whole."""
    terminal = state.terminals.setdefault(terminal_id, TerminalState(terminal_id))
    text = terminal.pending + str(text)
    cut = incomplete_escape(text)
    terminal.pending = text[cut:]
    terminal.output += clean_ansi(text[:cut])
    if len(terminal.output) > TERMINAL_DISPLAY_LIMIT:
        terminal.output = terminal.output[-TERMINAL_DISPLAY_LIMIT:]
    return _cards_showing(state, terminal_id)


def terminal_exit(state: SessionState, terminal_id: str, exit_code: int | None, signal: str | None) -> list[Change]:
    terminal = state.terminals.setdefault(terminal_id, TerminalState(terminal_id))
    terminal.exit_code, terminal.signal, terminal.exited = exit_code, clean(signal) if signal else None, True
    terminal.pending = ""
    return _cards_showing(state, terminal_id)


def terminal_snapshot(state: SessionState, terminal_id: str, output: str | None, exited: bool = False,
                      exit_code: int | None = None, signal: str | None = None) -> list[Change]:
    """A terminal's whole output so far (None: unchanged) and, when `exited`, how it ended: a v2
    `terminal_update`, or our recorded answer to `terminal/output` in a replayed journal."""
    terminal = state.terminals.setdefault(terminal_id, TerminalState(terminal_id))
    if output is not None:  # sanitised here (SGR kept)
        terminal.output, terminal.pending = clean_ansi(output)[-TERMINAL_DISPLAY_LIMIT:], ""
    if exited:
        terminal.exit_code, terminal.signal, terminal.exited = exit_code, clean(signal) if signal else None, True
    return _cards_showing(state, terminal_id)


def _cards_showing(state: SessionState, terminal_id: str) -> list[Change]:
    return [
        EntryChanged(call.key)
        for call in state.tool_calls.values()
        if any(item.get("terminalId") == terminal_id for item in call.content)
    ]


# -- ACP v2 (protocol/v2.py maps the wire onto these) ---------------------------------------------


def _apply_v2(state: SessionState, update: Any) -> list[Change]:
    from ..protocol.v2 import MessageUpsert, TerminalAppend, TerminalSnapshot, ToolCallPatch, ToolContentAppend

    if isinstance(update, MessageUpsert):
        return _upsert_message(state, update.role, update.message_id, update.text)  # type: ignore[arg-type]
    if isinstance(update, ToolCallPatch):
        return _patch_tool_call(state, update.tool_call_id, dict(update.fields), meta_by_key=True)
    if isinstance(update, ToolContentAppend):
        call = state.tool_calls.get(update.tool_call_id)
        content = [*(call.content if call else []), *update.items]
        return _patch_tool_call(state, update.tool_call_id, {"content": content})
    if isinstance(update, TerminalSnapshot):  # its output decoded from base64 already
        if update.cancellable is not None:
            state.terminals.setdefault(update.terminal_id, TerminalState(update.terminal_id)).cancellable = update.cancellable
        return terminal_snapshot(state, update.terminal_id, update.output, update.exited, update.exit_code,
                                 update.signal)
    if isinstance(update, TerminalAppend):
        return terminal_output(state, update.terminal_id, update.text)
    state.activity = update.state
    state.background = update.background
    changes: list[Change] = [FieldChanged("activity")]
    if update.meta:
        changes += quota.set_quota(state, update.meta)
    return changes


def _echo(state: SessionState, message_id: str) -> bool:
    """v2 agents echo each prompt under its messageId: the first echo claims the prompt we showed when it
    was sent, and the echo's own content (the same words) is not shown a second time."""
    if message_id in state.echo_ids:
        return True
    pending = state.pending_echo
    if pending is None or ("user", message_id) in state.messages:
        return False
    state.pending_echo = None
    pending.message_id = message_id
    state.messages[("user", message_id)] = pending
    state.echo_ids.add(message_id)
    return True


def _upsert_message(state: SessionState, role: Role, message_id: str, text: str) -> list[Change]:
    """`user_message` / `agent_message` / `agent_thought`: the message's whole content (later chunks append)."""
    if role == "user" and _echo(state, message_id):
        return []
    entry = state.messages.get((role, message_id))
    if entry is None:
        return _chunk(state, role, message_id, text)  # empty: the first chunk creates it
    state.open_message = entry
    old = entry.text
    if text == old:
        return []
    if text.startswith(old):
        entry.parts.append(text[len(old):])
        return [TextAppended(entry.key, text[len(old):])]
    entry.parts[:] = [text] if text else []
    return [EntryChanged(entry.key)]


def set_protocol(state: SessionState, version: int) -> list[Change]:
    """The ACP version the agent answered `initialize` with: the store maps updates by it."""
    if state.protocol_version == version:
        return []
    state.protocol_version = version
    return [FieldChanged("protocol")]


def set_pending_permissions(state: SessionState, count: int) -> list[Change]:
    state.pending_permissions = count
    return [FieldChanged("permissions")]


def mark_auto_decision(state: SessionState, tool_call_id: str, text: str) -> list[Change]:
    call = state.tool_calls.get(tool_call_id)
    if call is None:
        return []
    call.auto_decision = text
    return [EntryChanged(call.key)]


def mark_rejected(state: SessionState, tool_call_id: str) -> list[Change]:
    call = state.tool_calls.get(tool_call_id)
    if call is None or call.rejected:
        return []
    call.rejected = True
    return [EntryChanged(call.key)]


def toggle_tool_call(state: SessionState, key: str) -> list[Change]:
    call = state.by_key.get(key)
    if not isinstance(call, ToolCallEntry):
        return []
    call.expanded = not call.expanded
    return [EntryChanged(key)]


# -- local actions ---------------------------------------------------------------------------


def add_user_message(state: SessionState, text: str, attachments: tuple[str, ...] = ()) -> list[Change]:
    """The user's own prompt, shown at once (agents do not echo live prompts back), with its attachments."""
    entry = MessageEntry(new_key(state, "u"), "user", None, [text], tuple(attachments))
    state.turns += 1
    state.echo_left = text
    if state.protocol_version >= 2:
        state.pending_echo = entry
    changes = add_entry(state, entry)
    state.open_message = None
    return changes


def add_notice(state: SessionState, text: str, severity: Severity = "info") -> list[Change]:
    """One of rat-tui's own lines; it may quote the agent (an error, its stderr), so it is cleaned."""
    state.open_message = None
    return add_entry(state, NoticeEntry(new_key(state, "n"), clean(text), severity))


def is_agent_notice(entry: Entry) -> bool:
    """True for a notice the agent sent (`notice` update), False for rat-tui's own (add_notice)."""
    return isinstance(entry, NoticeEntry) and entry.key.startswith(AGENT_NOTICE_PREFIX)


def notice_severity(severity: str) -> Severity:
    """An agent notice's severity as ours: custom (`_x`) and future values read as info."""
    return severity if severity in ("info", "warning", "error") else "info"  # type: ignore[return-value]


def set_status(state: SessionState, status: str, detail: str = "") -> list[Change]:
    detail = clean(detail)  # often an error's text, the agent's words
    if state.status == status and state.status_detail == detail:
        return []
    if state.status != status:
        state.status_since = time.monotonic()
        if status == WORKING:
            state.stopped_by_user = False  # a new turn: the last one's stop is history
    state.status = status
    state.status_detail = detail
    return [FieldChanged("status")]


def set_agent(state: SessionState, name: str) -> list[Change]:
    state.agent_name = clean(name)
    return [FieldChanged("agent")]


def set_host(state: SessionState, host: str) -> list[Change]:
    """Where the agent runs (a remote agent's `host:port`), for the tab and the status bar."""
    state.host = clean(host)
    return [FieldChanged("agent")]


def set_session(state: SessionState, session_id: str, result: dict[str, Any]) -> list[Change]:
    """Take what `session/new` answered: id, modes, config options, legacy models."""
    state.session_id = session_id
    result = clean_data(result)  # names and descriptions of modes, models and options are shown
    changes: list[Change] = [FieldChanged("session")]
    modes = _shaped(result.get("modes"), "availableModes", "id", "currentModeId")
    if modes is not None:
        state.modes = modes
        state.current_mode_id = modes.get("currentModeId")
        changes.append(FieldChanged("mode"))
    options = result.get("configOptions")
    if isinstance(options, list):
        state.config_options = tuple(o for o in options if _is_config_option(o))
        changes.append(FieldChanged("config"))
    models = _shaped(result.get("models"), "availableModels", "modelId", "currentModelId")
    if models is not None:
        state.models = models
        changes.append(FieldChanged("models"))
    commands = result.get("availableCommands")  # v2 answers with the initial command list
    if isinstance(commands, list):
        state.commands = tuple(c for c in commands if isinstance(c, dict))
        changes.append(FieldChanged("commands"))
    return changes


def _shaped(raw: Any, items: str, key: str, current: str) -> dict[str, Any] | None:
    """Legacy modes or models as the UI reads them: entries that are objects with a string id, a string
    current id (else none); anything else of the wrong shape is dropped, never shown half-broken."""
    if not isinstance(raw, dict):
        return None
    entries = raw.get(items)
    kept = [e for e in entries if isinstance(e, dict) and isinstance(e.get(key), str)] if isinstance(entries, list) else []
    shaped = {**raw, items: kept}
    if not isinstance(raw.get(current), str):
        shaped.pop(current, None)
    return shaped


def _is_config_option(option: Any) -> bool:
    """A config option the UI can show: an object with a string id, and for a select a list of options."""
    if not isinstance(option, dict) or not isinstance(option.get("id"), str):
        return False
    return option.get("type") != "select" or isinstance(option.get("options"), list)


def set_config_options(state: SessionState, options: list[Any]) -> list[Change]:
    """The complete list of config options, as a `session/set_config_option` answer carries it."""
    options = clean_data(options) if isinstance(options, list) else []
    state.config_options = tuple(o for o in options if _is_config_option(o))
    return [FieldChanged("config")]


def set_current_mode(state: SessionState, mode_id: str) -> list[Change]:
    """A legacy `session/set_mode` the agent accepted (it may also send `current_mode_update`)."""
    state.current_mode_id = mode_id
    return [FieldChanged("mode")]


def set_current_model(state: SessionState, model_id: str) -> list[Change]:
    """A legacy `session/set_model` the agent accepted: no notification reports it."""
    state.models = {**(state.models or {}), "currentModelId": model_id}
    return [FieldChanged("models")]


def end_turn(state: SessionState, stop_reason: str) -> list[Change]:
    state.stop_reason = clean(stop_reason)
    state.open_message = None
    state.pending_echo = None
    state.echo_left = ""
    changes: list[Change] = [FieldChanged("turn")]
    if stop_reason == "cancelled":
        for call in state.tool_calls.values():
            if call.status in ("pending", "in_progress"):
                call.status = "cancelled"  # the client's own mark: the agent will not finish it
                changes.append(EntryChanged(call.key))
    return changes


def fail_turn(state: SessionState) -> list[Change]:
    """The agent died mid-turn: the turn failed (not cancelled); its unfinished tool calls too."""
    state.stop_reason = "failed"
    state.open_message = None
    changes: list[Change] = [FieldChanged("turn")]
    for call in state.tool_calls.values():
        if call.status in ("pending", "in_progress"):
            call.status = "failed"  # the client's own mark: the agent that ran it is gone
            changes.append(EntryChanged(call.key))
    return changes


# -- helpers ---------------------------------------------------------------------------------


def content_text(block: Any) -> str:
    """Markdown for one content block: text as is, other kinds as a short readable line."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    badge = annotation_badge(_dump(getattr(block, "annotations", None)))
    badge = f" *‹{badge}›*" if badge else ""
    if kind == "resource_link":
        label = block.title or block.name or block.uri
        return f"\n[{label}]({block.uri}){badge}\n"
    if kind in ("image", "audio"):
        placeholder = media_placeholder(kind, block.mime_type, block.data, getattr(block, "uri", None))
        placeholder = placeholder.replace("*", "\\*")
        return f"\n*{placeholder}*{badge}\n"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return f"\n`{resource.uri}`{badge}\n```\n{text}\n```\n"
        return f"\n*[resource: {resource.uri}]*{badge}\n"
    return f"\n```json\n{json.dumps(_dump(block), indent=2)}\n```\n"


def _dump(model: Any) -> Any:
    if hasattr(model, "model_dump"):
        return model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return model


def new_key(state: SessionState, prefix: str) -> str:
    state.next_key += 1
    return f"{prefix}{state.next_key}"


def add_entry(state: SessionState, entry: Entry) -> list[Change]:
    state.entries.append(entry)
    state.by_key[entry.key] = entry
    return [EntryAdded(entry)]
