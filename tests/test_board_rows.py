"""The board's rows from real session states: every state word, stopped work, and `_meta.quota` (Claude 0.101,
Codex 2.6) as a quota meter beside usage, live and from the recordings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.history.rebuild import rebuild
from rat_tui.history.records import read_recording
from rat_tui.protocol.terminals import TerminalManager
from rat_tui.session.fleet import Seat, seat_rows
from rat_tui.state.quota import quota_words, read_quota

from .helpers.app import scripted_named, send, until, view

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"
RECORDINGS = ["claude-agent-acp-0.101.jsonl", "codex-acp-2.6.jsonl", "claude-agent-acp-0.101-optin.jsonl",
              "v2/claude-agent-acp-0.101-v2.jsonl", "v2/codex-acp-2.6-v2.jsonl", "v2/claude-agent-acp-0.101-v2-optin.jsonl"]
# The shape as the 0.101 / 2.6 recordings send it (pinned: the meter reads exactly these names).
QUOTA = {"quota": {"token_count": {"totalTokens": 70, "inputTokens": 50, "outputTokens": 20},
                   "model_usage": [{"model": "gpt-5.5", "token_count": {"totalTokens": 12_340, "inputTokens": 12_000}}]}}


def test_quota_shape_pinned() -> None:
    assert read_quota(QUOTA) == {"turn": 70, "total": 12_340, "models": (("gpt-5.5", 12_340),)}
    assert quota_words(read_quota(QUOTA)) == "quota 12.3k tok (gpt-5.5)"
    two = {"quota": {"model_usage": [{"model": "a", "token_count": {"totalTokens": 1}},
                                     {"model": "b", "token_count": {"totalTokens": 2}}]}}
    assert quota_words(read_quota(two)) == "quota 3 tok (2 models)"
    # Bad parts are left out, never an error.
    assert read_quota({"quota": {"token_count": {"totalTokens": "70"}, "model_usage": "x"}}) is None
    assert read_quota({"quota": []}) is None and read_quota(None) is None
    assert read_quota({"quota": {"token_count": {"totalTokens": True}}}) is None


def last_quota(path: Path) -> dict:
    """The last `_meta.quota` the agent sent in a recording (a prompt's answer in v1, the idle in v2)."""
    found = None
    for line in path.read_text().splitlines():
        msg = json.loads(line).get("msg") or {}
        for holder in (msg.get("result"), (msg.get("params") or {}).get("update")):
            if isinstance(holder, dict) and isinstance(holder.get("_meta"), dict) and "quota" in holder["_meta"]:
                found = holder["_meta"]
    assert found is not None
    return found


@pytest.mark.parametrize("name", RECORDINGS)
def test_recordings_replay_their_quota_onto_the_board(name: str, tmp_path: Path) -> None:
    path = TRACES / name
    builder = rebuild(read_recording(path).records)
    state = builder.store.state
    assert state.quota == read_quota(last_quota(path)) and state.quota["total"] > 0

    class Replayed:  # a replayed session: its state, no process, no running terminals
        def __init__(self) -> None:
            self.state = state
            self.terminals = TerminalManager(tmp_path)
            self.busy = False

    [row, *rest] = seat_rows(Seat(Replayed(), 1))
    assert row.kind == "session" and quota_words(state.quota).split(" (")[0] in row.usage  # (no model names)
    if "claude" in name and ("optin" in name or name.startswith("v2/")):  # its subagent is on the board too
        assert [r.name for r in rest if r.kind == "child"] == ["Harness subagent"]  # (v1: opted in; v2: baseline)
    # Its /compact finished: the board says nothing of it (compacting is said only while it runs).
    assert not state.compacting and "compact" not in row.doing
    assert bool(state.compactions) == ("optin" in name or name.startswith("v2/"))  # v1 without the opt-in: a tool call


async def test_quota_meter_beside_usage_live(tmp_path: Path, record_file: Path) -> None:
    turn = [{"update": {"sessionUpdate": "usage_update", "used": 5_000, "size": 200_000}},
            {"chunk": "done"}, {"respond": {"stopReason": "end_turn", "_meta": QUOTA}}]
    app = RatApp(scripted_named({"turns": [turn]}, tmp_path, "codex"), tmp_path)
    async with app.run_test(size=(160, 30)) as pilot:
        tab = view(app)
        await until(pilot, lambda: tab.session.state.status == "ready", "ready")
        await send(pilot, "hi")
        await until(pilot, lambda: tab.session.state.quota is not None, "the quota read")
        await until(pilot, lambda: "quota 12.3k tok (gpt-5.5)" in str(tab.status_bar.render()), "the meter shown")


def test_states_on_the_board(tmp_path: Path) -> None:
    """Every state word the board shows, from a real session's state as the reducer sets it."""
    from rat_tui.agents.spec import AgentSpec
    from rat_tui.session.agent_session import AgentSession
    from rat_tui.session.fleet import DISCONNECTED, ERROR_WORD, IDLE, NEEDS_YOU, STOPPED, WORKING_WORD
    from rat_tui.state import reducer, stopped

    session = AgentSession(AgentSpec(name="a", argv=["true"], env={}, is_demo=False), tmp_path)
    store = session.store

    def word() -> tuple[str, str]:
        store.flush()
        row = seat_rows(Seat(session, 1))[0]
        return row.state, row.doing

    assert word() == (WORKING_WORD, "starting…")
    store.dispatch(reducer.set_status, "ready")
    assert word() == (IDLE, "")
    assert seat_rows(Seat(session, 1, waiting=2))[0].state == NEEDS_YOU
    store.dispatch(reducer.set_status, "working")
    store.apply_update({"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"})
    assert word() == (WORKING_WORD, "compacting the conversation…")
    store.apply_update({"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"})
    assert word() == (WORKING_WORD, "")  # said only while it runs
    assert session.state.compacting == set() and session.state.compactions["c1"].status == "completed"
    store.dispatch(stopped.turn_stopped)
    store.dispatch(reducer.set_status, "cancelled")
    assert word()[0] == STOPPED
    store.dispatch(reducer.set_status, "error", "the agent failed")
    assert word()[0] == ERROR_WORD
    store.dispatch(reducer.set_status, "exited")
    assert word()[0] == DISCONNECTED


def test_stopped_work_stays_on_the_board_for_a_while(tmp_path: Path) -> None:
    from rat_tui.agents.spec import AgentSpec
    from rat_tui.session.agent_session import AgentSession
    from rat_tui.session.fleet import STOPPED, STOPPED_SHOWN_SECONDS
    from rat_tui.state import reducer, stopped

    session = AgentSession(AgentSpec(name="a", argv=["true"], env={}, is_demo=False), tmp_path)
    store = session.store
    store.dispatch(reducer.set_status, "ready")
    store.apply_update({"sessionUpdate": "tool_call", "toolCallId": "w", "title": "watch", "kind": "execute",
                        "status": "in_progress"})
    store.dispatch(stopped.tool_call_stopped, "w")
    store.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": "w", "status": "failed"})
    store.flush()
    [row] = [r for r in seat_rows(Seat(session, 1)) if r.kind == "tool"]
    assert row.state == STOPPED
    session.state.tool_calls["w"].since -= STOPPED_SHOWN_SECONDS + 1  # stopped long ago, no turn running
    assert not [r for r in seat_rows(Seat(session, 1)) if r.kind == "tool"]
