"""AgentSession and the JSON-RPC layer against scripted fake agents, as real subprocesses over pipes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.session.agent_session import AgentSession
from rat_tui.protocol.router import Connection, RpcError
from rat_tui.protocol.transport import AgentProcess
from rat_tui.state.models import GenericEntry, MessageEntry, NoticeEntry

from .helpers.acp_schema import validate_message
from .helpers.agents import received, scripted_argv
from .helpers.harness import finish, start_session, wait_for

pytestmark = pytest.mark.slow


def assert_client_messages_valid(record: Path, agent_requests: dict | None = None) -> list[dict]:
    """Every line rat-tui sent validates against the schema $defs for its method."""
    messages = received(record)
    assert messages, "the agent received nothing"
    for message in messages:
        validate_message(message, "client", agent_requests or {})
    return messages


start = start_session


def texts(session: AgentSession, role: str = "agent") -> list[str]:
    return [e.text for e in session.state.entries if isinstance(e, MessageEntry) and e.role == role]


def notices(session: AgentSession) -> list[str]:
    return [e.text for e in session.state.entries if isinstance(e, NoticeEntry)]


async def test_full_turn_and_wire_messages_validate(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [[{"chunk": "Hello ", "repeat": 3}, {"update": {"sessionUpdate": "plan", "entries": [
        {"content": "step", "priority": "high", "status": "pending"}]}}]]}
    session, task = await start(script, tmp_path)
    assert session.state.status == "ready"
    await session.start_prompt("hi there")
    assert texts(session) == ["Hello Hello Hello "]
    assert texts(session, "user") == ["hi there"]
    assert session.state.status == "ready" and session.state.plan[0].content == "step"
    await finish(session, task)
    messages = assert_client_messages_valid(record_file)
    methods = [m.get("method") for m in messages]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    assert messages[0]["params"]["protocolVersion"] == 1
    assert messages[1]["params"]["cwd"] == str(tmp_path)
    assert messages[2]["params"]["prompt"] == [{"type": "text", "text": "hi there"}]


async def test_cancel_mid_stream_is_a_normal_state(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [[{"chunk": "partial "}, {"wait_cancel": True}, {"chunk": "late update "}]]}
    session, task = await start(script, tmp_path)
    turn = session.start_prompt("go")
    await wait_for(lambda: texts(session) == ["partial "], what="first chunk")
    assert await session.cancel()
    await asyncio.wait_for(turn, 10)
    assert session.state.status == "cancelled"
    assert "Turn cancelled." in notices(session)
    assert texts(session) == ["partial late update "]  # updates after cancel still apply
    await finish(session, task)
    methods = [m.get("method") for m in assert_client_messages_valid(record_file)]
    assert "session/cancel" in methods


async def test_agent_crash_mid_turn_keeps_transcript(tmp_path: Path) -> None:
    script = {"turns": [[{"chunk": "before crash"}, {"stderr": "fatal: boom"}, {"exit": 3}]]}
    session, task = await start(script, tmp_path)
    turn = session.start_prompt("go")
    await asyncio.wait_for(task, 10)
    await asyncio.wait_for(turn, 10)
    assert session.state.status == "exited"
    assert texts(session) == ["before crash"]
    [notice] = notices(session)
    assert "exited with code 3" in notice and "fatal: boom" in notice
    assert session.start_prompt("again") is None  # refused with a notice, no exception
    assert "The agent has exited: Alt+R restarts it." in notices(session)


async def test_garbage_and_malformed_json_are_skipped(tmp_path: Path) -> None:
    script = {"turns": [[
        {"raw": "this is not json"},
        {"raw": '{"jsonrpc": "2.0", "method": "session/update", "params": '},
        {"raw": "[1, 2, 3]"},
        {"raw": '{"jsonrpc": "2.0"}'},
        {"chunk": "still alive"},
    ]]}
    session, task = await start(script, tmp_path)
    await session.start_prompt("go")
    assert texts(session) == ["still alive"] and session.state.status == "ready"
    assert session.connection is not None and session.connection.malformed_lines == 4
    await finish(session, task)


async def test_single_10_mb_message(tmp_path: Path) -> None:
    size = 10 * 1024 * 1024
    session, task = await start({"turns": [[{"big_chunk": size}, {"chunk": "tail"}]]}, tmp_path)
    await session.start_prompt("go")
    [text] = texts(session)
    assert len(text) == size + len("tail") and text.endswith("tail")
    await finish(session, task)


async def test_megabyte_of_stderr_before_initialize_does_not_hang(tmp_path: Path) -> None:
    line = "x" * 1023
    script = {"before_initialize": [{"stderr": line, "repeat": 1100}]}
    session, task = await start(script, tmp_path)
    assert session.state.status == "ready"
    assert session.process is not None and session.process.stderr.total_bytes >= 1024 * 1100
    await finish(session, task)


async def test_unknown_update_variant_is_kept(tmp_path: Path) -> None:
    script = {"turns": [[{"update": {"sessionUpdate": "hologram", "beam": [1, 2]}}, {"chunk": "ok"}]]}
    session, task = await start(script, tmp_path)
    await session.start_prompt("go")
    [generic] = [e for e in session.state.entries if isinstance(e, GenericEntry)]
    assert generic.kind == "hologram" and generic.raw["beam"] == [1, 2]
    assert texts(session) == ["ok"]
    await finish(session, task)


async def test_updates_before_session_new_response_are_applied(tmp_path: Path) -> None:
    script = {"on_new_session": [
        {"update": {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "init", "description": "Init"}]}},
        {"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "welcome"}}},
    ]}
    session, task = await start(script, tmp_path)
    assert session.state.commands[0]["name"] == "init"
    assert texts(session) == ["welcome"]
    await finish(session, task)


async def test_unknown_agent_request_gets_method_not_found(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [[
        {"request": {"method": "x/unknown", "params": {}}},
        {"send": {"jsonrpc": "2.0", "id": 0, "method": "editor/open_buffer",
                  "params": {"sessionId": "$SESSION", "path": "/etc/hostname"}}},
        {"sleep": 0.3},
    ]]}
    session, task = await start(script, tmp_path)
    await session.start_prompt("go")
    await finish(session, task)
    answers = [m for m in received(record_file) if "error" in m]
    assert {a["error"]["code"] for a in answers} == {-32601}
    assert 0 in {a["id"] for a in answers}  # id 0 is a valid id and is echoed unchanged


async def test_protocol_version_mismatch_is_a_clear_error(tmp_path: Path) -> None:
    script = {"initialize_result": {"protocolVersion": 7, "agentCapabilities": {}}}
    session, task = await start(script, tmp_path)
    assert session.state.status == "error"
    assert any("protocol version 7" in n for n in notices(session))
    await finish(session, task)


async def test_missing_command_is_reported_not_raised(tmp_path: Path) -> None:
    command = SimpleNamespace(name="nope", argv=["definitely-not-an-agent-xyz"], env={})
    session = AgentSession(command, tmp_path)
    await session.run()
    assert session.state.status == "error"
    assert any("not found" in n for n in notices(session))


async def test_agent_cancel_request_cancels_our_handler(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [], "before_initialize": [
        {"send": {"jsonrpc": "2.0", "id": "req-7", "method": "slow/op", "params": {}}},
        {"sleep": 0.2},
        {"send": {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "req-7"}}},
        {"sleep": 0.3},
    ]}
    started = asyncio.Event()

    async def slow(params: dict) -> dict:
        started.set()
        await asyncio.sleep(60)
        return {}

    process = AgentProcess(scripted_argv(script, tmp_path), tmp_path)
    await process.start()
    connection = Connection(process, lambda method, params: None, handlers={"slow/op": slow})
    reader = asyncio.create_task(connection.run())
    hello = asyncio.create_task(connection.request("initialize", {"protocolVersion": 1}))
    await asyncio.wait_for(started.wait(), 10)
    await wait_for(lambda: any(m.get("id") == "req-7" for m in received(record_file)), what="cancel answer")
    [answer] = [m for m in received(record_file) if m.get("id") == "req-7"]
    assert answer["error"]["code"] == -32800
    assert (await asyncio.wait_for(hello, 10))["protocolVersion"] == 1
    await process.close()
    await asyncio.wait_for(reader, 10)


async def test_request_error_from_agent_is_raised_as_rpc_error(tmp_path: Path) -> None:
    process = AgentProcess([sys.executable, "-c", "import sys,json\nfor l in sys.stdin:\n m=json.loads(l)\n print(json.dumps({'jsonrpc':'2.0','id':m['id'],'error':{'code':-32603,'message':'Internal error','data':{'details':'bad'}}}), flush=True)"], tmp_path)
    await process.start()
    connection = Connection(process, lambda method, params: None)
    reader = asyncio.create_task(connection.run())
    with pytest.raises(RpcError) as caught:
        await connection.request("session/load", {"sessionId": "x"})
    assert caught.value.code == -32603 and "bad" in str(caught.value)
    await process.close()
    await asyncio.wait_for(reader, 10)


async def test_ready_is_delivered_to_the_widgets_as_the_handshake_ends(tmp_path: Path) -> None:
    """`ready` reaches the store's subscribers at once, not a frame later: at launch a fast agent's
    handshake ends while the first frame is being laid out, and delivered then the first frame says
    `ready` (bench/stress.py startup: ready 45 ms sooner, with the first frame)."""
    command = SimpleNamespace(name="fake", argv=scripted_argv({}, tmp_path), env={})
    session = AgentSession(command, tmp_path)
    delivered: list[str] = []
    session.store.subscribe(lambda _batch: delivered.append(session.state.status))
    task = asyncio.create_task(session.run())
    deadline = asyncio.get_running_loop().time() + 20
    while session.state.status != "ready":  # a turn of the loop at a time: the state is ready from here
        assert session.state.status == "starting" and asyncio.get_running_loop().time() < deadline, \
            session.state.status
        await asyncio.sleep(0)
    assert delivered and delivered[-1] == "ready"  # ...and its subscribers heard it in the same turn
    await finish(session, task)
