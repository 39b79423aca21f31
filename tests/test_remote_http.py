"""The Streamable HTTP link (rat_tui/protocol/remote_http.py) driven with raw JSON-RPC: against Qwen Code's own
daemon (`qwen serve`, installed from npm by tests/helpers/qwen.py, its model the stub of
tests/helpers/openai_stub.py) for a real turn, a permission, a cancel, bearer auth, a crash and a dropped stream;
against the small server of tests/helpers/acp_http_server.py for HTTP/2, TLS, replies in a POST's body and the
server's limits. Everything over real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from pathlib import Path
from typing import Any, Callable

import pytest

from rat_tui.protocol.remote_http import StreamableHttpLink
from rat_tui.protocol.remote_link import Endpoint, RemoteError
from tests.helpers.acp_http_server import AcpHttpServer
from tests.helpers.openai_stub import OpenAIStub
from tests.helpers.qwen import QwenServe, qwen_entry

pytestmark = pytest.mark.slow
TOKEN = "tok-8a41c7d2e9f0b3"  # distinctive, so its absence from the logs means something


class Driver:
    """A bare ACP client on one link: requests by id, the agent's requests answered by a callback, every message
    received kept in `seen`."""

    def __init__(self, link: StreamableHttpLink, answer: Callable[[dict], dict] | None = None) -> None:
        self.link, self.answer = link, answer
        self.seen: list[dict] = []
        self._id = 0

    async def start(self, method: str, params: dict) -> int:
        self._id += 1
        await self.link.send(json.dumps({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params}).encode())
        return self._id

    async def notify(self, method: str, params: dict) -> None:
        await self.link.send(json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode())

    async def until(self, done: Callable[[dict], bool], timeout: float = 60.0) -> dict:
        """Read (answering the agent's requests) until a message `done` accepts."""
        async with asyncio.timeout(timeout):
            while True:
                data = await self.link.receive()
                assert data is not None, "the link closed"
                message = json.loads(data)
                self.seen.append(message)
                if done(message):
                    return message
                if "method" in message and "id" in message:
                    result = self.answer(message) if self.answer else None
                    reply = {"result": result} if result is not None else {
                        "error": {"code": -32601, "message": "not handled"}}
                    await self.link.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}).encode())

    async def call(self, method: str, params: dict, timeout: float = 60.0) -> dict:
        rid = await self.start(method, params)
        reply = await self.until(lambda m: m.get("id") == rid and "method" not in m, timeout)
        assert "error" not in reply, reply
        return reply["result"]

    def text(self) -> str:
        return "".join(m["params"]["update"]["content"].get("text", "") for m in self.seen
                       if m.get("method") == "session/update"
                       and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk")


def allow(request: dict) -> dict | None:
    if request["method"] != "session/request_permission":
        return None
    option = next(o for o in request["params"]["options"] if o["kind"].startswith("allow"))
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


INIT = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False},
                                                     "terminal": False},
        "clientInfo": {"name": "rat-tui-test", "version": "0"}}


async def connect(url: str, token: str | None = TOKEN, *, answer: Callable | None = allow,
                  insecure: bool = False, headers: tuple = ()) -> Driver:
    link = StreamableHttpLink(Endpoint(url, headers=headers, token=token, insecure=insecure))
    await link.open()
    return Driver(link, answer)


# -- Qwen Code's daemon --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub() as server:
        yield server


@pytest.fixture(scope="module")
def entry():
    path, why = qwen_entry()
    if path is None:
        pytest.skip(why)
    return path


def serve(entry: Path, stub: OpenAIStub, root: Path, **options: Any) -> QwenServe:
    (root / "ws").mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    daemon = QwenServe(entry, root / "ws", root / "home", stub.url, **options)
    daemon.start()
    return daemon


@pytest.fixture(scope="module")
def qwen(entry, stub, tmp_path_factory):
    daemon = serve(entry, stub, tmp_path_factory.mktemp("qwen"), token=TOKEN)
    yield daemon
    daemon.kill()


async def new_session(driver: Driver, workspace: Path, version: int = 1) -> str:
    init = await driver.call("initialize", {**INIT, "protocolVersion": version})
    assert init["protocolVersion"] == 1  # qwen serve 0.24 speaks v1 only: a v2 client is answered in v1
    return (await driver.call("session/new", {"cwd": str(workspace), "mcpServers": []}))["sessionId"]


