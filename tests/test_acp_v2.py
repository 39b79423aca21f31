"""ACP v2 against a scripted v2 agent over real pipes: every method rat-tui sends or serves in v2, the fall
back to v1, and every message rat-tui sends validated against the v2 schema
(tests/fixtures/acp-schema/v2-preview/schema.unstable.json).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.protocol.rpc_log import RpcLog
from rat_tui.session import controls
from rat_tui.session.agent_session import AgentSession
from rat_tui.state.models import MessageEntry
from rat_tui.ui.screens.traffic import TrafficScreen
from rat_tui.ui.widgets.status_bar import StatusBar

from .helpers.agents import assert_sent_messages_valid, received, scripted_argv
from .helpers.harness import RatThemedApp, finish, wait_for

V2_SCHEMA = Path(__file__).resolve().parent / "fixtures" / "acp-schema" / "v2-preview"
SESSION = "sess-v2"
CONFIG = [
    {"configId": "mode", "name": "Mode", "category": "mode", "type": "select", "currentValue": "ask",
     "options": [{"value": "ask", "name": "Ask"}, {"value": "code", "name": "Code"}]},
    {"configId": "think", "name": "Think", "type": "boolean", "currentValue": False},
]


@pytest.fixture
def v2_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Where the agent writes what it receives; afterwards every message rat-tui sent must fit the v2 schema."""
    path = tmp_path / "received.jsonl"
    monkeypatch.setenv("RAT_FAKE_RECORD", str(path))
    yield path
    monkeypatch.setenv("RAT_ACP_SCHEMA_DIR", str(V2_SCHEMA))
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")
    assert_sent_messages_valid(path)


def script(**more) -> dict:
    return {"protocol": 2, "session_id": SESSION,
            "new_session_result": {"configOptions": CONFIG,
                                   "availableCommands": [{"type": "command", "name": "review", "description": "Review",
                                                          "input": {"type": "text", "hint": "what"}}]},
            **more}


async def start(spec: dict, tmp_path: Path, protocol: int = 2, **kwargs) -> tuple[AgentSession, asyncio.Task]:
    command = SimpleNamespace(name="fake-v2", argv=scripted_argv(spec, tmp_path), env={}, protocol=protocol)
    session = AgentSession(command, tmp_path, **kwargs)
    task = asyncio.create_task(session.run())
    await wait_for(lambda: session.state.status != "starting", what="handshake")
    return session, task


async def turn(session: AgentSession, text: str) -> None:
    task = session.start_prompt(text)
    assert task is not None
    await asyncio.wait_for(task, 20)


def sent(record: Path, method: str) -> list[dict]:
    return [m for m in received(record) if m.get("method") == method]


def update(sessionUpdate: str, **fields) -> dict:
    return {"update": {"sessionUpdate": sessionUpdate, **fields}}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


PATCH = ("diff --git /w/notes.txt /w/notes.txt\n--- /w/notes.txt\n+++ /w/notes.txt\n"
         "@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n")


