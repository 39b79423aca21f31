"""A reloaded parent with subagents, as Claude 0.109 does it, over real pipes: its `session/load` replays the
subagents of the history (one still "running" when the history was written), answers, then announces its live
subagent again. Requests naming a replayed subagent get -32602 from that agent, so rat sends none; the live one
is the same card as before (no duplicate) and can be cancelled; the parent stays usable; no error toast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList

from rat_tui.app import RatApp
from rat_tui.state.models import ChildSessionEntry
from rat_tui.ui.screens.board import BoardScreen
from rat_tui.ui.screens.session_browser import SessionBrowserScreen

from .helpers.agents import received
from .helpers.app import send, until, view
from .helpers.history import scripted_in

PARENT, OLD, LIVE = "parent-1", "sub-old", "sub-live"


def announce(child: str, title: str) -> dict:
    return {"update": {"sessionUpdate": "subagent_update", "sessionId": child, "title": title,
                       "state": {"state": "running"}, "capabilities": {"cancel": {}}}}


def child_chunk(child: str, text: str) -> dict:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text},
              "messageId": f"{child}-m"}
    return {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": child, "update": update}}}


def replay() -> list[dict]:
    prompt = {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "split the work"}}
    return [{"update": prompt}, announce(OLD, "Old helper"), child_chunk(OLD, "old work"),
            announce(LIVE, "Live helper"), child_chunk(LIVE, "live work, replayed")]


@pytest.fixture(autouse=True)
def unstable_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # subagents are in schema.unstable.json


def naming(record: Path, child: str) -> list[str]:
    """What rat sent that names `child` (a request's or notification's params)."""
    return [m.get("method") for m in received(record)
            if "method" in m and isinstance(m.get("params"), dict) and m["params"].get("sessionId") == child]


async def test_a_reloaded_parent_survives_its_replayed_and_reannounced_subagents(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    listing = {"sessions": [{"sessionId": PARENT, "cwd": str(tmp_path / "proj"), "title": "Delegating"}]}
    script = {
        "initialize_result": {"agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}}},
        "on_request": {
            "session/list": [[{"respond": listing}]],
            # The history, the answer, then the live subagent announced again (and at work).
            "session/load": [[*replay(), {"respond": {}}, announce(LIVE, "Live helper"), child_chunk(LIVE, " and now live")]],
        },
        "turns": [[{"wait_file": str(release)}, {"chunk": "the parent answers"}]],
    }
    app = RatApp(scripted_in(script, tmp_path / "proj"), tmp_path / "proj")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(app.screen, SessionBrowserScreen)
                    and app.screen.query_one(OptionList).option_count == 1, "the agent's sessions")
        await pilot.press("enter")
        await until(pilot, lambda: len(app.tabs.views) == 2, "the reloaded parent's tab")
        tab = app.tabs.active_view
        state = tab.session.state
        await until(pilot, lambda: tab.session.session_id == PARENT and state.status == "ready", "loaded")
        await until(pilot, lambda: state.children.get(LIVE) is not None
                    and "and now live" in "".join(getattr(e, "text", "") for e in state.children[LIVE].state.entries),
                    "the live subagent at work again")
        old, live = state.children[OLD], state.children[LIVE]
        # One card each: announced again, the live one is the card the replay made, live again.
        assert [e.child_id for e in state.entries if isinstance(e, ChildSessionEntry)] == [OLD, LIVE]
        assert live.running and not live.replayed
        # The replayed one is history: not running, not waiting, nothing on it to stop.
        assert old.replayed and not old.running and not old.waiting
        # The board lists both, the replayed one with no work under it; s on it sends nothing.
        await pilot.press("f12")
        await until(pilot, lambda: isinstance(app.screen, BoardScreen), "the board")
        board = app.screen
        await until(pilot, lambda: any(r.kind == "child" and r.name == "Old helper" for r in board.rows), "its rows")
        [old_row] = [r for r in board.rows if r.kind == "child" and r.name == "Old helper"]
        assert old_row.state == "idle"
        target = board.rows.index(old_row)
        while board.table.cursor_row != target:  # one key at a time, as a person walks to it
            await pilot.press("down" if board.table.cursor_row < target else "up")
        await pilot.press("s")
        await until(pilot, lambda: any("Old helper is not running" in n.message for n in app._notifications),
                    "the board's answer")
        await pilot.press("escape")
        # The parent is usable: a prompt, and K cancels the children that run (the live one only).
        await send(pilot, "go on")
        await until(pilot, lambda: tab.session.busy, "the turn")
        tab.transcript.focus()
        await pilot.press("K")
        await until(pilot, lambda: naming(record_file, LIVE) == ["session/cancel"], "the live subagent cancelled")
        release.touch()
        await until(pilot, lambda: "the parent answers" in tab.transcript.plain_text and not tab.session.busy,
                    "the parent's answer")
        assert naming(record_file, OLD) == []  # nothing ever named the replayed subagent
        assert [n.message for n in app._notifications if n.severity == "error"] == []
    lines = [json.dumps(m) for m in received(record_file)]
    assert sum('"session/load"' in line for line in lines) == 1


async def test_a_restarted_parent_keeps_one_card_per_subagent(tmp_path: Path, record_file: Path) -> None:
    """Alt+R: the new process's load replays what is on screen (not shown again) and announces the live one
    again right behind its answer: that one is live, the other is the old process's history."""
    turn = [announce(OLD, "Old helper"), announce(LIVE, "Live helper"), {"chunk": "delegated"}]
    script = {
        "session_id": PARENT,
        "initialize_result": {"agentCapabilities": {"loadSession": True}},
        "on_request": {"session/load": [[*replay(), {"respond": {}}, announce(LIVE, "Live helper"),
                                         child_chunk(LIVE, " and now live")]]},
        "turns": [turn],
    }
    app = RatApp(scripted_in(script, tmp_path / "proj"), tmp_path / "proj")
    async with app.run_test(size=(120, 36)) as pilot:
        tab = view(app)
        await until(pilot, lambda: tab.session.state.status == "ready", "ready")
        await send(pilot, "split the work")
        state = tab.session.state
        await until(pilot, lambda: "delegated" in tab.transcript.plain_text and not tab.session.busy, "the turn")
        assert state.children[OLD].running and state.children[LIVE].running  # as the agent last said
        await pilot.press("alt+r")
        await until(pilot, lambda: sum(m.get("method") == "session/load" for m in received(record_file)) == 1
                    and "and now live" in "".join(getattr(e, "text", "") for e in state.children[LIVE].state.entries),
                    "reloaded, the live one at work")
        assert [e.child_id for e in state.entries if isinstance(e, ChildSessionEntry)] == [OLD, LIVE]
        assert state.children[LIVE].running and not state.children[OLD].running
        assert "from before the reload" in tab.transcript.plain_text
        await send(pilot, "go on")
        await until(pilot, lambda: sum(m.get("method") == "session/prompt" for m in received(record_file)) == 2
                    and not tab.session.busy and state.status == "ready", "the parent usable")
        assert [n.message for n in app._notifications if n.severity == "error"] == []
