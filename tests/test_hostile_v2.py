"""A hostile ACP v2 agent over real pipes: tool call updates whose fields are of the wrong type are checked
as v1 checks them (protocol/v2.checked_tool_fields), the rest of the call is shown and the app stays up."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.state.models import ToolCallEntry
from rat_tui.ui.widgets.tool_call import render_tool_call

from .helpers.app import scripted, until

BAD_STATUS = {"sessionUpdate": "tool_call_update", "toolCallId": "t-status", "title": "Bad status call",
              "status": {"state": "done"},
              "content": [{"type": "content", "content": {"type": "text", "text": "output kept"}}]}
BAD_REST = {"sessionUpdate": "tool_call_update", "toolCallId": "t-rest", "title": ["not", "a", "string"],
            "kind": {"k": 1}, "status": "completed", "content": "not a list", "locations": [{"path": 7}, "x"]}
BAD_ITEMS = {"sessionUpdate": "tool_call_update", "toolCallId": "t-items", "title": "Some items bad",
             "kind": 12, "content": [5, {"type": "content", "content": {"type": "text", "text": "good item"}}],
             "locations": {"path": "/etc"}}


def v2_script() -> dict:
    return {"protocol": 2, "session_id": "s-v2", "turns": [[
        {"update": BAD_STATUS}, {"update": BAD_REST}, {"update": BAD_ITEMS},
        {"update": {"sessionUpdate": "agent_message", "messageId": "m-after",
                    "content": [{"type": "text", "text": "still here after the bad updates"}]}},
    ]]}


async def test_malformed_v2_tool_call_fields_are_dropped_and_the_app_stays_up(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="rat.v2")
    app = RatApp(replace(scripted(v2_script(), tmp_path), protocol=2), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        assert app.session.state.protocol_version == 2
        await pilot.press(*"go", "enter")
        transcript = app.query_one("Transcript")
        await until(pilot, lambda: "still here after the bad updates" in transcript.plain_text, "the text after them")
        await until(pilot, lambda: app.session.state.status == "ready", "the turn's end")
        calls = app.session.state.tool_calls
        assert calls["t-status"].status == "pending" and calls["t-status"].title == "Bad status call"
        assert calls["t-rest"].title == "Tool call" and calls["t-rest"].kind is None
        assert calls["t-rest"].status == "completed" and calls["t-rest"].content == []
        assert calls["t-items"].locations == [] and calls["t-items"].kind is None
        assert [item["content"]["text"] for item in calls["t-items"].content] == ["good item"]
        text = transcript.plain_text
        for shown in ("Bad status call", "output kept", "Some items bad", "good item"):
            assert shown in text
        assert app.is_running and app.return_code is None
    lines = [r.getMessage() for r in caplog.records if r.name == "rat.v2"]
    assert len([line for line in lines if "'t-status'" in line]) == 1
    assert any("'t-status'" in line and "status (dict)" in line for line in lines)
    rest = [line for line in lines if "'t-rest'" in line]
    assert len(rest) == 1 and all(part in rest[0] for part in ("title (list)", "kind (dict)", "content (str)",
                                                               "2 of 2 locations items"))
    items = [line for line in lines if "'t-items'" in line]
    assert len(items) == 1 and "1 of 2 content items" in items[0] and "locations (dict)" in items[0]


def test_a_card_that_cannot_be_drawn_shows_one_line_instead_of_raising(caplog: pytest.LogCaptureFixture) -> None:
    """The last line: a field of a wrong type that reached the entry anyway (not through the reducer)."""
    from rich.console import Console

    call = ToolCallEntry("k1", "t-odd", status={"state": "done"})  # type: ignore[arg-type]
    console = Console(width=80, record=True)
    console.print(render_tool_call(call, {}))
    assert "tool call t-odd could not be drawn" in console.export_text()
    assert any("t-odd" in r.getMessage() for r in caplog.records if r.name == "rat.ui")


def test_the_reducer_stores_no_field_of_the_wrong_type() -> None:
    from rat_tui.state.models import SessionState
    from rat_tui.state.reducer import _patch_tool_call

    state = SessionState()
    _patch_tool_call(state, "t", {"title": 5, "status": {"a": 1}, "kind": [], "content": "x", "meta": 3})
    entry = state.tool_calls["t"]
    assert (entry.title, entry.status, entry.kind, entry.content, entry.meta) == ("Tool call", "pending", None, [], None)
