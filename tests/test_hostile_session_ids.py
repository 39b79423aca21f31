"""Updates that name no session (no `sessionId`, null, a number) are refused and logged, over real pipes:
they are not shown in the current session as they were (AgentSession._apply compared against the session
being loaded, None when none is)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.session.agent_session import AgentSession

from .helpers.agents import scripted_argv
from .helpers.harness import finish, wait_for


def update_with(params: dict, text: str) -> dict:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {**params, "update": update}}}


async def test_an_update_naming_no_session_is_refused_and_logged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("RAT_FAKE_RECORD", str(tmp_path / "received.jsonl"))
    caplog.set_level(logging.WARNING, logger="rat")
    steps = [update_with({}, "from nowhere "), update_with({"sessionId": None}, "from null "),
             update_with({"sessionId": 7}, "from a number "), {"chunk": "the real answer"}]
    command = SimpleNamespace(name="ids", argv=scripted_argv({"turns": [steps]}, tmp_path), env={})
    session = AgentSession(command, tmp_path)
    task = asyncio.create_task(session.run())
    try:
        await wait_for(lambda: session.state.status == "ready", what="handshake")
        session.start_prompt("go")
        await wait_for(lambda: any("the real answer" in getattr(e, "text", "") for e in session.state.entries),
                       what="the real answer")
        text = " ".join(getattr(e, "text", "") for e in session.state.entries)
        assert "from nowhere" not in text and "from null" not in text and "from a number" not in text
        lines = [r.getMessage() for r in caplog.records if "without a sessionId" in r.getMessage()]
        assert lines == ["update without a sessionId ignored: None", "update without a sessionId ignored: None",
                         "update without a sessionId ignored: 7"]
    finally:
        await finish(session, task)