async def test_turn_streams_over_qwen(qwen, caplog):
    caplog.set_level(logging.DEBUG)
    driver = await connect(qwen.url)
    try:
        session = await new_session(driver, qwen.workspace)
        result = await driver.call("session/prompt", {"sessionId": session,
                                                      "prompt": [{"type": "text", "text": "STUB:text say=r1"}]})
        assert result["stopReason"] == "end_turn"
        assert "(text-ok-r1)" in driver.text()
        assert driver.link.http_version == "HTTP/1.1"
    finally:
        await driver.link.close()
    assert TOKEN not in caplog.text
    assert "Bearer" not in caplog.text


async def test_permission_answered_writes_the_file(qwen):
    target = qwen.workspace / "perm-out.txt"
    driver = await connect(qwen.url)
    try:
        session = await new_session(driver, qwen.workspace, version=2)
        result = await driver.call("session/prompt", {"sessionId": session,
                                                      "prompt": [{"type": "text", "text": f"STUB:write file={target}"}]})
        asked = [m for m in driver.seen if m.get("method") == "session/request_permission"]
        assert asked and asked[0]["params"]["sessionId"] == session
        assert result["stopReason"] == "end_turn"
        assert target.read_text() == "written by the stub model\n"
    finally:
        await driver.link.close()


