"""Subagents over real pipes: a child asks permission while the parent streams; one child is cancelled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.ui.screens.child_session import ChildSessionScreen
from rat_tui.ui.screens.permission import PermissionScreen

from .helpers.agents import received
from .helpers.history import scripted_in as scripted
from .helpers.app import send, until, view

CHILD, OTHER = "child-1", "child-2"


def announce(child: str, title: str, cancel: bool = True) -> dict:
    update = {"sessionUpdate": "subagent_update", "sessionId": child, "title": title, "description": "general-purpose",
              "state": {"state": "running"}}
    if cancel:
        update["capabilities"] = {"cancel": {}}
    return {"update": update}


def child_update(child: str, update: dict) -> dict:
    return {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": child, "update": update}}}


def child_chunk(child: str, text: str) -> dict:
    return child_update(child, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text},
                                "messageId": f"{child}-m1"})


PERMISSION = {
    "sessionId": CHILD,
    "toolCall": {"toolCallId": "child-edit", "title": "Edit notes.txt", "kind": "edit", "status": "pending"},
    "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"}],
}


@pytest.fixture(autouse=True)
def unstable_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # subagents are in schema.unstable.json


async def test_child_asks_permission_while_the_parent_streams(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    turn = [
        announce(CHILD, "Child A"),
        child_chunk(CHILD, "child is working"),
        {"request": {"method": "session/request_permission", "params": PERMISSION, "id": "perm-1"}, "wait": False},
        {"chunk": "parent streams on. ", "repeat": 5},
        {"wait_file": str(release)},
        child_update(CHILD, {"sessionUpdate": "tool_call_update", "toolCallId": "child-edit", "status": "completed"}),
        {"update": {"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"state": "idle", "stopReason": "end_turn"}}},
        {"chunk": "parent done."},
    ]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "delegate")
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen), "the child's permission question")
        screen = app.screen
        assert "subagent “Child A”" in screen.agent_name
        state = view(app).session.state
        [child] = state.children.values()
        # The child's call is on its card, not among the parent's; the parent streams on meanwhile.
        assert "child-edit" in child.state.tool_calls and "child-edit" not in state.tool_calls
        await until(pilot, lambda: child.state.pending_permissions == 1, "the card says the child waits")
        await until(pilot, lambda: "parent streams on. " * 5 in "".join(
            e.text for e in state.entries if hasattr(e, "parts")), "the parent's text")
        await pilot.press("y")
        await until(pilot, lambda: any(m.get("id") == "perm-1" for m in received(record_file)), "the answer")
        answer = next(m for m in received(record_file) if m.get("id") == "perm-1")
        assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "allow"}}
        assert child.state.pending_permissions == 0
        # The child's own screen, open while it works: what it does next shows up there live.
        await until(pilot, lambda: not isinstance(app.screen, PermissionScreen), "the dialog closed")
        view(app).transcript.focus()
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, ChildSessionScreen), "the child's screen")
        screen = app.screen
        assert "child is working" in screen.transcript.plain_text
        release.touch()
        await until(pilot, lambda: state.stop_reason == "end_turn", "the turn's end")
        await until(pilot, lambda: "idle" in str(screen.query_one("#child-header").render()), "the child idle, live")
        assert "Edit notes.txt" in screen.transcript.plain_text and "completed" in screen.transcript.plain_text
        await pilot.press("escape")
        assert child.run_state == "idle" and child.state.tool_calls["child-edit"].status == "completed"
        assert "child is working" not in "".join(e.text for e in state.entries if hasattr(e, "parts"))


async def test_cancel_one_child_leaves_the_other_and_the_parent(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    turn = [
        announce(CHILD, "Child A"),
        announce(OTHER, "Child B", cancel=False),
        child_chunk(CHILD, "A works"),
        child_chunk(OTHER, "B works"),
        {"wait_file": str(release)},
    ]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "delegate twice")
        state = view(app).session.state
        await until(pilot, lambda: len(state.children) == 2 and all(
            c.state.entries for c in state.children.values()), "both children")
        tab = app.tabs.query("Tab").first()
        await until(pilot, lambda: "⑂2" in str(tab.label), "the badge counts two running children")
        view(app).transcript.focus()
        await pilot.press("K")  # cancel every child that can be cancelled: only A advertises it
        await until(pilot, lambda: any(m.get("method") == "session/cancel" for m in received(record_file)), "the cancel")
        cancels = [m["params"]["sessionId"] for m in received(record_file) if m.get("method") == "session/cancel"]
        assert cancels == [CHILD]
        assert view(app).session.busy  # the parent's turn goes on
        release.touch()
        await until(pilot, lambda: state.stop_reason == "end_turn", "the turn's end")
    lines = [json.dumps(m) for m in received(record_file)]
    assert not any(OTHER in line and "session/cancel" in line for line in lines)


async def test_cancelling_a_child_closes_its_permission_question(tmp_path: Path, record_file: Path) -> None:
    """A subagent's question never hangs: cancelling the subagent answers it `cancelled`."""
    release = tmp_path / "release"
    turn = [
        announce(CHILD, "Child A"),
        {"request": {"method": "session/request_permission", "params": PERMISSION, "id": "perm-1"}, "wait": False},
        {"wait_file": str(release)},
    ]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "delegate")
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen), "the child's question")
        await view(app).run_action("cancel_children")  # as the palette's "Cancel subagents" does
        await until(pilot, lambda: any(m.get("id") == "perm-1" for m in received(record_file)), "the answer")
        answer = next(m for m in received(record_file) if m.get("id") == "perm-1")
        assert answer["result"] == {"outcome": {"outcome": "cancelled"}}
        await until(pilot, lambda: not isinstance(app.screen, PermissionScreen), "the dialog closed")
        assert [m["params"]["sessionId"] for m in received(record_file) if m.get("method") == "session/cancel"] == [CHILD]
        release.touch()
        await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn's end")
