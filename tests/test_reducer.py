"""The reducer applied to parsed updates: grouping, upserts, patches, replace-on-update, unknowns."""

from rat_tui.protocol.wire import UnknownUpdate, parse_update
from rat_tui.state import reducer
from rat_tui.state.models import (
    EntryAdded,
    EntryChanged,
    FieldChanged,
    GenericEntry,
    MessageEntry,
    SessionState,
    TextAppended,
    ToolCallEntry,
)
from rat_tui.state.store import SessionStore, merge_appends


def apply(state: SessionState, raw: dict) -> list:
    return reducer.apply_update(state, parse_update(raw))


def chunk(kind: str, text: str, message_id: str | None = None) -> dict:
    raw = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id:
        raw["messageId"] = message_id
    return raw


def test_adjacent_chunks_group_and_empty_first_chunk_adds_nothing() -> None:
    state = SessionState()
    assert apply(state, chunk("agent_message_chunk", "")) == []
    [added] = apply(state, chunk("agent_message_chunk", "Hel"))
    assert isinstance(added, EntryAdded)
    assert apply(state, chunk("agent_message_chunk", "lo")) == [TextAppended(added.entry.key, "lo")]
    assert [e.text for e in state.entries] == ["Hello"]
    apply(state, chunk("agent_thought_chunk", "hmm"))
    apply(state, chunk("agent_message_chunk", "again"))
    assert [(e.role, e.text) for e in state.entries] == [("agent", "Hello"), ("thought", "hmm"), ("agent", "again")]


def test_message_ids_group_chunks_even_when_interleaved() -> None:
    state = SessionState()
    apply(state, chunk("agent_message_chunk", "a1", "m1"))
    apply(state, chunk("agent_thought_chunk", "t", "m2"))
    apply(state, chunk("agent_message_chunk", "a2", "m1"))
    apply(state, chunk("agent_message_chunk", "b", "m3"))
    texts = [(e.role, e.text) for e in state.entries]
    assert texts == [("agent", "a1a2"), ("thought", "t"), ("agent", "b")]


def test_tool_call_is_an_upsert_and_update_is_a_patch() -> None:
    state = SessionState()
    [added] = apply(state, {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read File", "status": "pending", "rawInput": {}})
    call = added.entry
    assert isinstance(call, ToolCallEntry)
    changes = apply(
        state,
        {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read notes.txt", "kind": "read",
         "locations": [{"path": "/p/notes.txt", "line": 2}]},
    )
    assert changes == [EntryChanged(call.key)]
    assert (call.title, call.kind, call.status) == ("Read notes.txt", "read", "pending")
    apply(state, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
                  "content": [{"type": "content", "content": {"type": "text", "text": "done"}}]})
    assert call.status == "completed" and call.title == "Read notes.txt"
    assert call.content == [{"type": "content", "content": {"type": "text", "text": "done"}}]
    assert call.locations == [{"path": "/p/notes.txt", "line": 2}]
    apply(state, {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "locations": []})
    assert call.locations == []
    assert len(state.entries) == 1


def test_update_for_unknown_tool_call_creates_it() -> None:
    state = SessionState()
    [added] = apply(state, {"sessionUpdate": "tool_call_update", "toolCallId": "x", "title": "Edit", "status": "in_progress"})
    assert isinstance(added.entry, ToolCallEntry) and added.entry.status == "in_progress"


def test_plan_replaces_and_fields_update() -> None:
    state = SessionState()
    entries = [{"content": "a", "priority": "high", "status": "pending"}, {"content": "b", "priority": "low", "status": "pending"}]
    assert apply(state, {"sessionUpdate": "plan", "entries": entries}) == [FieldChanged("plan")]
    apply(state, {"sessionUpdate": "plan", "entries": [{"content": "c", "priority": "medium", "status": "completed"}]})
    assert [(p.content, p.status) for p in state.plan] == [("c", "completed")]
    apply(state, {"sessionUpdate": "current_mode_update", "currentModeId": "plan"})
    apply(state, {"sessionUpdate": "session_info_update", "title": "Fix bug"})
    apply(state, {"sessionUpdate": "usage_update", "used": 10, "size": 100})
    apply(state, {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "init", "description": "d"}]})
    assert state.current_mode_id == "plan" and state.title == "Fix bug"
    assert state.usage == {"used": 10, "size": 100} and state.commands[0]["name"] == "init"


def test_unknown_and_malformed_variants_are_kept_for_generic_display() -> None:
    state = SessionState()
    update = parse_update({"sessionUpdate": "brand_new_thing", "x": 1})
    assert isinstance(update, UnknownUpdate)
    [added] = reducer.apply_update(state, update)
    assert isinstance(added.entry, GenericEntry) and added.entry.raw == {"sessionUpdate": "brand_new_thing", "x": 1}
    [bad] = apply(state, {"sessionUpdate": "agent_message_chunk"})  # no content
    assert isinstance(bad.entry, GenericEntry) and "malformed" in bad.entry.problem


