"""Provides Bridge: the private Unix socket the stdio shim (`rat_tui.client_tools.shim`) relays an agent's MCP traffic to.

For agents without MCP-over-ACP we declare an ordinary stdio MCP server whose command is the shim.
The socket lives in a fresh directory of its own (mode 0700, under $XDG_RUNTIME_DIR or the temp
dir), the socket itself is 0600, and the first line a shim sends must carry this session's secret
(compared in constant time) before anything is relayed: another user cannot open the socket, and
another session's shim (or anything else of ours) holds the wrong secret and is refused. Each
accepted shim is one MCP connection (several may be open); after the handshake the stream is MCP
JSON-RPC, one message a line, both ways.
"""

from __future__ import annotations

import asyncio
import hmac
import importlib
import json
import logging
import os
import secrets
import shutil
import socket
import tempfile
from typing import Any

from .tools import ToolHost

log = logging.getLogger("rat.client_tools")

HANDSHAKE_TIMEOUT = 10.0
LINE_LIMIT = 64 * 1024 * 1024  # an MCP message is one line; a big tool result is legal


def runtime_base() -> str:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return runtime if runtime and os.path.isdir(runtime) else tempfile.gettempdir()


class Bridge:
    def __init__(self, host: ToolHost) -> None:
        self.host = host
        self.secret = secrets.token_hex(32)
        self.directory: str | None = None
        self.path: str | None = None
        self.refused = 0  # shims turned away (wrong secret or no handshake)
        self.endpoints: set[Any] = set()
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def open(self) -> str:
        """Create and listen on the socket; returns its path. Raises OSError when it cannot."""
        self.directory = tempfile.mkdtemp(prefix="rat-mcp-", dir=runtime_base())  # 0700, ours alone
        self.path = os.path.join(self.directory, "s")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(self.path)
            os.chmod(self.path, 0o600)
            sock.listen(16)
        except OSError:
            sock.close()
            shutil.rmtree(self.directory, ignore_errors=True)
            raise
        self._server = await asyncio.start_unix_server(self._serve, sock=sock, limit=LINE_LIMIT)
        log.info("MCP bridge listening on %s", self.path)
        return self.path

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        endpoint = None
        try:
            if not await self._handshake(reader, writer):
                return
            server = await asyncio.to_thread(importlib.import_module, "rat_tui.client_tools.server")

            async def send(message: dict[str, Any]) -> None:
                writer.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
                await writer.drain()

            endpoint = server.McpEndpoint(self.host, send, name="bridge")
            self.endpoints.add(endpoint)
            endpoint.start()
            while line := await reader.readline():
                if not line.strip():
                    continue
                try:
                    await endpoint.feed(json.loads(line))
                except ValueError as error:  # not JSON, or not a JSON-RPC message
                    log.warning("bridge: skipped a bad MCP line: %s", str(error).splitlines()[0])
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as error:
            log.info("bridge connection ended: %s", error)
        finally:
            if endpoint is not None:
                self.endpoints.discard(endpoint)
                await endpoint.close()
            self._writers.discard(writer)
            writer.close()

    async def _handshake(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        try:
            line = await asyncio.wait_for(reader.readline(), HANDSHAKE_TIMEOUT)
            hello = json.loads(line)
            given = hello.get("secret") if isinstance(hello, dict) else None
        except (asyncio.TimeoutError, ValueError):
            given = None
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), self.secret.encode()):
            self.refused += 1
            log.warning("bridge: refused a connection without this session's secret")
            writer.write(b'{"error":"refused: wrong secret"}\n')
            await writer.drain()
            return False
        writer.write(b'{"ok":true}\n')
        await writer.drain()
        return True

    async def close(self) -> None:
        """Stop listening, end every shim's connection (the shims then exit) and remove the socket."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.close()
        for endpoint in list(self.endpoints):
            await endpoint.close()
        self.endpoints.clear()
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
