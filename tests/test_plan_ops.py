"""Plan operations over real pipes: two plans by planId, one removed, one a Markdown document; the legacy plan still works."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp

from .helpers.agents import received
from .helpers.app import send, until, view
from .helpers.history import scripted_in as scripted

CHECKLIST = {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "build", "entries": [
    {"content": "Compile", "priority": "high", "status": "completed"},
    {"content": "Link", "priority": "medium", "status": "in_progress"}]}}
DOCUMENT = {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "design",
                                                      "content": "# Design\n\n1. **Parse** the input\n2. Render `it`\n"}}
OLD = {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "old", "entries": [
    {"content": "Throw away", "priority": "low", "status": "pending"}]}}
LEGACY = {"sessionUpdate": "plan", "entries": [{"content": "Legacy step", "priority": "medium", "status": "pending"}]}


@pytest.fixture(autouse=True)
def unstable_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # plan operations are in schema.unstable.json


async def test_two_plans_one_removed_one_markdown(tmp_path: Path, record_file: Path) -> None:
    turn = [{"update": OLD}, {"update": CHECKLIST}, {"update": DOCUMENT}, {"update": LEGACY},
            {"update": {"sessionUpdate": "plan_removed", "planId": "old"}}, {"chunk": "planned"}]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "plan it")
        state = view(app).session.state
        await until(pilot, lambda: state.stop_reason == "end_turn", "the turn")
        await pilot.pause()
        assert list(state.plans) == ["build", "design"]
        panel = view(app).plan_panel
        text = panel.plain_text
        assert "Legacy step" in text and "Compile" in text and "Link" in text and "Throw away" not in text
        assert "**Parse**" in text  # the source; the panel renders it as Markdown (see the snapshot)
        assert not panel.has_class("-empty")
    initialize = next(m for m in received(record_file) if m.get("method") == "initialize")
    assert initialize["params"]["clientCapabilities"]["plan"] == {}


async def test_agent_text_on_both_sides_of_a_plan_or_a_tool_call_stays_in_separate_blocks(tmp_path: Path) -> None:
    turn = [{"chunk": "I will use TodoWrite."}, {"update": LEGACY}, {"chunk": "Done with step plan."},
            {"update": CHECKLIST}, {"chunk": "Checked."},
            {"update": {"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read", "status": "completed"}},
            {"chunk": "After the tool."}]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "plan it")
        state = view(app).session.state
        await until(pilot, lambda: state.stop_reason == "end_turn", "the turn")
        await pilot.pause()
        lines = view(app).transcript.plain_text.splitlines()
        for text in ("I will use TodoWrite.", "Done with step plan.", "Checked.", "After the tool."):
            assert text in lines, lines  # each a line (a paragraph) of its own, not glued to the next
        assert lines[lines.index("I will use TodoWrite.") + 1] == ""  # a blank line between the blocks
        assert [e.text for e in state.entries if getattr(e, "role", None) == "agent"] == [
            "I will use TodoWrite.", "Done with step plan.", "Checked.", "After the tool."]
