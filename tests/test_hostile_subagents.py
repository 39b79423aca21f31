"""A hostile chain of subagents over real pipes: 1,500 children each nested in the one before are found by
one lookup (state/children.py's index), applied without recursion, quickly, and none is dropped."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.session.agent_session import AgentSession
from rat_tui.state import children

from .helpers.agents import scripted_argv
from .helpers.harness import finish, wait_for

DEPTH = 1500


def nested(parent: str | None, child: str) -> dict:
    update = {"sessionUpdate": "subagent_update", "sessionId": child, "title": f"level {child}",
              "state": {"state": "running"}}
    if parent is None:
        return {"update": update}
    return {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": parent, "update": update}}}


def deepest_chunk(child: str, text: str) -> dict:
    return {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": child, "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}, "messageId": "deep-1"}}}}


@pytest.fixture(autouse=True)
def unstable_schema(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # subagents are in schema.unstable.json
    monkeypatch.setenv("RAT_FAKE_RECORD", str(tmp_path / "received.jsonl"))


async def test_1500_nested_children_are_applied_fast_and_none_is_dropped(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    ids = [f"c{level}" for level in range(DEPTH)]
    steps = [nested(None, ids[0])] + [nested(ids[i - 1], ids[i]) for i in range(1, DEPTH)]
    steps += [deepest_chunk(ids[-1], "from the bottom"), deepest_chunk(ids[DEPTH // 2], "from the middle")]
    command = SimpleNamespace(name="deep", argv=scripted_argv({"turns": [steps]}, tmp_path), env={})
    session = AgentSession(command, tmp_path)
    task = asyncio.create_task(session.run())
    try:
        await wait_for(lambda: session.state.status == "ready", what="handshake")
        started = time.monotonic()
        session.start_prompt("go deep")

        def bottom_text() -> str:
            child = children.find(session.state, ids[-1])
            return child.state.entries[-1].text if child is not None and child.state.entries else ""

        await wait_for(lambda: bottom_text() == "from the bottom", timeout=60, what="the deepest child's text")
        took = time.monotonic() - started
        print(f"{DEPTH} nested children and their updates applied in {took:.2f} s")
        assert len(children.all_children(session.state)) == DEPTH
        middle = children.find(session.state, ids[DEPTH // 2])
        await wait_for(lambda: bool(middle.state.entries) and middle.state.entries[-1].text == "from the middle",
                       what="the middle child's text")
        assert children.running_count(session.state) == DEPTH
        # Lookups from a child's own state reach only what is under it.
        assert children.find(middle.state, ids[-1]) is not None and children.find(middle.state, ids[0]) is None
        assert not [r for r in caplog.records if "RecursionError" in r.getMessage() or r.exc_info]
        assert took < 20
    finally:
        await finish(session, task)


def test_the_card_path_is_found_by_walking_up() -> None:
    from rat_tui.protocol.wire import parse_update
    from rat_tui.state.models import SessionState
    from rat_tui.state.reducer import apply_child_update, apply_update

    top = SessionState(session_id="top")
    apply_update(top, parse_update({"sessionUpdate": "subagent_update", "sessionId": "a", "title": "A"}))
    apply_child_update(top, "a", parse_update({"sessionUpdate": "subagent_update", "sessionId": "b", "title": "B"}))
    changes = apply_child_update(top, "b", parse_update({"sessionUpdate": "agent_message_chunk",
                                                          "content": {"type": "text", "text": "hi"}}))
    a, b = top.children["a"], top.children["a"].state.children["b"]
    assert changes[0].key == a.key and changes[1].key == a.key
    inner = changes[1].changes
    assert inner[0].key == b.key and inner[1].key == b.key and inner[1].changes
    assert children.set_pending(top, "b", 1)[0].key == a.key  # the card in the top transcript