def test_cancel_marks_open_tool_calls_cancelled() -> None:
    state = SessionState()
    apply(state, {"sessionUpdate": "tool_call", "toolCallId": "a", "title": "x", "status": "in_progress"})
    apply(state, {"sessionUpdate": "tool_call", "toolCallId": "b", "title": "y", "status": "completed"})
    changes = reducer.end_turn(state, "cancelled")
    assert state.tool_calls["a"].status == "cancelled" and state.tool_calls["b"].status == "completed"
    assert EntryChanged(state.tool_calls["a"].key) in changes


def test_non_text_content_becomes_readable_markdown() -> None:
    state = SessionState()
    apply(state, {"sessionUpdate": "agent_message_chunk",
                  "content": {"type": "resource_link", "uri": "file:///p/a.py", "name": "a.py"}})
    assert "[a.py](file:///p/a.py)" in state.entries[0].text


def test_store_batches_and_merges_appends() -> None:
    store = SessionStore()
    batches: list[list] = []
    store.subscribe(batches.append)
    store._flush_handle = object()  # type: ignore[assignment]  # pretend a frame is scheduled
    for text in ("a", "b", "c"):
        store.apply_update(chunk("agent_message_chunk", text))
    store._flush_handle = None
    store.flush()
    assert len(batches) == 1
    [added, appended] = batches[0]
    assert isinstance(added, EntryAdded) and appended == TextAppended(added.entry.key, "bc")
    assert isinstance(store.state.entries[0], MessageEntry) and store.state.entries[0].text == "abc"
    assert merge_appends([TextAppended("k", "1"), FieldChanged("x"), TextAppended("k", "2")]) == [
        TextAppended("k", "1"), FieldChanged("x"), TextAppended("k", "2")]


TEXT_CHUNK_SHAPES = [
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "plain"}},
    {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "with id"}},
    {"sessionUpdate": "agent_thought_chunk", "messageId": None, "content": {"type": "text", "text": "thinking"}},
    {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "asked"}, "_meta": {"k": 1}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "bg"},
     "_meta": {"qwenDiscreteMessage": True}},
    # Shapes the fast path leaves to the models: annotations, a messageId of the wrong type, an extra field,
    # a content block that is not text, text that is not a string.
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a", "annotations": {"priority": 1}}},
    {"sessionUpdate": "agent_message_chunk", "messageId": 7, "content": {"type": "text", "text": "b"}},
    {"sessionUpdate": "agent_message_chunk", "extra": 1, "content": {"type": "text", "text": "c"}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "mimeType": "image/png", "data": "AA=="}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 5}},
]


def test_plain_text_chunks_parse_without_the_models_and_apply_as_the_models_do() -> None:
    from rat_tui.protocol import wire

    shown = []
    for raw in TEXT_CHUNK_SHAPES:
        fast, model = SessionState(), SessionState()
        parsed = parse_update(raw)
        reference = getattr(wire.schema(), wire.UPDATE_MODELS[raw["sessionUpdate"]])
        try:
            validated = reference.model_validate(raw)
        except Exception:
            validated = None
        shown.append(type(parsed).__name__)
        got = [type(c).__name__ for c in reducer.apply_update(fast, parsed)]
        if validated is not None:
            assert got == [type(c).__name__ for c in reducer.apply_update(model, validated)], raw
            assert [(e.role, e.message_id, e.parts) for e in fast.entries if isinstance(e, MessageEntry)] == \
                [(e.role, e.message_id, e.parts) for e in model.entries if isinstance(e, MessageEntry)], raw
    assert shown[:5] == ["TextChunk"] * 5
    assert "TextChunk" not in shown[5:]


def test_a_text_chunk_needs_no_model_import() -> None:
    """The first chunks of an answer do not wait for the ACP models (0.3 s of pydantic importing and building)."""
    import subprocess
    import sys

    code = ("import sys; from rat_tui.protocol.wire import parse_update; "
            "u = parse_update({'sessionUpdate': 'agent_message_chunk', 'content': {'type': 'text', 'text': 'hi'}}); "
            "print(type(u).__name__, u.content.text, 'rat_tui.protocol.acp_models' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["TextChunk", "hi", "False"], out.stdout + out.stderr


def test_a_live_prompt_echoed_back_without_a_message_id_shows_once() -> None:
    """Qwen Code's daemon sends every client of a session the prompt it was asked, the asking one too (v1, no
    messageId): the echo of the prompt just sent is not shown again; a replay's user text (no prompt of ours
    pending) and text that is not the prompt's still are."""
    state = SessionState()
    apply(state, chunk("user_message_chunk", "replayed question"))  # a load's replay: shown
    reducer.add_user_message(state, "what is 2+2?")
    assert apply(state, chunk("user_message_chunk", "what is ")) == []
    assert apply(state, chunk("user_message_chunk", "2+2?")) == []
    apply(state, chunk("agent_message_chunk", "4"))
    apply(state, chunk("user_message_chunk", "something else"))
    reducer.end_turn(state, "end_turn")
    apply(state, chunk("user_message_chunk", "what is 2+2?"))  # after the turn: not an echo
    assert [(e.role, e.text) for e in state.entries] == [
        ("user", "replayed question"), ("user", "what is 2+2?"), ("agent", "4"), ("user", "something else"),
        ("user", "what is 2+2?")]
