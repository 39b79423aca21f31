"""A small ACP server of the RFD's Streamable HTTP profile, for the cases a real daemon does not show on demand:
HTTP/2 (hypercorn over TLS with ALPN), a self-signed certificate, a prompt answered in the POST's own SSE body,
503 on too many sessions, 413 on a message too large, and chunk floods for the benchmark.

`StdioRelay` puts any stdio agent behind the same server instead (one agent process per connection), as
acpremote does over WebSocket: the scripted agents over Streamable HTTP (v1 and v2), and bench/remote_stream.py's
stress agent. `forbidden = True` refuses every request with 403 from then on.

Its own agent is a script: `initialize` (200, JSON, `Acp-Connection-Id`), `session/new` (202, the result on the
connection's stream), `session/prompt` (with `"flood": N` in its params: N
`agent_message_chunk` updates, default 3, on the session's stream, then the result: or all of it in the POST's own SSE body
when the server was made with `reply_in_body`). Runs in the test's event loop (`async with AcpHttpServer(...)`) or
as a process (`python -m tests.helpers.acp_http_server --port P [--flood-in-body]`, for the benchmark)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypercorn.asyncio import serve
from hypercorn.config import Config

from tests.helpers.qwen import free_port


@dataclass
class Connection:
    streams: dict[str | None, asyncio.Queue] = field(default_factory=dict)  # None: the connection's own

    def queue(self, scope: str | None) -> asyncio.Queue:
        return self.streams.setdefault(scope, asyncio.Queue())


def chunk(session: str, text: str) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": session,
                       "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}}}


class AcpHttpServer:
    def __init__(self, *, token: str | None = None, tls: tuple[Path, Path] | None = None, max_sessions: int = 8,
                 max_body: int | None = None, metadata: dict | None = None, reply_in_body: bool = False,
                 port: int | None = None) -> None:
        self.token, self.tls, self.max_sessions, self.max_body = token, tls, max_sessions, max_body
        self.metadata, self.reply_in_body = metadata, reply_in_body
        self.port = port or free_port()
        self.connections: dict[str, Connection] = {}
        self.sessions = 0
        self.deleted: list[str] = []
        self.seen_headers: list[dict[str, str]] = []  # every request's headers (the tests look at them)
        self.forbidden = False  # every request refused with 403 (a token this server no longer accepts)
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/acp"

    async def __aenter__(self) -> AcpHttpServer:
        config = Config()
        config.bind = [f"127.0.0.1:{self.port}"]
        config.accesslog = config.errorlog = None
        config.graceful_timeout = 0.2  # streams a client left are not waited for
        if self.tls:
            config.certfile, config.keyfile = str(self.tls[0]), str(self.tls[1])
        self._task = asyncio.get_running_loop().create_task(serve(self.app, config, shutdown_trigger=self._stop.wait))
        for _ in range(100):  # until it listens
            if self._task.done():
                self._task.result()  # its failure, told as it is
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return self
            except OSError:
                await asyncio.sleep(0.02)
        raise RuntimeError("the test ACP server did not start")

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        for conn in self.connections.values():
            for queue in conn.streams.values():
                queue.put_nowait(None)
        if self._task:
            await asyncio.wait_for(self._task, 5)

    # -- ASGI -------------------------------------------------------------------------------------------------

    async def app(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                kind = (await receive())["type"]
                await send({"type": f"{kind}.complete"})  # lifespan.startup / lifespan.shutdown
                if kind == "lifespan.shutdown":
                    return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.seen_headers.append(headers)
        if self.token and headers.get("authorization") != f"Bearer {self.token}":
            return await respond(send, 401, {"error": "missing or wrong bearer token"})
        if self.forbidden:
            return await respond(send, 403, {"error": "this token may not use this agent"})
        method = scope["method"]
        if method == "GET" and "text/event-stream" not in headers.get("accept", ""):
            return await respond(send, 200 if self.metadata else 406, self.metadata or {"error": "SSE only"})
        conn = self.connections.get(headers.get("acp-connection-id", ""))
        if method == "DELETE":
            self.deleted.append(headers.get("acp-connection-id", ""))
            self.connections.pop(headers.get("acp-connection-id", ""), None)
            return await respond(send, 202, None)
        if method == "GET":
            if conn is None:
                return await respond(send, 404, {"error": "Unknown Acp-Connection-Id"})
            return await self.stream(send, conn.queue(headers.get("acp-session-id")))
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        if self.max_body is not None and len(body) > self.max_body:
            return await respond(send, 413, {"error": f"message larger than {self.max_body} bytes"})
        await self.post(send, json.loads(body), conn)

    async def post(self, send: Any, message: dict, conn: Connection | None) -> None:
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            cid = str(uuid.uuid4())
            self.connections[cid] = Connection()
            result = {"protocolVersion": 1, "agentCapabilities": {"loadSession": False}, "authMethods": []}
            return await respond(send, 200, {"jsonrpc": "2.0", "id": rid, "result": result},
                                 [(b"acp-connection-id", cid.encode())])
        if conn is None:
            return await respond(send, 404, {"error": "Unknown Acp-Connection-Id"})
        if method == "session/new":
            if self.sessions >= self.max_sessions:
                return await respond(send, 503, {"error": "Too many sessions"})
            self.sessions += 1
            session = f"s{self.sessions}"
            await respond(send, 202, None)
            return conn.queue(None).put_nowait({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": session}})
        if method == "session/prompt":
            session = message["params"]["sessionId"]
            n = int(message["params"].get("flood", 3))
            replies = [*(chunk(session, f"chunk {i} ") for i in range(n)),
                       {"jsonrpc": "2.0", "id": rid, "result": {"stopReason": "end_turn"}}]
            if self.reply_in_body:
                return await self.stream(send, None, replies)
            await respond(send, 202, None)
            for reply in replies:
                conn.queue(session).put_nowait(reply)
            return None
        await respond(send, 202, None)

    async def stream(self, send: Any, queue: asyncio.Queue | None, items: list[dict] | None = None) -> None:
        """An SSE stream: of `items` (then its end), or of the queue until None."""
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]})
        if queue is None:
            queue = asyncio.Queue()
            for item in [*(items or []), None]:
                queue.put_nowait(item)
        event_id, done = 0, False
        while not done:
            # what is waiting goes out in one write (a flood is not held back by the server's own overhead)
            batch = [await queue.get()]
            while not queue.empty() and len(batch) < 512:
                batch.append(queue.get_nowait())
            data = bytearray()
            for item in batch:
                if item is None:
                    done = True
                    break
                event_id += 1
                body = item if isinstance(item, bytes) else json.dumps(item).encode()  # (a relayed line as it came)
                data += b"id: %d\ndata: %s\n\n" % (event_id, body)
            if data:
                await send({"type": "http.response.body", "body": bytes(data), "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


class StdioRelay(AcpHttpServer):
    """A stdio agent (`argv`, started per connection) behind the server: each of the client's messages to its
    stdin; each line it writes to an SSE stream: its session's (a notification or request naming it, the answer to
    a request that named it), else the connection's. `initialize` is answered in the POST's own body, with the
    connection's id."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.argv, self.env = argv, env
        self.agents: dict[int, asyncio.subprocess.Process] = {}
        self.asked: dict[object, str | None] = {}  # request id -> the session it named
        self.first: dict[object, asyncio.Future] = {}

    async def __aexit__(self, *exc: object) -> None:
        for agent in self.agents.values():
            if agent.returncode is None:
                agent.kill()
                await agent.wait()
        await super().__aexit__(*exc)

    async def post(self, send: Any, message: dict, conn: Connection | None) -> None:
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if message.get("method") == "initialize":
            cid = str(uuid.uuid4())
            self.connections[cid] = conn = Connection()
            agent = await asyncio.create_subprocess_exec(*self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                         env={**os.environ, **(self.env or {})}, limit=1 << 30)
            self.agents[id(conn)] = agent
            answered = self.first[message.get("id")] = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().create_task(self.pump(agent, conn))
            self.write(agent, message)
            answer = await answered
            return await respond(send, 200, answer, [(b"acp-connection-id", cid.encode())])
        if conn is None:
            return await respond(send, 404, {"error": "Unknown Acp-Connection-Id"})
        if "id" in message and "method" in message:
            self.asked[message["id"]] = params.get("sessionId")
        await respond(send, 202, None)
        self.write(self.agents[id(conn)], message)

    def write(self, agent: asyncio.subprocess.Process, message: dict) -> None:
        assert agent.stdin is not None
        agent.stdin.write(json.dumps(message).encode() + b"\n")

    async def pump(self, agent: asyncio.subprocess.Process, conn: Connection) -> None:
        assert agent.stdout is not None
        while line := await agent.stdout.readline():
            message = json.loads(line)
            waiter = self.first.pop(message.get("id"), None) if "method" not in message else None
            if waiter is not None:
                waiter.set_result(message)
                continue
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            scope = params.get("sessionId") if "method" in message else self.asked.pop(message.get("id"), None)
            conn.queue(scope).put_nowait(line.rstrip(b"\r\n"))  # relayed as the agent wrote it


async def respond(send: Any, status: int, body: Any, headers: list | None = None) -> None:
    data = b"" if body is None else json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


async def _main(port: int, reply_in_body: bool) -> None:
    async with AcpHttpServer(port=port, reply_in_body=reply_in_body, max_sessions=10**6) as server:
        print(f"listening on {server.url}", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--flood-in-body", action="store_true")
    args = parser.parse_args()
    asyncio.run(_main(args.port, args.flood_in_body))
