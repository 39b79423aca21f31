"""Agent quirks follow the agent recognised by `initialize`'s agentInfo, not only the catalog's launch line."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.agents.quirks import quirks_for
from rat_tui.app import RatApp

from .helpers.app import scripted, send, until, view

pytestmark = pytest.mark.slow


def gemini_like(target: Path, name: str, title: str) -> dict:
    """An agent that, like Gemini CLI 0.61, reads a file before creating it and gives up on an error answer."""
    call = "write-1"
    return {
        "initialize_result": {"agentInfo": {"name": name, "title": title, "version": "0.61.0"}},
        "turns": [[
            {"update": {"sessionUpdate": "tool_call", "toolCallId": call, "title": f"WriteFile {target.name}",
                        "kind": "edit", "status": "in_progress", "locations": [{"path": str(target)}]}},
            {"request": {"method": "fs/read_text_file", "params": {"sessionId": "$SESSION", "path": str(target)}},
             "on_error": [
                 {"update": {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "failed",
                             "content": [{"type": "content", "content": {
                                 "type": "text", "text": "Error checking existing file: Resource not found"}}]}},
             ],
             "on_result": [
                 {"request": {"method": "fs/write_text_file",
                              "params": {"sessionId": "$SESSION", "path": str(target), "content": "hello\n"}}},
                 {"update": {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "completed"}},
             ]},
            {"chunk": "done"},
        ]],
    }


def test_recognised_by_name_title_and_version() -> None:
    assert quirks_for("gemini-cli", "0.61.0").missing_file_empty
    assert quirks_for("GEMINI-CLI", None).missing_file_empty
    assert quirks_for("wrapper", "1", title="Gemini CLI").missing_file_empty
    assert not quirks_for("scripted-agent", "0.61.0")
    assert not quirks_for(None, None)


@pytest.mark.parametrize(("name", "title", "created"),
                         [("gemini-cli", "Gemini CLI", True), ("other-agent", "Other agent", False)])
async def test_gemini_launched_by_its_own_command_creates_a_file(
    tmp_path: Path, record_file: Path, name: str, title: str, created: bool
) -> None:
    target = tmp_path / "new-file.txt"
    # Launched as `rat -- python …` would launch it: no catalog entry, no missing_file_empty switch.
    app = RatApp(scripted(gemini_like(target, name, title), tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        assert not session.command.missing_file_empty
        await send(pilot, "create new-file.txt")
        await until(pilot, lambda: session.state.stop_reason == "end_turn", "the turn to end")
        status = session.state.tool_calls["write-1"].status
        if created:
            assert target.read_text() == "hello\n"
            assert status == "completed"
        else:  # the control: an unknown agent still gets the error answer the protocol asks for
            assert not target.exists()
            assert status == "failed"