async def test_cancel_ends_the_turn(qwen):
    driver = await connect(qwen.url)
    try:
        session = await new_session(driver, qwen.workspace)
        rid = await driver.start("session/prompt", {"sessionId": session,
                                                    "prompt": [{"type": "text", "text": "STUB:slow n=60 delay=0.1"}]})
        await driver.until(lambda m: m.get("method") == "session/update"
                           and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk")
        await driver.notify("session/cancel", {"sessionId": session})
        reply = await driver.until(lambda m: m.get("id") == rid)
        assert reply["result"]["stopReason"] == "cancelled"
    finally:
        await driver.link.close()


@pytest.mark.parametrize("token", [None, "wrong-token"])
async def test_qwen_refuses_a_missing_or_wrong_token(qwen, token, caplog):
    link = StreamableHttpLink(Endpoint(qwen.url, token=token))
    with pytest.raises(RemoteError) as refused:
        await link.open()
    assert refused.value.status == 401 and refused.value.retry is False
    assert "127.0.0.1" in str(refused.value) and "not authorized" in str(refused.value)
    if token:
        assert token not in str(refused.value) and token not in caplog.text
    await link.close()


async def test_qwen_killed_mid_turn_then_restarted(entry, stub, tmp_path):
    daemon = serve(entry, stub, tmp_path)
    driver = await connect(daemon.url, token=None)
    try:
        session = await new_session(driver, daemon.workspace)
        await driver.start("session/prompt", {"sessionId": session,
                                              "prompt": [{"type": "text", "text": "STUB:slow n=80 delay=0.1"}]})
        await driver.until(lambda m: m.get("method") == "session/update"
                           and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk")
        daemon.kill()
        with pytest.raises(RemoteError) as dropped:
            await driver.until(lambda m: False, timeout=20)
        assert dropped.value.retry is True and "127.0.0.1" in str(dropped.value)
        with pytest.raises(RemoteError) as down:
            await driver.link.reopen()
        assert down.value.retry is True and "refused" in str(down.value)
        daemon.start()
        assert await driver.link.reopen() is False  # a new daemon: the connection is gone, ACP starts again
        session = await new_session(driver, daemon.workspace)
        result = await driver.call("session/prompt", {"sessionId": session,
                                                      "prompt": [{"type": "text", "text": "STUB:text say=back"}]})
        assert result["stopReason"] == "end_turn" and "(text-ok-back)" in driver.text()
    finally:
        await driver.link.close()
        daemon.kill()


class Proxy:
    """A TCP relay in front of a server, whose `cut()` drops every connection through it at once (a network
    that fails, while the server lives on)."""

    def __init__(self, port: int) -> None:
        self.target, self.port = port, 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Proxy:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cut()
        assert self._server is not None
        self._server.close()

    def cut(self) -> None:
        for writer in self._writers:
            writer.transport.abort()
        self._writers.clear()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except OSError:
                pass
            finally:
                dst.transport.abort()

        with contextlib.suppress(asyncio.CancelledError):  # the loop's end cancels a relay still open
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def test_dropped_stream_resumes_with_last_event_id(qwen, stub):
    """The network fails mid-turn while qwen lives on, and stays down until the model has said everything:
    reopen() reattaches the same connection, the session's stream replays what came after its Last-Event-ID,
    and the answer arrives whole, each chunk once."""
    async with Proxy(qwen.port) as proxy:
        # qwen checks the Host header (against DNS rebinding): the relay is transparent to it
        driver = await connect(f"http://127.0.0.1:{proxy.port}/acp", headers=(("Host", f"127.0.0.1:{qwen.port}"),))
        try:
            session = await new_session(driver, qwen.workspace)
            rid = await driver.start("session/prompt", {
                "sessionId": session, "prompt": [{"type": "text", "text": "STUB:slow n=40 delay=0.05"}]})
            await driver.until(lambda m: "slow chunk 3." in driver.text())
            proxy.cut()
            with pytest.raises(RemoteError) as dropped:
                await driver.until(lambda m: False, timeout=20)
            assert dropped.value.retry is True
            async with asyncio.timeout(20):  # the rest of the turn happens while the link is down
                while not any(r["done"] and r["answer"].get("chunks") == 40 for r in stub.requests):
                    await asyncio.sleep(0.05)
            assert await driver.link.reopen() is True
            reply = await driver.until(lambda m: m.get("id") == rid)
            assert reply["result"]["stopReason"] == "end_turn"
            assert driver.text() == "".join(f"slow chunk {i}. " for i in range(40))
        finally:
            await driver.link.close()


# -- the small server: HTTP/2, TLS, replies in a POST's body, limits -----------------------------------------


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    folder = tmp_path_factory.mktemp("certs")
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    cert.private_key_pem.write_to_path(str(folder / "key.pem"))
    chain = folder / "cert.pem"
    chain.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    return folder


async def flood_turn(driver: Driver, chunks: int) -> None:
    await driver.call("initialize", INIT)
    session = (await driver.call("session/new", {"cwd": "/remote", "mcpServers": []}))["sessionId"]
    result = await driver.call("session/prompt", {"sessionId": session, "flood": chunks,
                                                  "prompt": [{"type": "text", "text": "go"}]})
    assert result["stopReason"] == "end_turn"
    assert driver.text() == "".join(f"chunk {i} " for i in range(chunks))


async def test_http2_over_verified_tls_keeps_order_and_the_token_out_of_logs(certs, monkeypatch, caplog):
    monkeypatch.setenv("SSL_CERT_FILE", str(certs / "ca.pem"))  # the test CA, trusted as the user's own would be
    caplog.set_level(logging.DEBUG)
    async with AcpHttpServer(token=TOKEN, tls=(certs / "cert.pem", certs / "key.pem")) as server:
        driver = await connect(server.url)
        await flood_turn(driver, 200)
        assert driver.link.http_version == "HTTP/2"
        await driver.link.close()
    prompt_post = next(h for h in server.seen_headers if h.get("acp-session-id") == "s1")
    assert prompt_post["authorization"] == f"Bearer {TOKEN}" and prompt_post["acp-connection-id"]
    assert server.deleted and server.deleted[0] == prompt_post["acp-connection-id"]
    assert TOKEN not in caplog.text


async def test_untrusted_certificate_refused_unless_insecure(certs):
    async with AcpHttpServer(tls=(certs / "cert.pem", certs / "key.pem")) as server:
        link = StreamableHttpLink(Endpoint(server.url))
        with pytest.raises(RemoteError) as refused:
            await link.open()
        assert refused.value.retry is False
        assert "127.0.0.1" in str(refused.value) and "certificate" in str(refused.value)
        await link.close()
        driver = await connect(server.url, token=None, insecure=True)
        await flood_turn(driver, 5)
        await driver.link.close()


async def test_prompt_answered_in_the_posts_own_stream():
    async with AcpHttpServer(reply_in_body=True) as server:
        driver = await connect(server.url, token=None)
        await flood_turn(driver, 50)
        await driver.link.close()
        assert await driver.link.receive() is None
        assert await driver.link.receive() is None  # closed stays closed


async def test_server_limits_are_clear_errors():
    async with AcpHttpServer(max_sessions=1, max_body=4000) as server:
        driver = await connect(server.url, token=None)
        await driver.call("initialize", INIT)
        session = (await driver.call("session/new", {"cwd": "/r", "mcpServers": []}))["sessionId"]
        with pytest.raises(RemoteError) as busy:
            await driver.start("session/new", {"cwd": "/r", "mcpServers": []})
        assert busy.value.status == 503 and busy.value.retry is True and "too many sessions" in str(busy.value)
        with pytest.raises(RemoteError) as large:
            await driver.start("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "x" * 5000}]})
        assert large.value.status == 413 and large.value.retry is False and "too large" in str(large.value)
        await driver.link.close()


async def test_metadata_and_its_size_limit_are_read_before_acp():
    metadata = {"remote_cwd": "/srv/project", "max_message_bytes": 1000}
    async with AcpHttpServer(metadata=metadata) as server:
        driver = await connect(server.url, token=None)
        assert driver.link.metadata == metadata and driver.link.max_message_bytes == 1000
        posts = len(server.seen_headers)
        with pytest.raises(RemoteError) as large:
            await driver.start("initialize", {**INIT, "clientInfo": {"name": "x" * 2000, "version": "0"}})
        assert large.value.retry is False and "1000 bytes" in str(large.value)
        assert len(server.seen_headers) == posts  # refused here, never sent
        await driver.link.close()


async def test_nothing_listening_is_a_retryable_refusal():
    from tests.helpers.qwen import free_port

    link = StreamableHttpLink(Endpoint(f"http://127.0.0.1:{free_port()}/acp"))
    with pytest.raises(RemoteError) as refused:
        await link.open()
    assert refused.value.retry is True and "refused" in str(refused.value) and "127.0.0.1" in str(refused.value)
    await link.close()


# -- the app over Streamable HTTP ---------------------------------------------------------------------------


async def test_rat_connect_over_qwen_streams_asks_and_cancels_from_the_keyboard(qwen, monkeypatch, tmp_path):
    """`rat connect URL --token-env VAR --cwd DIR` in the app, keys typed: a streamed turn, a permission allowed with
    `y` (the file written on the daemon's side), a slow turn cancelled with Esc."""
    from rat_tui.app import RatApp
    from rat_tui.cli import parse_args, resolve_agent
    from rat_tui.config import Config
    from rat_tui.state.models import MessageEntry
    from tests.helpers.app import until

    monkeypatch.setenv("RAT_QWEN_TOKEN", TOKEN)
    spec, _ = resolve_agent(parse_args(["connect", qwen.url, "--token-env", "RAT_QWEN_TOKEN",
                                        "--cwd", str(qwen.workspace)]), Config())
    target = qwen.workspace / "app-perm.txt"
    app = RatApp(spec, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.tabs.active_view
        session = view.session
        await until(pilot, lambda: session.state.status == "ready", "connected", timeout=90)
        assert session.state.host == f"127.0.0.1:{qwen.port}" and session.state.cwd == str(qwen.workspace)

        await pilot.press(*"STUB:text say=app1", "enter")
        await until(pilot, lambda: "(text-ok-app1)" in view.transcript.plain_text, "the streamed answer")
        await until(pilot, lambda: session.state.status == "ready", "the turn's end")
        assert session.state.stop_reason == "end_turn"

        await pilot.press(*f"STUB:write file={target}", "enter")
        await until(pilot, lambda: session.permissions.pending == 1, "the permission request")
        await until(pilot, lambda: app.request_gate.showing is not None, "the permission dialog")
        await pilot.press("y")  # allow once
        await until(pilot, lambda: session.state.status == "ready" and session.state.turns == 2, "the written turn")
        assert session.state.stop_reason == "end_turn"
        assert target.read_text() == "written by the stub model\n"

        await pilot.press(*"STUB:slow n=80 delay=0.1", "enter")
        await until(pilot, lambda: "slow chunk 1." in view.transcript.plain_text, "the slow turn streaming")
        await pilot.press("escape")
        await until(pilot, lambda: session.state.stop_reason == "cancelled" and session.state.turns == 3,
                    "the cancelled turn")
        assert "slow chunk 79." not in view.transcript.plain_text
        # The daemon echoes each prompt to the session's clients: shown once all the same.
        users = [e.text for e in session.state.entries if isinstance(e, MessageEntry) and e.role == "user"]
        assert users == ["STUB:text say=app1", f"STUB:write file={target}", "STUB:slow n=80 delay=0.1"]
