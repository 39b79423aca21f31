"""Snapshots: a subagent's card collapsed and expanded, a compaction marker with its summary, a Markdown plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.agents.spec import AgentSpec

from .helpers.agents import scripted_argv
from .helpers.app import send, steady, until, view

pytestmark = pytest.mark.slow

CHILD = "child-7"


def child(update: dict) -> dict:
    return {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": CHILD, "update": update}}}


TURN = [
    {"chunk": "I will ask a subagent to look at the notes."},
    {"update": {"sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "Notes reviewer",
                "description": "general-purpose", "capabilities": {"cancel": {}}, "state": {"state": "running"}}},
    {"update": {"sessionUpdate": "session_message", "messageId": "to-child", "senderSessionId": "$SESSION",
                "recipientSessionId": CHILD, "content": [{"type": "text", "text": "Review notes.txt for typos."}]}},
    child({"sessionUpdate": "agent_message_chunk", "messageId": "c1", "content": {"type": "text", "text": "Reading the notes now."}}),
    child({"sessionUpdate": "tool_call", "toolCallId": "c-read", "title": "Read notes.txt", "kind": "read",
           "status": "completed", "name": "Read"}),
    child({"sessionUpdate": "agent_message_chunk", "messageId": "c2",
           "content": {"type": "text", "text": "Found one typo: beta should be BETA."}}),
    {"update": {"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"state": "idle", "stopReason": "end_turn"}}},
    {"update": {"sessionUpdate": "compaction_update", "compactionId": "k1", "status": "in_progress"}},
    {"update": {"sessionUpdate": "compaction_update", "compactionId": "k1", "status": "completed",
                "summary": [{"type": "text", "text": "The user asked for a review; a subagent found one typo in notes.txt."}]}},
    {"update": {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "fix",
                "content": "## Fix\n\n1. Change **beta** to `BETA`\n2. Run the tests\n"}}},
    {"chunk": "The reviewer is done."},
]


def _app(tmp_path: Path) -> RatApp:
    spec = AgentSpec(name="scripted", argv=scripted_argv({"turns": [TURN]}, tmp_path), env={}, is_demo=False)
    return RatApp(spec, Path("/"))


async def _turn(pilot, app: RatApp) -> None:
    await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
    await send(pilot, "Review the notes")
    await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn")
    steady(app)
    await pilot.pause(0.3)


def test_child_card_collapsed_compaction_marker_and_markdown_plan(snap_compare, tmp_path: Path) -> None:
    app = _app(tmp_path)

    async def run_before(pilot) -> None:
        await _turn(pilot, app)

    assert snap_compare(app, terminal_size=(100, 36), run_before=run_before)


def test_child_card_expanded(snap_compare, tmp_path: Path) -> None:
    app = _app(tmp_path)

    async def run_before(pilot) -> None:
        await _turn(pilot, app)
        session = view(app).session
        [card] = session.state.children.values()
        view(app).transcript.focus()
        from rat_tui.state import children

        session.store.dispatch(children.toggle_card, card.key)
        await until(pilot, lambda: card.expanded, "the card expanded")
        steady(app)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=(100, 36), run_before=run_before)