async def test_a_v2_turn_streams_into_the_same_state_as_v1(tmp_path: Path, v2_record: Path) -> None:
    steps = [
        update("agent_thought_chunk", messageId="m1", content={"type": "text", "text": "thinking"}),
        update("agent_message_chunk", messageId="m2", content={"type": "text", "text": "Hello "}),
        update("agent_message_chunk", messageId="m2", content={"type": "text", "text": "v2"}),
        update("tool_call_update", toolCallId="t1", title="Edit notes", kind="edit", status="in_progress"),
        update("tool_call_content_chunk", toolCallId="t1",
               content={"type": "diff", "changes": [{"operation": "modify", "path": "/w/notes.txt"}],
                        "patch": {"format": "git_patch", "text": PATCH}}),
        update("tool_call_update", toolCallId="t1", status="completed"),
        update("terminal_update", terminalId="term1", command="ls"),
        update("tool_call_update", toolCallId="t2", title="ls", kind="execute",
               content=[{"type": "terminal", "terminalId": "term1"}]),
        update("terminal_output_chunk", terminalId="term1", data=b64("one\n")),
        update("terminal_output_chunk", terminalId="term1", data=b64("two\n")),
        update("terminal_update", terminalId="term1", exitStatus={"exitCode": 0}),
        update("plan_update", plan={"type": "items", "planId": "p1",
                                    "entries": [{"content": "Do it", "priority": "high", "status": "in_progress"}]}),
        update("usage_update", used=10, size=100),
        update("config_option_update", configOptions=[{**CONFIG[0], "currentValue": "code"}, CONFIG[1]]),
        update("session_info_update", title="A v2 session"),
    ]
    session, task = await start(script(turns=[[{"send": {"jsonrpc": "2.0", "method": "session/update",
                                                         "params": {"sessionId": SESSION, **step}}}
                                               for step in steps]]), tmp_path)
    assert session.hello.protocol_version == 2 and session.state.protocol_version == 2
    assert [c["name"] for c in session.state.commands] == ["review"]  # from the session/new answer
    await turn(session, "hello v2")
    state = session.state
    assert state.status == "ready" and state.stop_reason == "end_turn" and state.activity == "idle"
    messages = [(e.role, e.text) for e in state.entries if isinstance(e, MessageEntry)]
    assert messages == [("user", "hello v2"), ("thought", "thinking"), ("agent", "Hello v2")]  # the echo claimed ours
    edit = state.tool_calls["t1"]
    assert edit.status == "completed" and edit.content[0]["oldText"] == "alpha\nbeta\ngamma\n"
    assert state.terminals["term1"].output == "one\ntwo\n" and state.terminals["term1"].exit_code == 0
    # v2's plan_update has v1's unstable shape: the v1 path keeps it by planId (state/plans.py)
    assert [(i.content, i.status) for i in state.plans["p1"].items] == [("Do it", "in_progress")]
    assert state.usage["used"] == 10 and state.title == "A v2 session"
    assert controls.current_name(state, "mode") == "Code"
    initialize = sent(v2_record, "initialize")[0]["params"]
    assert initialize["protocolVersion"] == 2 and initialize["info"]["name"] == "rat-tui"
    assert initialize["capabilities"] == {"auth": {"terminal": {}}, "elicitation": {"form": {}, "url": {}},
                                          "session": {"promptSuggestions": {}}}
    await finish(session, task)


