"""Provides parsing of wire messages into the official ACP models, keeping unknown variants raw.

The models are the ACP SDK's own pydantic classes for the `session/update` variants, copied from its
`acp/schema.py` into `acp_models.py` by tools/gen_acp_models.py: `import acp.schema` built all of its 270-odd
classes (0.37 s here, with the GIL held), the copy builds the 52 the updates need (0.04 s, after pydantic's
own import). It is imported lazily (`schema()`); the app calls it in a thread after its first frame
(`RatApp._warm_up`), and that import gives way to the loop: see `_give_way`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from .. import priority

log = logging.getLogger("rat.wire")

_schema: ModuleType | None = None
_lock = threading.Lock()

# sessionUpdate discriminator -> model class name in the SDK's acp.schema, and in acp_models.py, the copy of
# those classes and what they need (the stable v1 variants and the unstable ones the pinned SDK knows).
UPDATE_MODELS = {
    "user_message_chunk": "UserMessageChunk",
    "agent_message_chunk": "AgentMessageChunk",
    "agent_thought_chunk": "AgentThoughtChunk",
    "tool_call": "ToolCallStart",
    "tool_call_update": "ToolCallProgress",
    "plan": "AgentPlanUpdate",
    "available_commands_update": "AvailableCommandsUpdate",
    "current_mode_update": "CurrentModeUpdate",
    "config_option_update": "ConfigOptionUpdate",
    "session_info_update": "SessionInfoUpdate",
    "usage_update": "UsageUpdate",
}


# The warm-up's import gives way to a key on its way to the screen (`_give_way`): GIVE_WAY_TOTAL s in all
# at most (the models come that much later at worst), and not once anything waits for them (`_wanted`).
GIVE_WAY_TOTAL = 0.5
_wanted = False
_given_way = 0.0  # seconds paused so far
_waits = 0  # sleeps in `_give_way` (tests)


def schema(*, give_way: bool = False) -> ModuleType:
    """The ACP models (`acp_models`, the SDK's update models), imported once (thread-safe).

    `give_way`: from a thread other than the loop's (the warm-up's, `schema_off_loop`): the import pauses while
    a key the user typed is on its way to the screen (`_give_way`). A call without it (on the loop: a headless
    session) wants the models now: an import under way stops pausing.
    """
    global _schema, _wanted
    if _schema is None:
        if not give_way:
            _wanted = True
        with _lock:
            if _schema is None:
                _schema = _import_models(give_way)
    return _schema


def schema_off_loop() -> ModuleType:
    """`schema`, from a thread the loop waits on (a session's updates held for the models, an executor's): the
    import gives way to a key on its way to the screen, as the warm-up's does, its modules (pydantic's own, 0.14
    s) and its model classes alike (GIVE_WAY_TOTAL s in all at most). Imported there without pausing, the
    models held the GIL for 0.14-0.2 s as a `session/load` replay began, and a key typed then waited 17 ms for
    the loop to run at all (54 ms to its echo, in a trace of load50000); the replay comes a key's frame later
    at most."""
    if _schema is not None:
        return _schema
    put_back = priority.imports_give_way(max(GIVE_WAY_TOTAL - _given_way, 0.0))
    try:
        return schema(give_way=True)
    finally:
        put_back()


def _give_way() -> None:
    """Sleep while an input event is on its way to the screen (`priority.input_wait`: from its arrival until
    its frame is drawn, INPUT_WINDOW at most).

    The import holds the GIL between statements, and on two cores the loop sharing it ran at half speed or
    worse: each of its calls that lets the GIL go (a write to the terminal, a poll, a journal commit) waited
    a switch interval (5 ms) to get it back. A key typed just after Enter echoed after 141 ms (bench/stress.py's
    first probe of `commands`, median of 4). Pausing whenever the loop was busy (not in its selector)
    was tried first: keys typed into a prompt echoed as soon, but the import, put off through every busy
    stretch, then fell on the dialog the prompt opened (the form's first probe 132 ms against 63).
    """
    global _given_way, _waits
    while not _wanted and _given_way < GIVE_WAY_TOTAL:
        wait = priority.input_wait()
        if wait <= 0:
            return
        pause = min(wait, 0.002)
        _waits += 1
        time.sleep(pause)
        _given_way += pause


def _import_models(give_way: bool = False) -> ModuleType:
    """The ACP models' module, with the update models' validators built before it is handed out: its models
    are built at first use (`defer_build`, see tools/gen_acp_models.py), and the loop must never build one.
    Measured: 0.04 s to import after pydantic's own 0.14 s, and 0.03 s to build (the SDK's whole
    `acp.schema` took 0.37 s with the same settings, 0.60 s with its own)."""
    put_back = _give_way_per_model_class() if give_way else None
    try:
        from . import acp_models as module
    finally:
        if put_back is not None:
            put_back()
    for name in UPDATE_MODELS.values():
        if give_way:
            _give_way()
        getattr(module, name).model_rebuild()
    return module


def _give_way_per_model_class() -> Callable[[], None]:
    """Make pydantic's model classes built in this thread `_give_way` first; return what puts it back."""
    from pydantic._internal._model_construction import ModelMetaclass

    new = ModelMetaclass.__dict__["__new__"]
    me = threading.get_ident()

    def giving_way(mcs: type, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == me:  # (a model class built elsewhere meanwhile does not wait)
            _give_way()
        return new.__func__(mcs, *args, **kwargs)

    ModelMetaclass.__new__ = staticmethod(giving_way)  # type: ignore[assignment, method-assign]

    def put_back() -> None:
        ModelMetaclass.__new__ = new  # type: ignore[assignment, method-assign]

    return put_back


def needs_models(raw: Any) -> bool:
    """Whether parsing this `update` object may import the ACP models: anything but a plain-text chunk,
    a notice or a variant newer than them (conservative: a session holds such updates until the
    models are in, rather than importing them on its loop)."""
    if _schema is not None or not isinstance(raw, dict):
        return False
    kind = raw.get("sessionUpdate")
    if kind == "notice" or kind in NEWER_KINDS:
        return False
    if kind in _TOOL_CALL_KINDS:
        return _tool_call(kind, raw) is None
    return not (kind in CHUNK_KINDS and _text_chunk(kind, raw) is not None)


# The variants protocol/updates.py parses (kept here so that module loads only when one arrives).
NEWER_KINDS = frozenset({
    "compaction_update", "compaction_summary_chunk", "subagent_update", "session_message",
    "session_message_chunk", "plan_update", "plan_removed", "prompt_suggestions_update",
})


@dataclass(frozen=True, slots=True)
class TextBlock:
    """A text content block `{"type": "text", "text": ...}` and nothing else (see TextChunk)."""

    text: str
    annotations: None = None
    field_meta: None = None

    @property
    def type(self) -> str:
        return "text"


@dataclass(frozen=True, slots=True)
class TextChunk:
    """A message or thought chunk of plain text: the shape of almost every update an answer streams.

    Read like the SDK's `ContentChunk` models (`session_update`, `content`, `message_id`, `field_meta`),
    but built without pydantic: validating it cost more than everything else per chunk, and the first
    chunks of an answer need not wait for the models' import. Any other shape goes to the models.
    """

    session_update: str
    content: TextBlock
    message_id: str | None = None
    field_meta: dict[str, Any] | None = None


CHUNK_KINDS = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})
_CHUNK_KEYS = frozenset({"sessionUpdate", "content", "messageId", "_meta"})


