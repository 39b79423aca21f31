"""AgentSession's lifecycle against scripted agents over real pipes: load, resume, list, close, delete,
restart after a crash, unanswered requests, and logins."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.session.agent_session import AgentSession
from rat_tui.config import McpServerConfig
from rat_tui.session.opening import NOT_REMEMBERED
from rat_tui.session.ui import HeadlessUI
from rat_tui.protocol.router import RpcError
from rat_tui.state.models import MessageEntry, NoticeEntry

from .helpers.agents import received, scripted_argv
from .helpers.harness import finish, start_session, wait_for

pytestmark = pytest.mark.slow

LOAD = {"loadSession": True}
RESUME = {"sessionCapabilities": {"resume": {}}}
ALL = {"loadSession": True, "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
       "auth": {"logout": {}}}


def caps(capabilities: dict, **script) -> dict:
    return {"initialize_result": {"agentCapabilities": capabilities}, **script}


def texts(session: AgentSession, role: str | None = None) -> list[str]:
    return [e.text for e in session.state.entries if isinstance(e, MessageEntry) and (role is None or e.role == role)]


def notices(session: AgentSession) -> list[str]:
    return [e.text for e in session.state.entries if isinstance(e, NoticeEntry)]


def methods(record: Path) -> list[str]:
    return [m.get("method") for m in received(record) if "method" in m]


def sent(record: Path, method: str) -> list[dict]:
    return [m for m in received(record) if m.get("method") == method]


async def test_load_with_a_5000_update_replay(tmp_path: Path, record_file: Path) -> None:
    script = caps(LOAD, on_request={"session/load": [[{"replay": 5000}]]})
    session, task = await start_session(script, tmp_path, attach_session_id="old-7")
    session.store.flush()
    assert session.state.status == "ready" and session.session_id == "old-7"
    shown = texts(session)
    assert len(shown) == 5000
    assert shown[:2] == ["question 0", "answer 0"] and shown[-1] == "answer 2499"
    assert not notices(session)  # a fresh tab shows the replay and nothing else
    await session.start_prompt("next")
    await finish(session, task)
    [load] = sent(record_file, "session/load")
    assert load["params"] == {"sessionId": "old-7", "cwd": str(tmp_path), "mcpServers": []}
    assert "session/new" not in methods(record_file)
    assert sent(record_file, "session/prompt")[0]["params"]["sessionId"] == "old-7"


async def test_resume_without_replay(tmp_path: Path, record_file: Path) -> None:
    session, task = await start_session(caps(RESUME), tmp_path, attach_session_id="old-3")
    assert session.state.status == "ready" and session.session_id == "old-3"
    assert any("resumed" in n for n in notices(session))
    await finish(session, task)
    assert [m for m in methods(record_file) if m.startswith("session/")] == ["session/resume"]
    assert sent(record_file, "session/resume")[0]["params"]["sessionId"] == "old-3"


async def test_load_preferred_over_resume_and_mcp_servers_passed(tmp_path: Path, record_file: Path) -> None:
    command = SimpleNamespace(name="fake", argv=scripted_argv(caps(ALL), tmp_path), env={})
    configured = McpServerConfig(name="files", command="/bin/true")
    session = AgentSession(command, tmp_path, attach_session_id="s-9", mcp_config=[configured])
    server = {"name": "files", "command": "/bin/true", "args": [], "env": []}
    task = asyncio.create_task(session.run())
    await wait_for(lambda: session.state.status == "ready", what="ready")
    await finish(session, task)
    assert sent(record_file, "session/load")[0]["params"]["mcpServers"] == [server]
    assert not sent(record_file, "session/resume")


async def test_attach_without_load_or_resume_starts_a_new_session(tmp_path: Path, record_file: Path) -> None:
    session, task = await start_session({}, tmp_path, attach_session_id="old-1")
    assert session.state.status == "ready" and session.session_id == "sess-1"
    assert any("cannot reopen" in n for n in notices(session))
    await finish(session, task)
    assert not {"session/load", "session/resume"} & set(methods(record_file))


async def test_failed_load_falls_back_to_a_new_session(tmp_path: Path, record_file: Path) -> None:
    script = caps(LOAD, on_request={"session/load": [[{"error": {"code": -32002, "message": "Resource not found"}}]]})
    session, task = await start_session(script, tmp_path, attach_session_id="gone")
    assert session.state.status == "ready" and session.session_id == "sess-1"
    assert any("could not load session gone" in n for n in notices(session))
    await finish(session, task)


async def test_list_pages_and_cwd_filter(tmp_path: Path, record_file: Path) -> None:
    page1 = {"sessions": [{"sessionId": "a", "cwd": str(tmp_path), "title": "First"}, {"junk": 1}], "nextCursor": "c2"}
    page2 = {"sessions": [{"sessionId": "b", "cwd": "/elsewhere", "updatedAt": "2026-01-01T00:00:00Z"}]}
    script = caps({"sessionCapabilities": {"list": {}}},
                  on_request={"session/list": [[{"respond": page1}], [{"respond": page2}]]})
    session, task = await start_session(script, tmp_path)
    first, cursor = await session.list_agent_sessions(tmp_path)
    assert [s["sessionId"] for s in first] == ["a"] and cursor == "c2"
    second, cursor = await session.list_agent_sessions(None, "c2")
    assert [s["sessionId"] for s in second] == ["b"] and cursor is None
    await finish(session, task)
    params = [m["params"] for m in sent(record_file, "session/list")]
    assert params == [{"cwd": str(tmp_path)}, {"cursor": "c2"}]


async def test_list_delete_close_logout_absent_unless_advertised(tmp_path: Path, record_file: Path) -> None:
    session, task = await start_session({}, tmp_path)
    with pytest.raises(LookupError):
        await session.list_agent_sessions(tmp_path)
    assert await session.delete_agent_session("x") == "This agent does not delete sessions."
    assert await session.logout() == "This agent does not support logging out."
    await session.close()
    await asyncio.wait_for(task, 10)
    assert not {"session/list", "session/delete", "session/close", "logout"} & set(methods(record_file))


async def test_delete_close_and_logout_when_advertised(tmp_path: Path, record_file: Path) -> None:
    session, task = await start_session(caps(ALL), tmp_path)
    assert await session.delete_agent_session("old-2") is None
    assert await session.logout() is None
    await session.close()
    await asyncio.wait_for(task, 10)
    assert sent(record_file, "session/delete")[0]["params"] == {"sessionId": "old-2"}
    assert sent(record_file, "session/close")[0]["params"] == {"sessionId": "sess-1"}
    assert sent(record_file, "logout")


async def kill_mid_turn(session: AgentSession, tmp_path: Path) -> asyncio.Task:
    turn = session.start_prompt("long job")
    await wait_for(lambda: "working on it" in texts(session, "agent"), what="the first chunk")
    assert session.process is not None and session.process.pid
    os.killpg(session.process.pid, signal.SIGKILL)
    await asyncio.wait_for(turn, 10)
    await wait_for(lambda: session.state.status == "exited", what="the exit")
    return turn


MID_TURN = [[{"chunk": "working on it"}, {"stderr": "about to be killed"},
             {"update": {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run", "status": "in_progress"}},
             {"sleep": 60}], []]


async def test_killed_mid_turn_then_restarted_and_reloaded(tmp_path: Path, record_file: Path) -> None:
    # The restarted process plays the script again from its first turn: only the first one hangs.
    once = [[{"when_missing": str(tmp_path / "killed"), "steps": MID_TURN[0]}, {"chunk": "after restart"}]]
    script = caps(LOAD, turns=once, on_request={"session/load": [[
        {"replay": 4},
        {"update": {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "fix", "description": "Fix"}]}},
    ]]})
    session, task = await start_session(script, tmp_path)
    await kill_mid_turn(session, tmp_path)
    (tmp_path / "killed").write_text("")
    await asyncio.wait_for(task, 10)
    assert session.state.stop_reason == "failed"
    assert session.state.tool_calls["t1"].status == "failed"
    exit_notice = notices(session)[-1]
    assert "killed by SIGKILL (exit code -9)" in exit_notice and "The running turn failed." in exit_notice
    assert "about to be killed" in exit_notice and "Alt+R" in exit_notice
    before = texts(session)

    task = asyncio.create_task(session.restart())
    await wait_for(lambda: session.state.status == "ready", what="ready again")
    assert session.session_id == "sess-1"
    assert texts(session) == before  # the replay was not shown a second time
    assert session.replay_skipped == 4
    assert session.state.commands[0]["name"] == "fix"  # session facts from the replay still apply
    assert any("reloaded" in n for n in notices(session))
    await session.start_prompt("again")
    assert session.state.status == "ready" and texts(session)[-2:] == ["again", "after restart"]
    await finish(session, task)
    assert sent(record_file, "session/load")[0]["params"]["sessionId"] == "sess-1"
    assert len(sent(record_file, "initialize")) == 2


async def test_killed_then_restarted_with_resume(tmp_path: Path, record_file: Path) -> None:
    session, task = await start_session(caps(RESUME, turns=MID_TURN), tmp_path)
    await kill_mid_turn(session, tmp_path)
    await asyncio.wait_for(task, 10)
    task = asyncio.create_task(session.restart())
    await wait_for(lambda: session.state.status == "ready", what="ready again")
    assert texts(session, "user") == ["long job"]
    assert any("resumed" in n for n in notices(session))
    await finish(session, task)
    assert sent(record_file, "session/resume")[0]["params"]["sessionId"] == "sess-1"


async def test_restarted_without_reattach_support_starts_anew(tmp_path: Path, record_file: Path) -> None:
    session, task = await start_session({"turns": MID_TURN}, tmp_path)
    await kill_mid_turn(session, tmp_path)
    await asyncio.wait_for(task, 10)
    task = asyncio.create_task(session.restart())
    await wait_for(lambda: session.state.status == "ready", what="ready again")
    assert NOT_REMEMBERED in notices(session)
    assert texts(session, "user") == ["long job"]
    await finish(session, task)
    assert len(sent(record_file, "session/new")) == 2


async def test_restart_of_a_hung_agent_stops_the_old_process(tmp_path: Path) -> None:
    session, task = await start_session({"turns": MID_TURN}, tmp_path)
    session.start_prompt("long job")
    await wait_for(lambda: "working on it" in texts(session, "agent"), what="the first chunk")
    old = session.process
    restarted = asyncio.create_task(session.restart())
    await wait_for(lambda: session.process is not old and session.state.status == "ready", what="ready again")
    assert old is not None and old.returncode is not None
    assert session.state.stop_reason == "failed"
    await asyncio.wait_for(task, 10)  # the first run() returned
    await finish(session, restarted)


async def test_unanswered_request_is_reported_and_cancelled(tmp_path: Path, record_file: Path) -> None:
    script = caps({"sessionCapabilities": {"list": {}}}, on_request={"session/list": [[{"hang": True}]]})
    session, task = await start_session(script, tmp_path, request_timeout=0.3)
    listing = asyncio.create_task(session.list_agent_sessions(tmp_path))
    await wait_for(lambda: session.stalled_requests, what="the hang report")
    assert any("has not answered session/list" in n and "Esc cancels" in n for n in notices(session))
    assert await session.cancel_stalled() == 1
    with pytest.raises(Exception) as caught:
        await asyncio.wait_for(listing, 10)
    assert getattr(caught.value, "code", None) == -32800
    await finish(session, task)
    [request] = sent(record_file, "session/list")
    [cancel] = sent(record_file, "$/cancel_request")
    assert cancel["params"] == {"requestId": request["id"]}


async def test_silent_turn_is_reported(tmp_path: Path) -> None:
    script = {"turns": [[{"sleep": 1.5}, {"chunk": "finally"}]]}
    session, task = await start_session(script, tmp_path, request_timeout=0.3)
    await session.start_prompt("slow")
    assert any("sent nothing for 0.3 s during this turn" in n for n in notices(session))
    assert texts(session, "agent") == ["finally"]
    await finish(session, task)


AUTH_METHODS = [
    {"id": "oauth", "name": "Log in with the browser", "description": "Opens a browser"},
    {"id": "tty", "name": "Log in in the terminal", "type": "terminal", "args": ["--write-marker", "MARKER"],
     "env": {"RAT_FAKE_AUTH_ENV": "from-method"}},
]


class LoginAsked(HeadlessUI):
    """A screen that only records the login requests it is shown."""

    def __init__(self) -> None:
        self.asked: list[list] = []

    def login_needed(self, methods: list) -> None:
        self.asked.append(methods)


async def test_authenticate_after_auth_required_then_retry(tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": {"authMethods": AUTH_METHODS},
              "on_request": {"session/new": [[{"error": {"code": -32000, "message": "Authentication required"}}], []]}}
    ui = LoginAsked()
    asked = ui.asked
    command = SimpleNamespace(name="fake", argv=scripted_argv(script, tmp_path), env={})
    session = AgentSession(command, tmp_path, ui=ui)
    task = asyncio.create_task(session.run())
    await wait_for(lambda: session.auth_needed, what="the login request")
    assert session.state.status == "error" and session.state.status_detail == "login required"
    assert [m["id"] for m in asked[0]] == ["oauth", "tty"]
    assert session.can_prompt() == "The agent needs a login first: Alt+L picks a method."
    assert await session.authenticate(AUTH_METHODS[0]) is None
    assert session.state.status == "ready" and session.session_id == "sess-1"
    await finish(session, task)
    assert methods(record_file) == ["initialize", "session/new", "authenticate", "session/new"]
    assert sent(record_file, "authenticate")[0]["params"] == {"methodId": "oauth"}
    assert received(record_file)[0]["params"]["clientCapabilities"]["auth"] == {"terminal": True}


async def test_terminal_auth_command_is_the_agents_own_plus_args_and_env(tmp_path: Path) -> None:
    command = SimpleNamespace(name="fake", argv=["agent-bin", "--acp"], env={"A": "1"})
    session = AgentSession(command, tmp_path)
    argv, env = session.terminal_auth_command(AUTH_METHODS[1])
    assert argv == ["agent-bin", "--acp", "--write-marker", "MARKER"]
    assert env == {"A": "1", "RAT_FAKE_AUTH_ENV": "from-method"}
    assert await session.authenticate(AUTH_METHODS[1]) is not None  # never sent through authenticate


async def test_auth_required_from_any_request_asks_for_a_login(tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": {"authMethods": AUTH_METHODS[:1], "agentCapabilities": {"sessionCapabilities": {"list": {}}}},
              "on_request": {"session/list": [[{"error": {"code": -32000, "message": "Token expired"}}], []]}}
    ui = LoginAsked()
    asked = ui.asked
    session, task = await start_session(script, tmp_path, ui=ui)
    with pytest.raises(RpcError):
        await session.list_agent_sessions(tmp_path)
    assert session.auth_needed and [m["id"] for m in asked[0]] == ["oauth"]
    assert any("Token expired" in n and "Alt+L" in n for n in notices(session))
    assert await session.authenticate(AUTH_METHODS[0]) is None
    assert session.state.status == "ready" and not session.auth_needed
    assert await session.list_agent_sessions(tmp_path) == ([], None)
    await finish(session, task)
