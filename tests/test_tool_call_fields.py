"""Tool calls of the plain shapes are read without pydantic (wire.ToolCallFields) and give the state the
SDK's models give: every recorded `tool_call` and `tool_call_update`, and shapes made to sit on each edge of
what the fast path takes, applied in order to two states, one through the models and one through
`wire.parse_update`, leave the same entries and make the same changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rat_tui.protocol import wire
from rat_tui.protocol.sanitize import clean_update
from rat_tui.state import reducer
from rat_tui.state.models import SessionState, ToolCallEntry

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"
FIELDS = ("title", "kind", "status", "content", "locations", "raw_input", "raw_output", "meta", "name")

TEXT = [{"type": "content", "content": {"type": "text", "text": "output"}}]
# (update, whether the fast path takes it)
MADE: list[tuple[dict[str, Any], bool]] = [
    ({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "Read a.py", "kind": "read", "status": "pending",
      "locations": [{"path": "/w/a.py"}, {"path": "/w/a.py", "line": 0}], "rawInput": {"path": "/w/a.py"}}, True),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": "completed", "content": TEXT,
      "rawOutput": None}, True),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "a", "content": None, "locations": None}, True),
    ({"sessionUpdate": "tool_call", "toolCallId": "b", "title": "Edit", "kind": "edit", "name": "Edit",
      "content": [{"type": "diff", "path": "/w/b.py", "newText": "new\n"},
                  {"type": "diff", "path": "/w/c.py", "oldText": "old\n", "newText": "new\n"}]}, True),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "b", "name": "", "title": "Edited"}, True),
    ({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Run", "kind": "execute",
      "content": [{"type": "terminal", "terminalId": "term-1"}]}, True),
    # The models' way: each is something they salvage, drop, keep or refuse.
    ({"sessionUpdate": "tool_call", "toolCallId": "d", "title": "Meta", "_meta": {"claudeCode": {"toolName": "X"}}},
     True),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "d", "_meta": {"terminal_output": {"terminal_id": "d-1",
                                                                                          "data": "out\n"}}}, True),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "d", "_meta": None}, True),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "d", "_meta": ["not", "an", "object"]}, False),
    ({"sessionUpdate": "tool_call", "toolCallId": "e", "title": "Odd kind", "kind": "teleport"}, False),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "e", "status": None, "kind": None}, False),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "e", "title": None}, False),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "e", "locations": [{"path": "/w/e.py", "line": None}]},
     False),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "e", "locations": [{"path": "/w/e.py", "line": -1}]}, False),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "e", "locations": [{"path": "/w/e.py", "line": True}]},
     False),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "e", "content": [
        {"type": "content", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
        {"type": "content", "content": {"type": "text", "text": "x", "annotations": {"priority": 1}}},
        {"type": "diff", "path": "/w/e.py", "oldText": None, "newText": "n"},
        {"type": "nonsense"}, "not an object"]}, False),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "e", "kind": ["read"], "status": {"done": True}}, False),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "e", "futureField": 1}, False),
    ({"sessionUpdate": "tool_call_update", "toolCallId": "e", "name": 5}, False),
    ({"sessionUpdate": "tool_call", "toolCallId": "f"}, False),  # no title: refused
    ({"sessionUpdate": "tool_call", "toolCallId": 7, "title": "number id"}, False),
]


def recorded() -> list[dict[str, Any]]:
    updates = []
    for trace in sorted(TRACES.rglob("*.jsonl")):
        for line in trace.read_text().splitlines():
            msg = json.loads(line).get("msg") or {}
            update = (msg.get("params") or {}).get("update") if msg.get("method") == "session/update" else None
            if isinstance(update, dict) and update.get("sessionUpdate") in ("tool_call", "tool_call_update"):
                updates.append(update)
    return updates


def by_models(raw: dict[str, Any]) -> Any:
    """`raw` parsed as parse_update parsed every tool call before ToolCallFields."""
    model = getattr(wire.schema(), wire.UPDATE_MODELS[raw["sessionUpdate"]])
    try:
        parsed = model.model_validate(raw)
    except Exception as error:
        return wire.UnknownUpdate(raw["sessionUpdate"], raw, f"malformed: {type(error).__name__}")
    name = raw.get("name")
    object.__setattr__(parsed, "tool_name", name if isinstance(name, str) and name else None)
    return parsed


def entries(state: SessionState) -> list[Any]:
    return [(type(entry).__name__, *(getattr(entry, name) for name in FIELDS)) if isinstance(entry, ToolCallEntry)
            else (type(entry).__name__, entry.key) for entry in state.entries]


def changes(made: list[Any]) -> list[Any]:
    return [(type(change).__name__, getattr(change, "key", None) or getattr(getattr(change, "entry", None), "key", None))
            for change in made]


def test_plain_tool_calls_give_the_state_the_models_give() -> None:
    updates = recorded()
    assert len(updates) > 50, "the recorded traces are in tests/fixtures/acp-traces"
    updates += [update for update, _ in MADE]
    models, fast = SessionState(), SessionState()
    taken = 0
    for raw in updates:
        raw = clean_update(raw)
        parsed = wire.parse_update(raw)
        taken += isinstance(parsed, wire.ToolCallFields)
        assert changes(reducer.apply_update(fast, parsed)) == changes(reducer.apply_update(models, by_models(raw))), raw
    assert entries(fast) == entries(models)
    assert taken > len(updates) // 2, f"the fast path took {taken} of {len(updates)}"


def test_the_fast_path_takes_the_plain_shapes_only(monkeypatch) -> None:
    monkeypatch.setattr(wire, "_schema", None)  # the models not imported yet: what a session would hold for them
    for raw, plain in MADE:
        assert wire.needs_models(raw) is not plain, raw  # a plain one is applied at once, models or not
    monkeypatch.undo()
    for raw, plain in MADE:
        assert isinstance(wire.parse_update(raw), wire.ToolCallFields) is plain, raw