def _text_chunk(kind: str, raw: dict[str, Any]) -> TextChunk | None:
    """`raw` as a TextChunk when it is exactly a plain-text chunk the models would accept; else None."""
    content = raw.get("content")
    if type(content) is not dict or len(content) != 2 or content.get("type") != "text":
        return None
    text = content.get("text")
    message_id = raw.get("messageId")
    meta = raw.get("_meta")
    if type(text) is not str or not (message_id is None or type(message_id) is str) or \
            not (meta is None or type(meta) is dict) or not _CHUNK_KEYS.issuperset(raw):
        return None
    return TextChunk(kind, TextBlock(text), message_id, meta)


@dataclass(slots=True)
class ToolCallFields:
    """A `tool_call` or `tool_call_update` of the plain shapes agents send (text output, diffs, terminals,
    locations, `_meta` as it is): read like the SDK's `ToolCallStart` and `ToolCallProgress` (`session_update`,
    `tool_call_id`, the fields, `model_fields_set`), with its content and locations as the dicts those
    models dump to, built without pydantic. Validating, then dumping back to dicts for the state, was half
    of what a tool call cost to apply (toolcalls: 20,000 calls and their completions). Any other shape
    goes to the models (tests/test_tool_call_fields.py: both give the same state for every recorded one)."""

    session_update: str
    tool_call_id: str
    model_fields_set: frozenset[str]
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    content: list[dict[str, Any]] | None = None
    locations: list[dict[str, Any]] | None = None
    raw_input: Any = None
    raw_output: Any = None
    field_meta: dict[str, Any] | None = None
    tool_name: str | None = None


