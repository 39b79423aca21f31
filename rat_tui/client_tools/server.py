"""Provides McpEndpoint: one MCP connection to rat-tui's tools, served by the official `mcp` SDK.

The SDK's low-level `Server` runs over in-memory streams that we feed: `feed()` takes one MCP
JSON-RPC message (a dict, validated by the SDK's models) and every message the server produces is
handed to `send` as a dict. The transports (MCP-over-ACP, the shim bridge) only move these dicts.
Importing this module imports `mcp` (about a second on a small machine): it is imported only when
an agent actually connects.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

from .. import __version__
from .settings import SERVER_NAME
from .tools import ToolHost

log = logging.getLogger("rat.client_tools")

Send = Callable[[dict[str, Any]], Awaitable[None]]


def build_server(host: ToolHost) -> Server:
    server: Server = Server(SERVER_NAME, version=__version__,
                            instructions="Tools of the rat-tui terminal client: ask the user, show a file, notify.")

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [types.Tool(name=name, description=description, inputSchema=schema)
                for name, description, schema in host.definitions()]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        context = server.request_context
        token = context.meta.progressToken if context.meta else None
        if token is not None and name == "ask_user":  # the answer may take minutes: say so
            await context.session.send_progress_notification(token, 0, message="Waiting for the user's answer",
                                                             related_request_id=str(context.request_id))
        text, is_error = await host.call(name, arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=is_error)

    return server


def parse(message: Any) -> SessionMessage:
    """One MCP JSON-RPC message as the SDK's model; raises ValueError when it is not one."""
    return SessionMessage(message=types.JSONRPCMessage.model_validate(message))


def dump(message: SessionMessage) -> dict[str, Any]:
    return message.message.model_dump(by_alias=True, mode="json", exclude_none=True)


class McpEndpoint:
    """The server side of one connection; `close()` ends it (pending tool calls are cancelled)."""

    def __init__(self, host: ToolHost, send: Send, name: str = "") -> None:
        self.host = host
        self.send = send
        self.name = name
        self._in, self._in_reader = anyio.create_memory_object_stream[SessionMessage | Exception](64)
        self._out_writer, self._out = anyio.create_memory_object_stream[SessionMessage](64)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"mcp endpoint {self.name}")

    @property
    def closed(self) -> bool:
        return self._task is not None and self._task.done()

    async def _run(self) -> None:
        server = build_server(self.host)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._pump)
                await server.run(self._in_reader, self._out_writer, server.create_initialization_options())
                group.cancel_scope.cancel()
        except Exception:
            log.exception("MCP endpoint %s failed", self.name)

    async def _pump(self) -> None:
        async for message in self._out:
            try:
                await self.send(dump(message))
            except Exception:
                log.exception("could not send an MCP message on %s", self.name)

    async def feed(self, message: dict[str, Any]) -> None:
        """Hand one incoming MCP message to the server; ValueError if it is not a JSON-RPC message."""
        await self._in.send(parse(message))

    def feed_nowait(self, message: dict[str, Any]) -> None:
        """`feed` without waiting, so notifications keep their arrival order; ValueError as `feed`."""
        try:
            self._in.send_nowait(parse(message))
        except anyio.WouldBlock:
            raise ValueError("the MCP server is not keeping up; message dropped") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ValueError("the MCP connection is closed") from None

    async def close(self) -> None:
        if self._task is None or self._task.done():
            return
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