async def test_permissions_apply_the_subject_and_answer_as_in_v1(tmp_path: Path, v2_record: Path) -> None:
    options = [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}, {"optionId": "no", "name": "No", "kind": "reject_once"}]
    steps = [
        update("tool_call_update", toolCallId="t1", title="Editing", kind="edit", status="in_progress"),
        {"state": "requires_action"},
        {"request": {"method": "session/request_permission", "params": {
            "sessionId": SESSION, "title": "Make edits?", "options": options,
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t1", "title": "Edit files", "status": "pending"}}}}},
        {"request": {"method": "session/request_permission", "params": {
            "sessionId": SESSION, "title": "Run command?", "description": "to list files", "options": options,
            "subject": {"type": "command", "command": "ls -l", "cwd": str(tmp_path)}}}},
        {"state": "running"},
    ]
    session, task = await start(script(turns=[steps]), tmp_path)
    asked: list[dict] = []

    async def ask(params: dict, tool_call: dict) -> dict:
        asked.append(tool_call)
        assert session.state.tool_calls[tool_call["toolCallId"]].title in ("Edit files", "Run command?")
        return options[0] if len(asked) == 1 else options[1]

    session.permissions.ask = ask
    await turn(session, "edit please")
    assert [call["title"] for call in asked] == ["Edit files", "Run command?"]
    assert asked[1]["rawInput"]["command"] == "ls -l" and asked[1]["kind"] == "execute"
    answers = [m["result"] for m in received(v2_record) if "result" in m]
    assert answers == [{"outcome": {"outcome": "selected", "optionId": "yes"}},
                       {"outcome": {"outcome": "selected", "optionId": "no"}}]
    await finish(session, task)


async def test_cancel_ends_the_turn_at_idle_cancelled(tmp_path: Path, v2_record: Path) -> None:
    session, task = await start(script(turns=[[update_step("agent_message_chunk", "m1", "partial"),
                                               {"wait_cancel": True}]]), tmp_path)
    running = session.start_prompt("long story")
    await wait_for(lambda: any(isinstance(e, MessageEntry) and e.text == "partial" for e in session.state.entries),
                   what="the first chunk")
    assert await session.cancel()
    await asyncio.wait_for(running, 20)
    assert session.state.status == "cancelled" and session.state.stop_reason == "cancelled"
    assert sent(v2_record, "session/cancel") == [{"jsonrpc": "2.0", "method": "session/cancel",
                                                  "params": {"sessionId": SESSION}}]
    await finish(session, task)


def update_step(kind: str, message_id: str, text: str) -> dict:
    return {"update": {"sessionUpdate": kind, "messageId": message_id, "content": {"type": "text", "text": text}}}


async def test_an_error_after_insertion_fails_the_turn(tmp_path: Path, v2_record: Path) -> None:
    steps = [{"state": "idle", "stopReason": "error", "error": {"code": -32603, "message": "model overloaded"}}]
    session, task = await start(script(turns=[steps]), tmp_path)
    await turn(session, "try")
    assert session.state.status == "error" and "model overloaded" in session.state.status_detail
    await finish(session, task)


async def test_config_options_modes_and_booleans_go_out_with_their_type(tmp_path: Path, v2_record: Path) -> None:
    answer = {"configOptions": [{**CONFIG[0], "currentValue": "code"}, {**CONFIG[1], "currentValue": True}]}
    session, task = await start(script(responses={"session/set_config_option": {"result": answer}}), tmp_path)
    assert await controls.set_mode(session, "code") is None
    assert await controls.set_config_option(session, "think", True) is None
    calls = [m["params"] for m in sent(v2_record, "session/set_config_option")]
    assert calls == [{"sessionId": SESSION, "configId": "mode", "value": "code", "type": "id"},
                     {"sessionId": SESSION, "configId": "think", "value": True, "type": "boolean"}]
    assert controls.current_name(session.state, "mode") == "Code"
    assert controls.find_option(session.state, "think")["currentValue"] is True
    await finish(session, task)


async def test_resume_replays_then_list_close_and_delete(tmp_path: Path, v2_record: Path) -> None:
    replay = [
        update_step("user_message", "u1", "") | {"update": {"sessionUpdate": "user_message", "messageId": "u1", "content": []}},
        update_step("user_message_chunk", "u1", "earlier question"),
        {"update": {"sessionUpdate": "agent_message", "messageId": "a1", "content": []}},
        update_step("agent_message_chunk", "a1", "earlier answer"),
    ]
    spec = script(on_request={"session/resume": [replay],
                              "session/list": [[{"respond": {"sessions": [{"sessionId": "old", "cwd": str(tmp_path)}]}}]]},
                  initialize_result_v2={"capabilities": {"session": {"delete": {}}}})
    session, task = await start(spec, tmp_path, attach_session_id="old")
    assert session.session_id == "old" and session.state.status == "ready"
    texts = [(e.role, e.text) for e in session.state.entries if isinstance(e, MessageEntry)]
    assert texts == [("user", "earlier question"), ("agent", "earlier answer")]
    resume = sent(v2_record, "session/resume")[0]["params"]
    assert resume["replayFrom"] == {"type": "start"} and resume["sessionId"] == "old"
    assert "mcpServers" not in resume  # none configured: v2 makes the list optional
    sessions, cursor = await session.list_agent_sessions(tmp_path)
    assert [s["sessionId"] for s in sessions] == ["old"] and cursor is None
    assert await session.delete_agent_session("other") is None
    await turn(session, "and now")
    assert [e.text for e in session.state.entries if isinstance(e, MessageEntry) and e.role == "user"] == \
        ["earlier question", "and now"]
    await session.close()
    await asyncio.wait_for(task, 10)
    assert [m["params"] for m in sent(v2_record, "session/close")] == [{"sessionId": "old"}]
    assert sent(v2_record, "session/delete")[0]["params"] == {"sessionId": "other"}


async def test_login_and_logout_are_auth_login_and_auth_logout(tmp_path: Path, v2_record: Path) -> None:
    methods = [{"methodId": "key", "name": "API key", "type": "agent"},
               {"methodId": "term", "name": "Terminal login", "type": "terminal", "args": ["--login"],
                "env": [{"name": "MODE", "value": "x"}]}]
    session, task = await start(script(initialize_result_v2={"authMethods": methods}), tmp_path)
    assert [m["id"] for m in session.auth_methods] == ["key", "term"]
    argv, env = session.terminal_auth_command(session.auth_methods[1])
    assert argv[-1] == "--login" and env["MODE"] == "x"
    assert await session.authenticate(session.auth_methods[0]) is None
    assert session.supports("logout") and await session.logout() is None
    assert [m["params"] for m in sent(v2_record, "auth/login")] == [{"methodId": "key"}]
    assert len(sent(v2_record, "auth/logout")) == 1
    assert not sent(v2_record, "authenticate") and not sent(v2_record, "logout")
    await finish(session, task)


async def test_fs_and_terminals_are_not_served_and_elicitation_is(tmp_path: Path, v2_record: Path) -> None:
    steps = [
        {"request": {"method": "fs/read_text_file", "params": {"sessionId": SESSION, "path": str(tmp_path / "x")}}},
        {"request": {"method": "terminal/create", "params": {"sessionId": SESSION, "command": "ls"}}},
        {"request": {"method": "elicitation/create", "params": {
            "sessionId": SESSION, "mode": "form", "message": "Name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
        {"send": {"jsonrpc": "2.0", "method": "elicitation/complete", "params": {"elicitationId": "e1"}}},
    ]
    session, task = await start(script(turns=[steps]), tmp_path)
    await turn(session, "ask me")
    answers = [m for m in received(v2_record) if "id" in m and "method" not in m]
    assert [a.get("error", {}).get("code") for a in answers[:2]] == [-32601, -32601]
    assert answers[2]["result"] == {"action": "cancel"}  # no UI plugged in: cancelled, in the v2 shape
    assert session.state.status == "ready"
    await finish(session, task)


async def test_an_agent_that_answers_v1_is_spoken_to_in_v1(tmp_path: Path, record_file: Path) -> None:
    session, task = await start({"turns": [[{"chunk": "v1 answer"}]]}, tmp_path)  # no "protocol": 2
    assert session.hello.protocol_version == 1 and session.state.protocol_version == 1
    await turn(session, "hi")
    assert session.state.stop_reason == "end_turn"
    assert any(isinstance(e, MessageEntry) and e.text == "v1 answer" for e in session.state.entries)
    initialize = sent(record_file, "initialize")[0]["params"]
    assert initialize["protocolVersion"] == 2 and initialize["clientCapabilities"]["fs"]["readTextFile"] is True
    assert any("ACP v2 was asked for; this agent speaks v1." in getattr(e, "text", "") for e in session.state.entries)
    await finish(session, task)


async def test_unsupported_version_error_falls_back_to_v1(tmp_path: Path, record_file: Path) -> None:
    refuse = {"error": {"code": -32022, "message": "Unsupported protocol version",
                        "data": {"requested": 2, "supported": [1]}}}
    session, task = await start({"on_request": {"initialize": [[refuse], []]}}, tmp_path)
    assert session.state.status == "ready" and session.hello.protocol_version == 1
    assert [m["params"]["protocolVersion"] for m in sent(record_file, "initialize")] == [2, 1]
    await finish(session, task)


async def test_v1_profiles_never_ask_for_v2(tmp_path: Path, v2_record: Path) -> None:
    session, task = await start(script(), tmp_path, protocol=1)
    assert session.hello.protocol_version == 1
    assert sent(v2_record, "initialize")[0]["params"]["protocolVersion"] == 1
    await finish(session, task)
    v2_record.unlink()  # v1 messages: the v1 schema checks those elsewhere


async def test_rpc_log_traffic_inspector_and_status_bar_say_v2(tmp_path: Path, v2_record: Path) -> None:
    log_path = tmp_path / "rpc.jsonl"
    rpc_log = RpcLog(log_path)
    session, task = await start(script(turns=[[update_step("agent_message_chunk", "m", "ok")]]), tmp_path, rpc_log=rpc_log)
    await turn(session, "hi")
    await finish(session, task)
    rpc_log.close()
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert "acp" not in lines[0] and lines[0]["method"] == "initialize"  # before the answer, nobody knows
    assert {line.get("acp") for line in lines[2:]} == {2}
    assert session.traffic.protocol_version == 2

    class Host(RatThemedApp):
        def compose(self):
            yield StatusBar()

    app = Host()
    async with app.run_test(size=(100, 6)) as pilot:
        bar = app.query_one(StatusBar)
        bar.show(session.state)
        await pilot.pause()
        assert "ready v2" in str(bar.render()) and "agent at work" not in str(bar.render())
        session.state.activity = "running"  # a cycle the agent started on its own
        bar.show(session.state)
        await pilot.pause()
        assert "ready v2 · agent at work" in str(bar.render())
        await app.push_screen(TrafficScreen(session.traffic))
        await pilot.pause()
        assert str(app.screen.status.render()).startswith("Traffic (ACP v2)")


def test_the_version_is_chosen_per_profile_flag_and_manifest(tmp_path: Path) -> None:
    from rat_tui.agents.catalog import parse_manifest, spec_for
    from rat_tui.cli import parse_args, resolve_agent
    from rat_tui.config import load_config

    config_file = tmp_path / "config.toml"
    config_file.write_text('[agents.claude]\ncommand = "claude-agent-acp"\nprotocol = 2\n'
                           '[agents.old]\ncommand = "old-agent"\n')
    config, problems = load_config(config_file)
    assert problems == []
    assert resolve_agent(parse_args(["--agent", "claude"]), config)[0].protocol == 2
    assert resolve_agent(parse_args(["--agent", "old"]), config)[0].protocol == 1
    assert resolve_agent(parse_args(["--agent", "old", "--protocol", "2"]), config)[0].protocol == 2
    assert resolve_agent(parse_args(["--protocol", "1", "--agent", "claude"]), config)[0].protocol == 1
    assert resolve_agent(parse_args(["--protocol", "2", "--", "some-agent"]), config)[0].protocol == 2
    with pytest.raises(SystemExit):
        parse_args(["--protocol", "3"])
    bad = tmp_path / "bad.toml"
    bad.write_text('[agents.x]\ncommand = "x"\nprotocol = 7\n')
    config, problems = load_config(bad)
    assert problems and "protocol" in problems[0]  # said plainly, never a traceback
    agent = parse_manifest({"id": "v2-agent", "rat": {"command": "v2-agent", "protocol": 2}})
    assert agent.protocol == 2 and parse_manifest({"id": "v1-agent"}).protocol == 1
    assert spec_for(agent, SimpleNamespace(launch=SimpleNamespace(argv=("v2-agent",), env={}))).protocol == 2


async def test_a_silent_v2_turn_is_reported_like_a_silent_v1_prompt(tmp_path: Path, v2_record: Path) -> None:
    session, task = await start(script(turns=[[{"sleep": 1.5}]]), tmp_path, request_timeout=0.4)
    await turn(session, "slow")
    notices = [e.text for e in session.state.entries if not isinstance(e, MessageEntry)]
    assert any("has sent nothing for 0.4 s during this turn" in text for text in notices)
    assert session.state.status == "ready"
    await finish(session, task)


async def test_the_permission_dialog_shows_the_v2_question_and_why() -> None:
    from rat_tui.protocol.v2 import v1_permission_params
    from rat_tui.ui.screens.permission import PermissionScreen

    request = v1_permission_params({"sessionId": SESSION, "title": "Run command?", "description": "to list the files",
                                    "options": [{"optionId": "ok", "name": "Yes", "kind": "allow_once"}],
                                    "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t9", "title": "ls -l",
                                                                                  "kind": "execute"}}}, 1)
    app = RatThemedApp()
    async with app.run_test(size=(100, 30)) as pilot:
        app.use_rat_theme()
        await app.push_screen(PermissionScreen(request, agent_name="Codex"))
        await pilot.pause()
        shown = [str(widget.render()) for widget in app.screen.query(".note")]
        assert shown[:2] == ["Run command?", "to list the files"]
        assert str(app.screen.query_one("#title").render()) == "ls -l"


def test_v2_capabilities_read_as_v1_ones() -> None:
    from rat_tui.protocol.v2 import v1_capabilities, v2_mcp_servers

    caps = v1_capabilities({"capabilities": {"session": {"prompt": {"image": {}}, "mcp": {"http": {}}, "fork": {}}},
                            "authMethods": [{"methodId": "k", "name": "Key", "type": "agent"}]})
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": False}
    assert caps["mcpCapabilities"] == {"stdio": False, "http": True, "sse": False, "acp": False}
    assert set(caps["sessionCapabilities"]) == {"list", "resume", "close", "fork"} and not caps["loadSession"]
    assert caps["auth"]["logout"] == {}  # any auth method means auth/login and auth/logout exist
    assert v2_mcp_servers([{"name": "a", "command": "/bin/a", "args": [], "env": []},
                           {"type": "sse", "name": "b", "url": "http://x"}]) == \
        [{"type": "stdio", "name": "a", "command": "/bin/a", "args": [], "env": []}]


def test_a_v2_agent_without_stdio_gets_no_stdio_server(tmp_path: Path) -> None:
    from rat_tui.config import McpServerConfig
    from rat_tui.protocol.v2 import v1_capabilities
    from rat_tui.session import mcp_servers

    server = McpServerConfig(name="files", command=sys.executable)
    no_stdio = v1_capabilities({"capabilities": {"session": {"mcp": {"http": {}}}}})
    wire, rows = mcp_servers.plan([server], no_stdio, tmp_path)
    assert wire == [] and "mcpCapabilities.stdio" in rows[0].why
    wire, _ = mcp_servers.plan([server], v1_capabilities({"capabilities": {"session": {"mcp": {"stdio": {}}}}}), tmp_path)
    assert [w["name"] for w in wire] == ["files"]
    wire, _ = mcp_servers.plan([server], {"mcpCapabilities": {}}, tmp_path)  # v1: stdio is baseline
    assert [w["name"] for w in wire] == ["files"]


async def test_a_journaled_v2_session_rebuilds_as_it_was_shown(tmp_path: Path, v2_record: Path) -> None:
    from rat_tui.history.journal import HistoryJournal
    from rat_tui.history.rebuild import rebuild

    journal = HistoryJournal(tmp_path / "h.sqlite3")
    recorder = journal.start_session("fake-v2", ["fake"], str(tmp_path))
    steps = [update_step("agent_message_chunk", "m1", "journaled answer"),
             update("tool_call_update", toolCallId="t1", title="Read", kind="read", status="completed")]
    session, task = await start(script(turns=[steps]), tmp_path, recorders=[recorder])
    await turn(session, "remember this")
    await finish(session, task)
    journal.close()
    reopened = HistoryJournal(tmp_path / "h.sqlite3")
    [info] = reopened.sessions()
    assert info.agent_title == "Scripted fake agent (v2)" and info.first_prompt == "remember this"
    builder = rebuild(reopened.records(info.id))
    state = builder.store.state
    assert state.protocol_version == 2 and builder.can_continue and builder.agent_session_id == SESSION
    assert [(e.role, e.text) for e in state.entries if isinstance(e, MessageEntry)] == \
        [("user", "remember this"), ("agent", "journaled answer")]
    assert state.tool_calls["t1"].title == "Read" and state.stop_reason == "end_turn" and state.status == "ready"
    reopened.close()


async def test_an_unanswered_request_is_given_up_with_cancel_request(tmp_path: Path, v2_record: Path) -> None:
    session, task = await start(script(on_request={"session/list": [[{"hang": True}]]}), tmp_path, request_timeout=0.3)
    listing = asyncio.create_task(session.list_agent_sessions(tmp_path))
    await wait_for(lambda: "session/list" in session.stalled_requests.values(), what="the stalled session/list")
    assert await session.cancel_stalled() == 1
    with pytest.raises(Exception, match="cancelled"):
        await asyncio.wait_for(listing, 10)
    await wait_for(lambda: sent(v2_record, "$/cancel_request") != [], what="the agent to receive $/cancel_request")
    [cancel] = sent(v2_record, "$/cancel_request")
    assert cancel["params"]["requestId"] == sent(v2_record, "session/list")[0]["id"]
    await finish(session, task)