_TOOL_CALL_KINDS = frozenset({"tool_call", "tool_call_update"})
# wire key -> attribute, as the models alias them
_TOOL_CALL_KEYS = {"title": "title", "kind": "kind", "status": "status", "content": "content",
                   "locations": "locations", "rawInput": "raw_input", "rawOutput": "raw_output", "_meta": "field_meta"}
_TOOL_KINDS = frozenset({"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode",
                         "other"})
_TOOL_STATUSES = frozenset({"pending", "in_progress", "completed", "failed"})
_DIFF_KEYS = frozenset({"type", "path", "oldText", "newText"})
_LOCATION_KEYS = frozenset({"path", "line"})


def _tool_call(kind: str, raw: dict[str, Any]) -> ToolCallFields | None:
    """`raw` as ToolCallFields when every field is of a plain shape the models accept as they are (and
    dump back the same); else None."""
    call_id = raw.get("toolCallId")
    if type(call_id) is not str:
        return None
    values: dict[str, Any] = {}
    for key, value in raw.items():
        attr = _TOOL_CALL_KEYS.get(key)
        if attr is None:
            if key in ("sessionUpdate", "toolCallId"):
                continue
            if key == "name" and (value is None or type(value) is str):
                continue  # (schema 1.22's `name`: kept as `tool_name`, as parse_update does for the models)
            return None  # a field newer than the models
        if attr in ("raw_input", "raw_output"):
            pass  # any JSON
        elif attr == "field_meta":
            if value is not None and type(value) is not dict:
                return None
        elif attr == "title":
            if type(value) is not str:
                return None
        elif attr == "kind":
            if type(value) is not str or value not in _TOOL_KINDS:
                return None
        elif attr == "status":
            if type(value) is not str or value not in _TOOL_STATUSES:
                return None
        elif value is not None and not (_plain_content(value) if attr == "content" else _plain_locations(value)):
            return None
        values[attr] = value
    if kind == "tool_call" and "title" not in values:
        return None  # (required: the models reject it)
    name = raw.get("name")
    return ToolCallFields(kind, call_id, frozenset(values), tool_name=name or None, **values)


def _plain_content(items: Any) -> bool:
    if type(items) is not list:
        return False
    for item in items:
        if type(item) is not dict:
            return False
        kind = item.get("type")
        if kind == "content":
            block = item.get("content")
            if len(item) != 2 or type(block) is not dict or len(block) != 2 or block.get("type") != "text" or \
                    type(block.get("text")) is not str:
                return False
        elif kind == "diff":
            old = item.get("oldText", "")
            if not _DIFF_KEYS.issuperset(item) or type(item.get("path")) is not str or \
                    type(item.get("newText")) is not str or type(old) is not str:
                return False
        elif kind == "terminal":
            if len(item) != 2 or type(item.get("terminalId")) is not str:
                return False
        else:
            return False
    return True


def _plain_locations(items: Any) -> bool:
    if type(items) is not list:
        return False
    for item in items:
        if type(item) is not dict or not _LOCATION_KEYS.issuperset(item) or type(item.get("path")) is not str:
            return False
        line = item.get("line", 0)
        if type(line) is not int or line < 0:
            return False
    return True


_RUN_KINDS = frozenset({"agent_message_chunk", "agent_thought_chunk"})
_RUN_KEYS = frozenset({"sessionUpdate", "content", "messageId"})


