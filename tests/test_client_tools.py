"""rat-tui's own MCP server (client_tools/): native MCP-over-ACP and the stdio shim bridge, over real pipes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import mcp.types as types
import pytest

from rat_tui.app import RatApp
from rat_tui.agents.spec import AgentSpec
from rat_tui.client_tools.settings import ClientToolsSettings, merged
from rat_tui.config import ClientToolsConfig, Config, validate_config
from rat_tui.ui.screens.ask_user import AskUserScreen
from rat_tui.ui.screens.mcp_servers import McpServersScreen

from .helpers.agents import received, scripted_argv
from .helpers.app import screen_text, until
from .helpers.harness import finish, start_session

NATIVE = {"initialize_result": {"agentCapabilities": {"mcpCapabilities": {"acp": True}}}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "scripted", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def call(id: int, name: str, arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def progress(message: dict) -> dict:
    message["params"]["_meta"] = {"progressToken": f"p{message['id']}"}
    return message


def mcp_replies(record_file: Path) -> list[dict]:
    """What the scripted agent received from rat-tui's MCP server, each checked against the SDK's models."""
    path = Path(str(record_file) + ".mcp")
    replies = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    for reply in replies:
        if "exit" not in reply["message"]:
            types.JSONRPCMessage.model_validate(reply["message"])
    return replies




def result_of(replies: list[dict], conn: str, id: int) -> dict:
    [message] = [r["message"] for r in replies if r["conn"] == conn and r["message"].get("id") == id]
    assert "result" in message, message
    return message["result"]


def check_agent_wrappers(record_file: Path) -> int:
    """The scripted agent's mcp/* requests fit schema.unstable.json too (RAT_ACP_SCHEMA_UNSTABLE is set);
    rat-tui's answers and notifications are checked by the record_file fixture."""
    from .helpers.acp_schema import validate

    sent = [json.loads(line) for line in Path(str(record_file) + ".sent").read_text().splitlines()]
    wrappers = [m for m in sent if m["method"].startswith("mcp/")]
    for message in wrappers:
        validate(message["method"], "request", message["params"])
    return len(wrappers)


def check_requests(messages: list[dict]) -> None:
    """The MCP requests the scripts send are valid MCP (so what we test against is real MCP)."""
    for message in messages:
        model = types.ClientRequest if "id" in message else types.ClientNotification
        model.model_validate({k: v for k, v in message.items() if k in ("method", "params")})


def app_for(script: dict, tmp_path: Path, config: Config | None = None) -> RatApp:
    spec = AgentSpec(name="scripted", argv=scripted_argv(script, tmp_path), env={}, is_demo=False)
    return RatApp(spec, tmp_path, config=config or Config())


# -- native: MCP-over-ACP ---------------------------------------------------------------------------

