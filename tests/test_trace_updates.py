"""Every session/update recorded from real agents goes through the reducer without loss or surprise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rat_tui.state.models import GenericEntry, MessageEntry, ToolCallEntry
from rat_tui.state.store import SessionStore

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"
TRACE_FILES = sorted(TRACES.glob("*.jsonl"))


def updates(trace: Path) -> list[dict]:
    found = []
    for line in trace.read_text().splitlines():
        message = json.loads(line)["msg"]
        if message.get("method") == "session/update":
            found.append(message["params"]["update"])
    return found


def test_traces_are_present() -> None:
    assert len(TRACE_FILES) >= 10, f"expected the recorded traces in {TRACES}"


@pytest.mark.parametrize("trace", TRACE_FILES, ids=lambda p: p.stem)
def test_every_recorded_update_is_understood(trace: Path) -> None:
    store = SessionStore()
    for update in updates(trace):
        store.apply_update(update)
    state = store.state
    generic = [e for e in state.entries if isinstance(e, GenericEntry)]
    assert generic == [], f"updates the reducer did not model: {[g.kind for g in generic]}"
    calls = [e for e in state.entries if isinstance(e, ToolCallEntry)]
    assert len(calls) == len({c.tool_call_id for c in calls}), "a tool call appeared twice"
    assert all(c.title for c in calls)
    assert not any(isinstance(e, MessageEntry) and e.text == "" for e in state.entries)


def test_claude_sends_tool_call_twice_and_we_keep_one_card() -> None:
    store = SessionStore()
    raw = updates(TRACES / "claude-code-acp.jsonl")
    starts = [u["toolCallId"] for u in raw if u["sessionUpdate"] == "tool_call"]
    assert len(starts) > len(set(starts)), "the trace should hold a repeated tool_call"
    for update in raw:
        store.apply_update(update)
    assert set(store.state.tool_calls) == set(starts)
    first = store.state.tool_calls[starts[0]]
    assert first.title != "Read File" or first.raw_input, "the second, complete tool_call must win"
