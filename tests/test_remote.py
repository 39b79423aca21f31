"""Remote agents over ACP's WebSocket transport: real acpremote servers on 127.0.0.1 wrapping the scripted
and demo agents, and a wss:// server with a self-signed certificate."""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import sys
from pathlib import Path

import pytest

from rat_tui.agents.spec import RemoteSpec, remote_spec
from rat_tui.cli import parse_args, resolve_agent
from rat_tui.config import Config
from rat_tui.protocol.remote import make_link
from rat_tui.protocol.remote_link import Endpoint, RemoteError
from rat_tui.session.agent_session import AgentSession
from rat_tui.session.ui import HeadlessUI
from rat_tui.state.models import MessageEntry

from .helpers.agents import received, scripted_argv, sent
from .helpers.harness import wait_for
from .helpers.history import continue_from_history
from .helpers.remote import TOKEN_ENV, AcpRemote, self_signed
from .helpers.tmux import Tmux, wait_until

TOKEN = "tok-9f3c1e-never-written"
PERMISSION = {"request": {"method": "session/request_permission", "params": {
    "sessionId": "$SESSION", "toolCall": {"toolCallId": "t1", "title": "Edit notes.txt", "kind": "edit",
                                          "status": "pending"},
    "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}}}
PLAN = {"update": {"sessionUpdate": "plan", "entries": [{"content": "look around", "priority": "high",
                                                          "status": "in_progress"}]}}
RESUMABLE = {"agentCapabilities": {"sessionCapabilities": {"resume": {}}}}


class Allowing(HeadlessUI):
    """Answers every permission request with its first option (the user pressing Allow)."""

    async def ask_permission(self, request, tool_call):
        return {"optionId": request["options"][0]["optionId"]}


def agent_text(session: AgentSession) -> str:
    return "".join(e.text for e in session.state.entries if isinstance(e, MessageEntry) and e.role == "agent")


def notices(session: AgentSession) -> str:
    return "\n".join(getattr(e, "text", "") for e in session.state.entries if type(e).__name__ == "NoticeEntry")


async def connect(url: str, tmp_path: Path, protocol: int = 1, **kwargs) -> tuple[AgentSession, asyncio.Task]:
    remote = RemoteSpec(url=url, token_env=kwargs.pop("token_env", TOKEN_ENV), insecure=kwargs.pop("insecure", False),
                        shared_cwd=kwargs.pop("shared_cwd", False))
    session = AgentSession(remote_spec("remote", remote, protocol), tmp_path, **kwargs)
    task = asyncio.create_task(session.run())
    await wait_for(lambda: session.state.status != "starting", what="the handshake")
    return session, task


async def finish(session: AgentSession, task: asyncio.Task) -> None:
    await session.stop()
    await asyncio.wait_for(task, 10)


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    return TOKEN


TURN_SCRIPT = {"turns": [[{"chunk": "streamed ", "repeat": 3}, PLAN, PERMISSION, {"chunk": "done"}]]}


async def a_turn_streams_asks_and_plans(url: str, port: int, tmp_path: Path, protocol: int, remote_dir: Path) -> None:
    """A session on the scripted agent playing TURN_SCRIPT behind `url`: its turn streamed, its plan shown, its
    permission answered, and no client files or terminals offered (the agent's cwd is `remote_dir`)."""
    record = tmp_path / "record.jsonl"
    session, task = await connect(url, tmp_path, protocol, ui=Allowing())
    assert session.state.status == "ready", session.state.status_detail
    assert session.state.host == f"127.0.0.1:{port}" and session.remote_host == session.state.host
    assert session.state.protocol_version == protocol
    session.start_prompt("go")
    await wait_for(lambda: session.state.status == "ready" and session.state.turns == 1, what="the turn's end")
    assert agent_text(session) == "streamed streamed streamed done"
    assert [item.content for item in session.state.plan] == ["look around"]
    answers = [m for m in received(record) if "result" in m and isinstance(m["result"].get("outcome"), dict)]
    assert [a["result"]["outcome"] for a in answers] == [{"outcome": "selected", "optionId": "yes"}]
    # The agent's files are on its machine: no client file system or terminals, the remote cwd.
    [initialize] = sent(record, "initialize")
    capabilities = initialize["params"].get("clientCapabilities", {})
    assert capabilities["fs"] == {"readTextFile": False, "writeTextFile": False} and capabilities["terminal"] is False
    opened = sent(record, "session/new")[0]["params"]
    assert opened["cwd"] == str(remote_dir) and session.state.cwd == str(remote_dir)
    await finish(session, task)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", [1, 2])
async def test_a_turn_streams_asks_and_plans_over_websocket(tmp_path: Path, token: str, protocol: int) -> None:
    record = tmp_path / "record.jsonl"
    remote_dir = tmp_path / "remote"
    remote_dir.mkdir()
    argv = scripted_argv({"protocol": protocol, **TURN_SCRIPT}, tmp_path)
    with AcpRemote(argv, remote_dir, token, {"RAT_FAKE_RECORD": str(record)}) as server:
        await a_turn_streams_asks_and_plans(server.url, server.port, tmp_path, protocol, remote_dir)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", [1, 2])
async def test_a_turn_streams_asks_and_plans_over_streamable_http(tmp_path: Path, token: str, protocol: int) -> None:
    """The same scripted agent behind a Streamable HTTP server (hypercorn, tests/helpers/acp_http_server.py's
    StdioRelay): v1 and v2 sessions as over WebSocket."""
    from .helpers.acp_http_server import StdioRelay

    remote_dir = "/srv/remote-work"  # the server's metadata names it; it need not exist here
    argv = scripted_argv({"protocol": protocol, **TURN_SCRIPT}, tmp_path)
    env = {"RAT_FAKE_RECORD": str(tmp_path / "record.jsonl")}
    async with StdioRelay(argv, env, token=token, metadata={"remote_cwd": remote_dir}) as server:
        await a_turn_streams_asks_and_plans(server.url, server.port, tmp_path, protocol, Path(remote_dir))


@pytest.mark.slow
async def test_cancel_and_a_shared_directory_over_websocket(tmp_path: Path, token: str) -> None:
    record = tmp_path / "record.jsonl"
    script = {"turns": [[{"chunk": "working on it"}, {"wait_cancel": True}]]}
    with AcpRemote(scripted_argv(script, tmp_path), tmp_path, token, {"RAT_FAKE_RECORD": str(record)}) as server:
        session, task = await connect(server.url, tmp_path, shared_cwd=True)
        session.start_prompt("long job")
        await wait_for(lambda: "working on it" in agent_text(session), what="the first chunk")
        assert await session.cancel()
        await wait_for(lambda: session.state.status == "cancelled", what="the cancelled turn")
        assert len(sent(record, "session/cancel")) == 1
        capabilities = sent(record, "initialize")[0]["params"]["clientCapabilities"]
        assert capabilities["fs"]["readTextFile"] is True and capabilities["terminal"] is True  # shared_cwd
        await finish(session, task)


@pytest.mark.slow
async def test_a_wrong_token_and_a_closed_port_say_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with AcpRemote(scripted_argv({}, tmp_path), tmp_path, TOKEN) as server:
        monkeypatch.setenv(TOKEN_ENV, "not-the-token")
        session, task = await connect(server.url, tmp_path)
        assert session.state.status == "error"
        assert "401" in session.state.status_detail and "--token-env" in session.state.status_detail
        await finish(session, task)
        monkeypatch.delenv(TOKEN_ENV)
        session, task = await connect(server.url, tmp_path)
        assert session.state.status == "error" and TOKEN_ENV in session.state.status_detail  # unset: said so
        await finish(session, task)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    session, task = await connect(server.url, tmp_path)  # the server is gone
    assert session.state.status == "error"
    assert f"127.0.0.1:{server.port}" in session.state.status_detail and "refused" in session.state.status_detail
    await finish(session, task)


def replayed(kind: str, text: str) -> dict:
    return {"update": {"sessionUpdate": kind, "content": {"type": "text", "text": text}}}


@pytest.mark.slow
@pytest.mark.parametrize("reattach", ["session/resume", "session/load"])
async def test_a_server_killed_mid_turn_is_a_state_then_a_reconnection(tmp_path: Path, token: str,
                                                                       reattach: str) -> None:
    from rat_tui.history.journal import HistoryJournal
    from rat_tui.history.rebuild import rebuild

    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        folder.mkdir()
    hold = tmp_path / "never"
    before = {"initialize_result": RESUMABLE, "turns": [[{"chunk": "partial answer"}, {"wait_file": str(hold)}]]}
    after = {"initialize_result": RESUMABLE, "turns": [[{"chunk": "answer after the reconnect"}]]}
    if reattach == "session/load":  # the agent kept the conversation and replays it: shown once all the same
        after = {**after, "initialize_result": {"agentCapabilities": {"loadSession": True}}, "on_request": {
            "session/load": [[replayed("user_message_chunk", "first question"),
                              replayed("agent_message_chunk", "partial answer")]]}}
    journal = HistoryJournal(tmp_path / "history.sqlite3")
    recorder = journal.start_session("remote", ["ws"], str(tmp_path))
    record1, record2 = first / "record.jsonl", second / "record.jsonl"
    server = AcpRemote(scripted_argv(before, first), tmp_path, token, {"RAT_FAKE_RECORD": str(record1)}).start()
    try:
        session, task = await connect(server.url, tmp_path, recorders=[recorder])
        session.start_prompt("first question")
        await wait_for(lambda: "partial answer" in agent_text(session), what="the partial answer")
        server.kill()
        await wait_for(lambda: session.state.status == "disconnected", what="the disconnected state")
        assert "lost" in session.state.status_detail and "reconnecting" in session.state.status_detail
        server.env["RAT_FAKE_RECORD"] = str(record2)
        server.start(scripted_argv(after, second))
        await wait_for(lambda: session.state.status == "ready", what="the reconnection")
        assert session.state.stop_reason == "failed" and agent_text(session) == "partial answer"
        assert "cut by the network" in notices(session) and "Disconnected from" in notices(session)
        done = "reloaded" if reattach == "session/load" else "resumed"
        assert f"Reconnected to 127.0.0.1:{server.port}; session sess-1 {done}" in notices(session)
        assert "Agent restarted" not in notices(session)
        assert [r["params"]["sessionId"] for r in sent(record2, reattach)] == ["sess-1"]
        assert sent(record2, "session/prompt") == []  # the cut prompt is not sent again
        session.start_prompt("second question")
        await wait_for(lambda: "answer after the reconnect" in agent_text(session), what="the answer after it")
        await wait_for(lambda: session.state.status == "ready", what="the second turn's end")
        assert agent_text(session) == "partial answer" + "answer after the reconnect"
        await finish(session, task)
    finally:
        server.kill()
    recorder.flush()
    records = journal.records(recorder.id)
    journal.close()
    shown = [(e.role, e.text) for e in rebuild(records).store.state.entries if isinstance(e, MessageEntry)]
    assert shown == [("user", "first question"), ("agent", "partial answer"), ("user", "second question"),
                     ("agent", "answer after the reconnect")]
    if reattach == "session/resume":  # nothing replayed: each message is in the journal once
        texts = [json.dumps(r.message) for r in records]
        for text in ("partial answer", "answer after the reconnect", "first question", "second question"):
            assert sum(text in t for t in texts) == 1, text


async def _tls_server(cert: Path, key: str):
    """A wss:// ACP server (acpremote's relay to the demo agent, behind websockets' TLS server)."""
    from acpremote.command import CommandOptions, run_remote_command_connection
    from websockets.asyncio.server import serve

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    options = CommandOptions(command=(sys.executable, "-m", "rat_tui.demo"))
    return await serve(lambda ws: run_remote_command_connection(ws, command_options=options), "127.0.0.1", 0,
                       ssl=context)


@pytest.mark.slow
async def test_a_self_signed_certificate_is_refused_unless_insecure(tmp_path: Path, token: str) -> None:
    cert, key = self_signed(tmp_path)
    server = await _tls_server(cert, str(key))
    port = server.sockets[0].getsockname()[1]
    url = f"wss://127.0.0.1:{port}/acp"
    try:
        session, task = await connect(url, tmp_path)
        assert session.state.status == "error"
        assert f"127.0.0.1:{port}" in session.state.status_detail and "not trusted" in session.state.status_detail
        await finish(session, task)
        session, task = await connect(url, tmp_path, insecure=True)
        assert session.state.status == "ready", session.state.status_detail
        session.start_prompt("hello")
        await wait_for(lambda: session.state.turns == 1 and session.state.status == "ready", what="the demo's turn")
        assert "hello" in agent_text(session)
        await finish(session, task)
    finally:
        server.close()
        await server.wait_closed()


def test_the_link_is_chosen_by_scheme_and_a_missing_one_said_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    from rat_tui.protocol import remote
    from rat_tui.protocol.remote_http import StreamableHttpLink
    from rat_tui.protocol.remote_ws import WebSocketLink

    assert isinstance(make_link(Endpoint("ws://h:1/acp")), WebSocketLink)
    assert isinstance(make_link(Endpoint("wss://h:1/acp")), WebSocketLink)
    assert isinstance(make_link(Endpoint("https://h/acp")), StreamableHttpLink)
    with pytest.raises(RemoteError, match="not a remote agent's URL"):
        make_link(Endpoint("ftp://h/acp"))
    monkeypatch.setitem(remote.LINKS, "http", ("rat_tui.protocol.not_in_this_build", "StreamableHttpLink"))
    with pytest.raises(RemoteError, match="Streamable HTTP is not available"):
        make_link(Endpoint("http://h/acp"))


def test_rat_connect_takes_headers_and_a_token_variable_never_a_token(tmp_path: Path) -> None:
    args = parse_args(["connect", "wss://box:9/acp", "--header", "X-Team: core", "--token-env", "BOX_TOKEN",
                       "--cwd", "/srv/work", "--insecure", "--protocol", "2"])
    spec, _ = resolve_agent(args, Config())
    assert spec.protocol == 2 and spec.name == "box" and spec.argv == ["wss://box:9/acp"]
    assert spec.remote == RemoteSpec(url="wss://box:9/acp", headers=(("X-Team", "core"),), token_env="BOX_TOKEN",
                                     cwd="/srv/work", insecure=True)
    from rat_tui.agents.spec import spec_label

    assert spec_label(spec) == "box  —  wss://box:9/acp  · ACP v2"
    assert "core" not in repr(spec)  # a header's value may be a secret
    with pytest.raises(SystemExit):
        parse_args(["connect", "wss://box/acp", "--header", "no colon"])
    with pytest.raises(SystemExit):
        parse_args(["connect", "file:///etc/passwd"])


def test_a_profile_with_a_url_is_a_remote_agent(tmp_path: Path) -> None:
    from rat_tui.config import load_config

    path = tmp_path / "config.toml"
    path.write_text('[agents.box]\nurl = "ws://box:8080/acp/ws"\ntoken_env = "BOX_TOKEN"\ncwd = "/srv"\n'
                    'headers = { "X-Team" = "core" }\nshared_cwd = true\n')
    config, problems = load_config(path)
    assert problems == []
    spec, _ = resolve_agent(parse_args(["--agent", "box"]), config)
    assert spec.remote == RemoteSpec(url="ws://box:8080/acp/ws", headers=(("X-Team", "core"),), token_env="BOX_TOKEN",
                                     cwd="/srv", shared_cwd=True)


@pytest.mark.slow
async def test_the_tab_says_the_host_and_files_come_from_reported_diffs(tmp_path: Path, token: str) -> None:
    """The agent's directory has the name of a local one, with a file of the same name: the preview, the
    review and revert work from the diff the agent reported, and the local file is never read or written."""
    from rat_tui.app import RatApp
    from rat_tui.session.change_tracker import RevertError

    from .helpers.app import labels, until, view

    local = tmp_path / "notes.txt"
    local.write_text("LOCAL FILE, NOT THE AGENT'S\n")
    diff = {"type": "diff", "path": str(local), "oldText": "old line\n", "newText": "new line from the agent\n"}
    edit = {"toolCallId": "e1", "title": "Edit notes.txt", "kind": "edit", "locations": [{"path": str(local)}]}
    script = {"turns": [[{"update": {"sessionUpdate": "tool_call", **edit, "status": "in_progress"}},
                         {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "completed",
                                     "content": [diff]}}, {"chunk": "edited"}]]}
    (tmp_path / "agent").mkdir()
    with AcpRemote(scripted_argv(script, tmp_path / "agent"), tmp_path, token) as server:
        spec = remote_spec("box", RemoteSpec(url=server.url, token_env=TOKEN_ENV))
        app = RatApp(spec, tmp_path)
        async with app.run_test(size=(120, 30)) as pilot:
            tab = view(app)
            await until(pilot, lambda: tab.session.state.status == "ready", "ready")
            host = f"127.0.0.1:{server.port}"
            await until(pilot, lambda: any(f"box@{host}" in label for label in labels(app)), "the tab's host")
            assert f"@ {host}" in str(tab.status_bar.render())
            await pilot.press(*"edit it", "enter")
            await until(pilot, lambda: tab.session.state.turns == 1 and tab.session.state.status == "ready", "turn")
            tab.action_open_location()
            await until(pilot, lambda: "new line from the agent" in tab.preview.shown_text, "the reported text")
            tracker = tab.session.changes
            [change] = tracker.turns[-1].files
            assert (change.original, change.current) == ("old line\n", "new line from the agent\n")
            with pytest.raises(RevertError, match=host):
                tracker.revert_file(1, change.path)
    assert local.read_text() == "LOCAL FILE, NOT THE AGENT'S\n"


@pytest.mark.slow
def test_the_token_is_in_no_file_rat_writes_nor_its_argv(tmp_path: Path, token: str) -> None:
    rpc_log = tmp_path / "rpc.jsonl"
    with AcpRemote([sys.executable, "-m", "rat_tui.demo"], tmp_path, token) as server:
        env = {**os.environ, "TERM": "xterm-256color", "TMUX_TMPDIR": str(tmp_path)}
        env.pop("TMUX", None)
        tmux = Tmux(env)
        tmux.start([sys.executable, "-m", "rat_tui", "connect", server.url, "--token-env", TOKEN_ENV,
                    "--rpc-log", str(rpc_log)], tmp_path)
        try:
            tmux.wait_for("ready")
            argvs = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in os.listdir("/proc") if pid.isdigit()
                     and _readable(f"/proc/{pid}/cmdline")]
            ours = [a for a in argvs if server.url.encode() in a and b"rat_tui" in a]
            assert ours and not any(token.encode() in a for a in argvs)
            tmux.keys("-l", "hello")
            tmux.keys("Enter")
            tmux.wait_for("You asked")
            tmux.keys("C-q")
            wait_until(lambda: not tmux.alive(), "rat to quit")
        finally:
            tmux.kill()
    assert rpc_log.exists()
    written = [p for root in (tmp_path, *(Path(os.environ[v]) for v in ("XDG_DATA_HOME", "XDG_STATE_HOME",
                                                                         "XDG_CONFIG_HOME", "XDG_CACHE_HOME")))
               for p in root.rglob("*") if p.is_file()]
    assert any(p.name.startswith("history") for p in written) and any(p.name == "rat.log" for p in written)
    assert [p for p in written if token.encode() in p.read_bytes()] == []


def _readable(path: str) -> bool:
    try:
        Path(path).read_bytes()
        return True
    except OSError:
        return False


def test_a_remote_profile_is_offered_by_the_agents_picker(tmp_path: Path) -> None:
    from rat_tui.agents.catalog import INSTALLED, check, load_catalog, spec_for
    from rat_tui.config import load_config

    path = tmp_path / "config.toml"
    path.write_text('[agents.box]\nurl = "wss://box:8443/acp"\ntitle = "Build box"\n')
    config, _ = load_config(path)
    agent = load_catalog(config, user_dir=tmp_path / "none").find("box")
    availability = check(agent)
    assert availability.status == INSTALLED and availability.launch.command_line == "wss://box:8443/acp"
    assert spec_for(agent, availability).remote.url == "wss://box:8443/acp"


@pytest.mark.slow
async def test_a_message_over_the_servers_limit_is_refused_and_the_link_stays(tmp_path: Path, token: str) -> None:
    record = tmp_path / "record.jsonl"
    script = {"turns": [[{"chunk": "small one answered"}]]}
    with AcpRemote(scripted_argv(script, tmp_path), tmp_path, token, {"RAT_FAKE_RECORD": str(record)}) as server:
        session, task = await connect(server.url, tmp_path)
        assert session.process.link.max_message_bytes == 1024 * 1024  # acpremote's metadata says its limit
        session.start_prompt("x" * (1536 * 1024))
        await wait_for(lambda: session.state.stop_reason == "failed", what="the refused prompt's end")
        assert "over 127.0.0.1" in notices(session) and "limit of 1024 KiB" in notices(session)
        assert "cut by the network" not in notices(session) and sent(record, "session/prompt") == []
        session.start_prompt("small")
        await wait_for(lambda: "small one answered" in agent_text(session), what="the next prompt's answer")
        assert len(sent(record, "session/prompt")) == 1
        await finish(session, task)


async def test_a_busy_server_says_503(tmp_path: Path, token: str) -> None:
    from websockets.asyncio.server import serve
    from websockets.datastructures import Headers
    from websockets.http11 import Response

    def busy(connection, request):
        return Response(503, "Service Unavailable", Headers({"Content-Length": "0"}), b"")

    async with serve(lambda ws: None, "127.0.0.1", 0, process_request=busy) as server:
        port = server.sockets[0].getsockname()[1]
        session, task = await connect(f"ws://127.0.0.1:{port}/acp", tmp_path)
        assert session.state.status == "error"
        assert "busy (503" in session.state.status_detail and f"127.0.0.1:{port}" in session.state.status_detail
        await finish(session, task)


@pytest.mark.slow
@pytest.mark.parametrize("native", [True, False])
async def test_rat_tuis_own_tools_reach_a_remote_agent_over_acp_only(tmp_path: Path, token: str, native: bool) -> None:
    from rat_tui.client_tools.settings import ClientToolsSettings

    record = tmp_path / "record.jsonl"
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "scripted", "version": "1"}}}
    listing = [initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"},
               {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    script = {"initialize_result": {"agentCapabilities": {"mcpCapabilities": {"acp": native}}},
              "turns": [[{"mcp_acp": {"server": "rat-tui", "conn": "a", "messages": listing}}] if native else []]}
    with AcpRemote(scripted_argv(script, tmp_path), tmp_path, token, {"RAT_FAKE_RECORD": str(record)}) as server:
        session, task = await connect(server.url, tmp_path, client_tools=ClientToolsSettings())
        servers = sent(record, "session/new")[0]["params"]["mcpServers"]
        # MCP over ACP rides the same connection; the stdio bridge's shim is a local program the agent cannot run.
        assert [s.get("type") for s in servers if s.get("name") == "rat-tui"] == (["acp"] if native else [])
        if native:
            session.start_prompt("list your tools")
            await wait_for(lambda: session.state.turns == 1 and session.state.status == "ready", what="the turn")
            answers = [json.loads(line)["message"] for line in Path(f"{record}.mcp").read_text().splitlines()]
            tools = [t["name"] for a in answers if a.get("id") == 2 for t in a["result"]["tools"]]
            assert "ask_user" in tools
        await finish(session, task)


async def test_a_session_streams_over_streamable_http_under_the_same_router(tmp_path: Path, token: str) -> None:
    from .helpers.acp_http_server import AcpHttpServer

    async with AcpHttpServer(token=token) as server:
        session, task = await connect(server.url, tmp_path)
        assert session.state.status == "ready", session.state.status_detail
        assert session.state.host == f"127.0.0.1:{server.port}"
        session.start_prompt("three chunks")
        await wait_for(lambda: session.state.turns == 1 and session.state.status == "ready", what="the turn")
        assert agent_text(session) == "chunk 0 chunk 1 chunk 2 "
        assert all(h.get("authorization") == f"Bearer {token}" for h in server.seen_headers)
        await finish(session, task)


@pytest.mark.slow
async def test_history_continues_a_remote_session_with_no_profile_for_its_url(
        tmp_path: Path, token: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """History's `c` reconnects from the journaled endpoint (no profile, another agent started): the token read
    again from its variable (a clear message when unset), the non-secret header kept, the secret one named."""
    from rat_tui.app import RatApp
    from rat_tui.history.journal import default_path

    from .helpers.app import scripted_named, until
    from .helpers.history import prompt

    script = {"initialize_result": {"agentCapabilities": {"loadSession": True}}, "turns": [[{"chunk": "first answer"}]],
              "on_request": {"session/load": [[replayed("user_message_chunk", "hello remote"),
                                               replayed("agent_message_chunk", "first answer")]]}}
    record = tmp_path / "record.jsonl"
    headers = (("X-Team", "blue"), ("X-Api-Key", "key-5d2e-never-written"))
    with AcpRemote(scripted_argv(script, tmp_path), tmp_path, token, {"RAT_FAKE_RECORD": str(record)}) as server:
        spec = remote_spec("remote", RemoteSpec(url=server.url, headers=headers, token_env=TOKEN_ENV))
        app = RatApp(spec, tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            await until(pilot, lambda: app.tabs.active_view.session.state.status == "ready", "connected")
            await prompt(pilot, app, "hello remote", "first answer")
        saved = b"".join(p.read_bytes() for p in default_path().parent.glob("history.sqlite3*"))
        assert b"blue" in saved and TOKEN.encode() not in saved and b"key-5d2e" not in saved

        local = scripted_named({}, tmp_path, "local")  # rat started on another agent: nothing names the URL
        monkeypatch.delenv(TOKEN_ENV)
        app = RatApp(local, tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            view = await continue_from_history(pilot, app, "hello remote")
            await until(pilot, lambda: view.session.state.status == "error", "the refusal")
            assert f"The environment variable {TOKEN_ENV}" in view.session.state.status_detail
            assert "is not set" in notices(view.session)
        assert sent(record, "session/load") == []

        monkeypatch.setenv(TOKEN_ENV, TOKEN)
        app = RatApp(local, tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            view = await continue_from_history(pilot, app, "hello remote")
            assert "without the header(s) X-Api-Key" in "\n".join(n.message for n in app._notifications)
            await until(pilot, lambda: view.session.state.status == "ready", "the reconnection")
            await until(pilot, lambda: "first answer" in view.transcript.plain_text, "the load's replay")
            assert view.session.remote_host == f"127.0.0.1:{server.port}"
    assert [m["params"]["sessionId"] for m in sent(record, "session/load")] == ["sess-1"]


@pytest.mark.slow
async def test_a_forbidden_token_is_said_at_connect_and_mid_session(tmp_path: Path, token: str) -> None:
    """403 from a Streamable HTTP server: at connect, a clear error and no reconnection loop; on a prompt of a
    session already open, the prompt is not retried and its turn ends (not waiting forever), saying why."""
    from .helpers.acp_http_server import AcpHttpServer

    async with AcpHttpServer(token=token) as server:
        server.forbidden = True
        session, task = await connect(server.url, tmp_path)
        assert session.state.status == "error"
        assert session.state.status_detail == (f"127.0.0.1:{server.port} refused the connection: forbidden "
                                               "(403: this token may not use this agent).")
        await finish(session, task)
        assert len(server.seen_headers) == 1  # asked once: a refusal is not retried

        server.forbidden = False
        session, task = await connect(server.url, tmp_path)
        assert session.state.status == "ready", session.state.status_detail
        # The session's event stream opens just after session/new: refused, it would be a dropped link instead.
        await wait_for(lambda: any(h.get("acp-session-id") and "text/event-stream" in h.get("accept", "")
                                   for h in server.seen_headers), what="the session's event stream")
        server.forbidden = True
        asked = len(server.seen_headers)
        session.start_prompt("three chunks")
        await wait_for(lambda: session.state.stop_reason is not None, what="the turn's end")
        assert session.state.stop_reason == "error" and session.state.status != "working"
        refusal = f"127.0.0.1:{server.port} refused the message: forbidden (403: this token may not use this agent)."
        assert notices(session).count(refusal) == 1 and "The server refused this turn: " + refusal in notices(session)
        assert len(server.seen_headers) == asked + 1  # the prompt, once
        await finish(session, task)