def plain_text(raw: dict[str, Any]) -> tuple[str, str | None, str] | None:
    """(kind, messageId, text) of an agent message or thought chunk that is plain text and nothing else
    (no `_meta`, no carriage return: consecutive ones of the same message may be applied joined, and
    cleaned joined give what they give cleaned one by one); else None."""
    kind = raw.get("sessionUpdate")
    if kind not in _RUN_KINDS:
        return None
    content = raw.get("content")
    if type(content) is not dict or len(content) != 2 or content.get("type") != "text":
        return None
    text = content.get("text")
    message_id = raw.get("messageId")
    if type(text) is not str or "\r" in text or not (message_id is None or type(message_id) is str) or \
            not _RUN_KEYS.issuperset(raw):
        return None
    return kind, message_id, text


@dataclass(frozen=True)
class NoticeUpdate:
    """The unstable `notice` update (schema.unstable.json `Notice`), which the pinned SDK has no model for.

    Advisory, not session history: agents may send it at any time and must not rely on it being seen.
    `severity` is "info", "warning", "error" or a custom/future string (`_`-prefixed for extensions).
    """

    severity: str
    title: str
    description: str | None = None
    session_update: str = "notice"


class MappedUpdate:
    """An update protocol/v2.py maps a v2 `session/update` onto (its classes derive from this). The reducer
    tells them apart from v1's without importing protocol/v2.py, which a v1 agent never needs (6 ms of
    startup before the first frame)."""

    __slots__ = ()


@dataclass(frozen=True)
class UnknownUpdate:
    """A `session/update` we have no model for (newer protocol) or that failed to parse."""

    kind: str
    raw: dict[str, Any]
    problem: str | None = None


def parse_update(raw: Any) -> Any:
    """Parse one `update` object; never raises. Unknown or malformed variants come back raw."""
    if not isinstance(raw, dict):
        return UnknownUpdate("invalid", {"update": raw}, "update is not an object")
    kind = raw.get("sessionUpdate")
    if kind == "notice":
        return _parse_notice(raw)
    if kind in NEWER_KINDS:  # variants newer than the SDK's models (protocol/updates.py, imported on first use)
        from .updates import PARSERS

        parsed = PARSERS[kind](raw)
        if parsed is None:
            log.warning("malformed %s update dropped to generic display: %r", kind, raw)
            return UnknownUpdate(kind, raw, f"malformed {kind}")
        return parsed
    if kind in CHUNK_KINDS and (chunk := _text_chunk(kind, raw)) is not None:
        return chunk
    if kind in _TOOL_CALL_KINDS and (call := _tool_call(kind, raw)) is not None:
        return call
    model_name = UPDATE_MODELS.get(kind) if isinstance(kind, str) else None
    if model_name is None:
        return UnknownUpdate(str(kind), raw)
    model = getattr(schema(), model_name)
    try:
        parsed = model.model_validate(raw)
    except Exception as error:  # pydantic.ValidationError, but keep pydantic out of this import path
        log.warning("malformed %s update dropped to generic display: %s", kind, error)
        return UnknownUpdate(kind, raw, f"malformed {kind}: {_first_error(error)}")
    if kind in ("tool_call", "tool_call_update"):
        # `name` (schema 1.22) is newer than the SDK's models, which drop it: kept beside the fields.
        name = raw.get("name")
        object.__setattr__(parsed, "tool_name", name if isinstance(name, str) and name else None)
    return parsed


def _parse_notice(raw: dict[str, Any]) -> NoticeUpdate | UnknownUpdate:
    severity, title, description = raw.get("severity"), raw.get("title"), raw.get("description")
    if not isinstance(severity, str) or not isinstance(title, str) or not title:
        log.warning("malformed notice update dropped to generic display: %r", raw)
        return UnknownUpdate("notice", raw, "malformed notice: needs a severity and a non-empty title")
    # `description` is x-deserialize-default-on-error: a wrong type counts as absent.
    return NoticeUpdate(severity, title, description if isinstance(description, str) and description else None)


def _first_error(error: Exception) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            return f"{where}: {first.get('msg')}"
        except Exception:
            pass
    return str(error).splitlines()[0]
