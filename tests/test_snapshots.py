"""Snapshots of the whole session screen after a scripted turn: transcript, tool cards, plan, status."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.agents.spec import AgentSpec

from .helpers.agents import scripted_argv
from .helpers.app import send, steady, until, view

pytestmark = pytest.mark.slow

PLAN = [
    {"content": "Read the notes", "priority": "high", "status": "completed"},
    {"content": "Fix the typo", "priority": "medium", "status": "in_progress"},
    {"content": "Run the tests", "priority": "low", "status": "pending"},
]
TURN = [
    {"update": {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "The user wants a fix."}}},
    {"update": {"sessionUpdate": "plan", "entries": PLAN}},
    {"update": {"sessionUpdate": "tool_call", "toolCallId": "edit-1", "title": "Edit /project/notes.txt", "kind": "edit",
                "status": "completed", "locations": [{"path": "/project/notes.txt", "line": 2}],
                "content": [{"type": "diff", "path": "/project/notes.txt", "oldText": "alpha\nbeta\ngamma\n",
                             "newText": "alpha\nBETA\ngamma\ndelta\n"}]}},
    {"update": {"sessionUpdate": "tool_call", "toolCallId": "run-1", "title": "pytest -q", "kind": "execute",
                "status": "completed", "content": [{"type": "terminal", "terminalId": "term-1"}],
                "_meta": {"terminal_output": {"terminal_id": "term-1", "data": "\u001b[32m3 passed\u001b[0m in 0.01s\n"},
                          "terminal_exit": {"terminal_id": "term-1", "exit_code": 0, "signal": None}}}},
    {"update": {"sessionUpdate": "tool_call", "toolCallId": "fetch-1", "title": "Fetch docs", "kind": "fetch",
                "status": "failed", "content": [{"type": "content", "content": {"type": "text", "text": "Network is off."}}]}},
    {"chunk": "## Done\n\nI fixed **beta** and added `delta`:\n\n- notes.txt: 1 line changed\n"},
]


def test_session_screen_after_a_turn(snap_compare, tmp_path: Path) -> None:
    spec = AgentSpec(name="scripted", argv=scripted_argv({"turns": [TURN]}, tmp_path), env={}, is_demo=False)
    app = RatApp(spec, Path("/"))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "Fix the typo in notes.txt")
        await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn")
        steady(app)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=(100, 44), run_before=run_before)


def test_the_first_screen_says_what_to_do(snap_compare) -> None:
    """An empty session: the agent, the first step, where the keys are, the demo's words; the idle footer
    offers F1 and no "Cancel turn"."""
    from rat_tui.agents.spec import demo_agent

    app = RatApp(demo_agent(), Path("/"))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await until(pilot, lambda: "is ready" in str(view(app).query_one("Welcome").render()), "the welcome")
        steady(app)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=(110, 36), run_before=run_before)