@pytest.mark.slow
async def test_native_list_and_ask_from_the_keyboard_request_scoped(tmp_path: Path, record_file: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # mcp/message and the `acp` server are unstable
    messages = [INITIALIZE, INITIALIZED, LIST,
                progress(call(3, "ask_user", {"question": "Which colour?", "choices": ["red", "blue"]})),
                call(4, "ask_user", {"question": "Anything else?"})]
    check_requests(messages)
    script = {**NATIVE, "turns": [[{"mcp_acp": {"conn": "a", "messages": messages}}]]}
    app = app_for(script, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        app.session.start_prompt("use your tools")
        await until(pilot, lambda: isinstance(app.screen, AskUserScreen), "the question")
        await pilot.pause()
        assert "Which colour?" in screen_text(app)
        await pilot.press("down", "enter")  # the second choice, from the keyboard
        await until(pilot, lambda: isinstance(app.screen, AskUserScreen) and app.screen.question == "Anything else?",
                    "the second question")
        await pilot.pause()
        await pilot.press("escape")
        await until(pilot, lambda: app.session.state.status == "ready" and app.session.state.turns == 1, "the turn's end")
        calls = [c for c in app.session.state.tool_calls.values() if c.tool_call_id.startswith("rat-tools-")]
        assert [(c.status, c.raw_input.get("question")) for c in calls] == [("completed", "Which colour?"),
                                                                            ("completed", "Anything else?")]
        assert not app.session.client_tools.native._active  # no request left open
        await pilot.press("alt+m")
        await until(pilot, lambda: isinstance(app.screen, McpServersScreen), "the summary")
        await pilot.pause()
        assert "rat-tui" in screen_text(app) and "acp (native)" in screen_text(app)
    [new] = [m["params"] for m in received(record_file) if m.get("method") == "session/new"]
    [declared] = new["mcpServers"]
    assert declared["type"] == "acp" and declared["name"] == "rat-tui" and declared["serverId"].startswith("rat-tui-")
    replies = mcp_replies(record_file)
    assert result_of(replies, "a", 1)["serverInfo"]["name"] == "rat-tui"
    tools = types.ListToolsResult.model_validate(result_of(replies, "a", 2))
    assert {t.name for t in tools.tools} == {"ask_user", "show_file", "notify", "list_sessions", "read_session"}
    answer = types.CallToolResult.model_validate(result_of(replies, "a", 3))
    assert answer.content[0].text == "blue" and not answer.isError
    assert types.CallToolResult.model_validate(result_of(replies, "a", 4)).content[0].text == "dismissed"
    # rat-tui -> agent: the progress notification of the question, as an mcp/message notification
    # scoped to the request it is about
    [note] = [r["message"] for r in replies if r["message"].get("method") == "notifications/progress"]
    assert types.ServerNotification.model_validate(note).root.params.progressToken == "p3"
    [wrapped] = [m["params"] for m in received(record_file) if m.get("method") == "mcp/message"]
    assert wrapped["requestId"] == "a-3" and wrapped["serverId"] == declared["serverId"]
    assert check_agent_wrappers(record_file) == 4  # one mcp/message per request; no connect or disconnect
    assert not any(m.get("method") in ("mcp/connect", "mcp/disconnect") for m in received(record_file))


# -- bridged: the stdio shim ------------------------------------------------------------------------

@pytest.mark.slow
async def test_bridged_shim_launched_by_the_agent_shows_a_file(tmp_path: Path, record_file: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    messages = [INITIALIZE, INITIALIZED, LIST, call(3, "show_file", {"path": "notes.txt", "line": 2}),
                call(4, "notify", {"message": "All done", "bell": True}), call(5, "show_file", {"path": "missing.txt"})]
    check_requests(messages)
    script = {"turns": [[{"mcp_stdio": {"conn": "s", "messages": messages}}]]}
    app = app_for(script, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        app.session.start_prompt("show me")
        await until(pilot, lambda: app.session.state.turns == 1 and app.session.state.status == "ready", "the turn's end")
        view = app.tabs.active_view
        await until(pilot, lambda: view.preview.is_open and view.preview.path == tmp_path / "notes.txt", "the preview")
        assert view.preview.line == 2
        await pilot.press("alt+m")
        await until(pilot, lambda: isinstance(app.screen, McpServersScreen), "the summary")
        await pilot.pause()
        assert "stdio (bridged)" in screen_text(app)
    [new] = [m["params"] for m in received(record_file) if m.get("method") == "session/new"]
    [declared] = new["mcpServers"]
    assert declared["command"] == sys.executable and declared["args"][:2] == ["-m", "rat_tui.client_tools.shim"]
    replies = mcp_replies(record_file)
    assert "notes.txt:2" in types.CallToolResult.model_validate(result_of(replies, "s", 3)).content[0].text
    assert not types.CallToolResult.model_validate(result_of(replies, "s", 4)).isError
    missing = types.CallToolResult.model_validate(result_of(replies, "s", 5))
    assert missing.isError and "No such file" in missing.content[0].text
    assert replies[-1]["message"] == {"exit": 0}  # the agent closed the shim's stdin: it exited


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["mcp_stdio", "mcp_acp"])
async def test_two_connections_at_once(tmp_path: Path, record_file: Path, monkeypatch: pytest.MonkeyPatch,
                                       transport: str) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")
    steps = [{transport: {"conn": "a", "messages": [INITIALIZE, INITIALIZED], "keep": True}},
             {transport: {"conn": "b", "messages": [INITIALIZE, INITIALIZED], "keep": True}},
             {transport: {"conn": "a", "messages": [LIST], "keep": True}},
             {transport: {"conn": "b", "messages": [LIST]}},
             {"mcp_close": "a"}]
    script = {**(NATIVE if transport == "mcp_acp" else {}), "turns": [steps]}
    session, task = await start_session(script, tmp_path, client_tools=ClientToolsSettings())
    assert session.client_tools.transport == ("native" if transport == "mcp_acp" else "bridged")
    turn = session.start_prompt("two")
    await asyncio.wait_for(turn, 60)
    await finish(session, task)
    replies = mcp_replies(record_file)
    for conn in ("a", "b"):
        assert len(types.ListToolsResult.model_validate(result_of(replies, conn, 2)).tools) == 5
    if transport == "mcp_acp":  # request-scoped: two initialize and two list requests, all answered
        assert check_agent_wrappers(record_file) == 4


@pytest.mark.slow
async def test_a_shim_with_a_wrong_secret_is_refused(tmp_path: Path, record_file: Path) -> None:
    session, task = await start_session({}, tmp_path, client_tools=ClientToolsSettings())
    [new] = [m["params"] for m in received(record_file) if m.get("method") == "session/new"]
    [declared] = new["mcpServers"]
    env = {**os.environ, **{e["name"]: e["value"] for e in declared["env"]}, "RAT_MCP_SECRET": "not-the-secret"}
    shim = await asyncio.create_subprocess_exec(declared["command"], *declared["args"], env=env,
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(shim.communicate(json.dumps(INITIALIZE).encode() + b"\n"), 30)
    assert shim.returncode == 2 and out == b""
    assert b"refused" in err
    bridge = session.client_tools.bridge
    assert bridge.refused == 1
    await finish(session, task)
    assert not Path(bridge.path).exists()  # the socket goes with the session


HOST = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from rat_tui.client_tools.bridge import Bridge
    from rat_tui.client_tools.settings import ClientToolsSettings
    from rat_tui.client_tools.tools import ToolHost
    from rat_tui.state.store import SessionStore

    async def main():
        store = SessionStore()
        async def never(params): return {"outcome": {"outcome": "cancelled"}}
        bridge = Bridge(ToolHost(ClientToolsSettings(), store.apply_update, never, lambda: store.state, Path.cwd()))
        print(await bridge.open(), bridge.secret, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
""")


@pytest.mark.slow
async def test_a_shim_left_alone_when_rat_exits_terminates(tmp_path: Path) -> None:
    host = await asyncio.create_subprocess_exec(sys.executable, "-c", HOST, stdout=subprocess.PIPE)
    path, secret = (await asyncio.wait_for(host.stdout.readline(), 30)).decode().split()
    shim = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "rat_tui.client_tools.shim", "--socket", path, env={**os.environ, "RAT_MCP_SECRET": secret},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    shim.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    await shim.stdin.drain()
    reply = json.loads(await asyncio.wait_for(shim.stdout.readline(), 30))
    assert types.InitializeResult.model_validate(reply["result"]).serverInfo.name == "rat-tui"
    host.kill()  # rat-tui dies; the agent keeps the shim's stdin open
    await host.wait()
    assert await asyncio.wait_for(shim.wait(), 30) == 0


# -- policy and config -------------------------------------------------------------------------------

@pytest.mark.slow
async def test_reading_sessions_asks_first_and_off_tools_are_not_offered(tmp_path: Path, record_file: Path) -> None:
    settings = merged(ClientToolsConfig(), ClientToolsConfig(tools={"notify": "off"}))
    messages = [INITIALIZE, INITIALIZED, LIST, call(3, "list_sessions", {}), call(4, "notify", {"message": "x"})]
    script = {"turns": [[{"mcp_stdio": {"conn": "s", "messages": messages}}]]}
    session, task = await start_session(script, tmp_path, client_tools=settings)
    await asyncio.wait_for(session.start_prompt("x"), 60)  # no UI: the permission question is answered cancelled
    await finish(session, task)
    replies = mcp_replies(record_file)
    assert "notify" not in {t.name for t in types.ListToolsResult.model_validate(result_of(replies, "s", 2)).tools}
    declined = types.CallToolResult.model_validate(result_of(replies, "s", 3))
    assert declined.isError and "did not allow list_sessions" in declined.content[0].text
    assert types.CallToolResult.model_validate(result_of(replies, "s", 4)).isError  # unknown tool
    [card] = [c for c in session.state.tool_calls.values() if c.tool_call_id.startswith("rat-tools-")]
    assert card.status == "failed" and "list_sessions" in card.title


def test_settings_merge_globally_then_per_profile() -> None:
    config, problems = validate_config({"client_tools": {"native": False, "tools": {"read_session": "allow"}},
                                        "agents": {"x": {"command": "x", "client_tools": {"enabled": False}},
                                                   "y": {"command": "y", "client_tools": {"tools": {"ask_user": "maybe"}}}}})
    assert "y" in config.agents and any("agents.y.client_tools" in p for p in problems)
    _, problems = validate_config({"client_tools": {"tools": {"ask_usr": "off"}}})
    assert any(p.startswith("client_tools.tools.ask_usr") and "ask_user" in p for p in problems)
    both = merged(config.client_tools, config.agents["x"].client_tools)
    assert not both.enabled and not both.native and both.tools["read_session"] == "allow"
    assert merged(None).offered == ["ask_user", "show_file", "notify", "list_sessions", "read_session"]


@pytest.mark.slow
async def test_disabled_server_is_listed_but_not_sent(tmp_path: Path, record_file: Path) -> None:
    session, task = await start_session({}, tmp_path, client_tools=ClientToolsSettings(enabled=False))
    await finish(session, task)
    [new] = [m["params"] for m in received(record_file) if m.get("method") == "session/new"]
    assert new["mcpServers"] == []
    [row] = session.mcp_report
    assert row.name == "rat-tui" and not row.sent and row.why == "disabled in the config"


# -- the demo agent, in both modes ---------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("native", [True, False])
async def test_demo_agent_asks_and_shows_through_either_transport(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  native: bool) -> None:
    monkeypatch.setenv("RAT_DEMO_DELAY", "0")
    (tmp_path / "README.md").write_text("# Demo workspace\n")
    argv = [sys.executable, "-m", "rat_tui.demo", *(["--mcp-acp"] if native else [])]
    app = RatApp(AgentSpec(name="demo", argv=argv, env={}, is_demo=True), tmp_path, config=Config())
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        assert app.session.client_tools.transport == ("native" if native else "bridged")
        app.session.start_prompt("ask and show")
        await until(pilot, lambda: isinstance(app.screen, AskUserScreen), "the question")
        await pilot.pause()
        await pilot.press("tab", *"Hi there", "enter")  # a typed answer instead of a choice
        await until(pilot, lambda: app.session.state.turns == 1 and app.session.state.status == "ready", "the turn's end")
        view = app.tabs.active_view
        await until(pilot, lambda: view.preview.path == tmp_path / "README.md", "the preview")
        answer = "".join(e.text for e in app.session.state.entries if type(e).__name__ == "MessageEntry" and e.role == "agent")
        assert ("MCP-over-ACP" if native else "stdio MCP server") in answer
        assert "you answered **Hi there**" in answer and "Shown to the user" in answer


@pytest.mark.slow
async def test_other_sessions_are_read_once_the_user_allows_it(tmp_path: Path, record_file: Path) -> None:
    from .helpers.app import scripted_named

    messages = [INITIALIZE, INITIALIZED, call(2, "list_sessions", {}), call(3, "read_session", {"sessionId": "alpha"})]
    reader = {"turns": [[{"mcp_stdio": {"conn": "s", "messages": messages}}]]}
    app = RatApp(scripted_named({"session_id": "alpha", "turns": [[{"chunk": "the first answer"}]]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        first = app.session
        await until(pilot, lambda: first.state.status == "ready", "first ready")
        first.start_prompt("a question in tab one")
        await until(pilot, lambda: first.state.turns == 1 and first.state.status == "ready", "first answer")
        second = await app.open_session(scripted_named(reader, tmp_path, "two"), tmp_path)
        await until(pilot, lambda: second.state.status == "ready", "second ready")
        second.start_prompt("what did I do elsewhere?")
        done = lambda: sum(c.status == "completed" for c in second.state.tool_calls.values())  # noqa: E731
        for count in (1, 2):  # list_sessions, then read_session: each asks first
            await until(pilot, lambda: type(app.screen).__name__ == "PermissionScreen", "the permission question")
            await pilot.pause()
            assert "rat-tui" in screen_text(app)
            await pilot.press("y")
            await until(pilot, lambda: done() == count, "the allowed call")  # noqa: B023 (awaited in this pass)
        await until(pilot, lambda: second.state.turns == 1 and second.state.status == "ready", "second turn's end")
    replies = mcp_replies(record_file)
    listed = json.loads(types.CallToolResult.model_validate(result_of(replies, "s", 2)).content[0].text)
    assert [(s["id"], s["agent"]) for s in listed] == [("alpha", "Scripted fake agent")]
    transcript = types.CallToolResult.model_validate(result_of(replies, "s", 3)).content[0].text
    assert "## User\n\na question in tab one" in transcript and "## Agent\n\nthe first answer" in transcript


@pytest.mark.slow
async def test_unknown_server_ids_and_the_old_connect_are_refused(tmp_path: Path, record_file: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")
    steps = [{"mcp_acp": {"conn": "x", "server_id": "someone-else", "messages": [LIST]}},
             {"request": {"method": "mcp/connect", "params": {"serverId": "someone-else"}}},
             {"mcp_acp": {"conn": "a", "messages": [INITIALIZE, LIST, call(3, "no_such_tool", {})]}}]
    session, task = await start_session({**NATIVE, "turns": [steps]}, tmp_path, client_tools=ClientToolsSettings())
    await asyncio.wait_for(session.start_prompt("x"), 60)
    await finish(session, task)
    errors = {m["id"]: m["error"] for m in received(record_file) if "error" in m}
    assert any("No MCP server with id 'someone-else'" in e["message"] for e in errors.values())
    assert any(e["code"] == -32601 for e in errors.values())  # mcp/connect: gone from the protocol
    replies = mcp_replies(record_file)
    assert len(types.ListToolsResult.model_validate(result_of(replies, "a", 2)).tools) == 5
    unknown = types.CallToolResult.model_validate(result_of(replies, "a", 3))  # an inner outcome, not an outer error
    assert unknown.isError


@pytest.mark.slow
async def test_cancelling_the_turn_dismisses_the_question(tmp_path: Path, record_file: Path) -> None:
    messages = [INITIALIZE, INITIALIZED, call(2, "ask_user", {"question": "Still there?"})]
    script = {"turns": [[{"mcp_stdio": {"conn": "s", "messages": messages}}, {"wait_cancel": True}]]}
    app = app_for(script, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        app.session.start_prompt("ask")
        await until(pilot, lambda: isinstance(app.screen, AskUserScreen), "the question")
        await app.session.cancel()  # what Esc does in the session view
        await until(pilot, lambda: not isinstance(app.screen, AskUserScreen), "the question to close")
        await until(pilot, lambda: app.session.state.status == "cancelled", "the cancelled turn")
    assert types.CallToolResult.model_validate(result_of(mcp_replies(record_file), "s", 2)).content[0].text == "dismissed"


@pytest.mark.slow
async def test_a_remembered_reject_rule_stops_even_an_allowed_tool(tmp_path: Path, record_file: Path) -> None:
    from rat_tui.session.permission_rules_file import load_policy

    notes = tmp_path / "notes.txt"
    notes.write_text("x\n")
    policy = load_policy(tmp_path / "rules.json")
    policy.remember("Scripted fake agent", {"kind": "read", "locations": [{"path": str(notes)}]}, "reject")
    messages = [INITIALIZE, INITIALIZED, call(2, "show_file", {"path": str(notes)})]
    script = {"turns": [[{"mcp_stdio": {"conn": "s", "messages": messages}}]]}
    session, task = await start_session(script, tmp_path, client_tools=ClientToolsSettings(), policy=policy)
    await asyncio.wait_for(session.start_prompt("show"), 60)
    await finish(session, task)
    result = types.CallToolResult.model_validate(result_of(mcp_replies(record_file), "s", 2))
    assert result.isError and "did not allow show_file" in result.content[0].text
    [card] = [c for c in session.state.tool_calls.values() if c.tool_call_id.startswith("rat-tools-")]
    assert card.status == "failed" and "auto-rejected by rule" in (card.auto_decision or "")
