"""Provides AcpTransport: MCP-over-ACP (unstable), the `mcp/connect`, `mcp/message` and `mcp/disconnect` handlers.

The agent connects to the server we declared as `{type: "acp", name, serverId}` with `mcp/connect`
(the schema's `serverId`; the proposal's `acpId`/`id` are accepted too) and gets a fresh
`connectionId`; several connections to one server may be open at once. `mcp/message` carries one MCP
message with its method and params flattened into the ACP params: a request when the ACP message has
an id (its ACP result is the inner MCP result), a notification otherwise. Messages our MCP server
sends go the other way the same way. `mcp/disconnect` or the end of the session closes a connection.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import uuid
from collections.abc import Callable
from typing import Any

from ..protocol.router import INVALID_PARAMS, Connection, ConnectionClosed, RpcError
from .tools import ToolHost

log = logging.getLogger("rat.client_tools")


def server_id_of(params: dict[str, Any]) -> Any:
    """`serverId` as the schema names it; `acpId` and `id` as the proposal's prose does."""
    for key in ("serverId", "acpId", "id"):
        if key in params:
            return params[key]
    return None


class AcpTransport:
    def __init__(self, host: ToolHost, server_id: str, connection: Callable[[], Connection | None]) -> None:
        self.host = host
        self.server_id = server_id
        self.connection = connection
        self.active = False  # set once the server is declared with type "acp"
        self.endpoints: dict[str, Any] = {}  # connectionId -> McpEndpoint
        self._inner_ids = itertools.count(1)
        self._waiting: dict[tuple[str, int], asyncio.Future[dict[str, Any]]] = {}

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        return {"mcp/connect": self.connect, "mcp/message": self.message, "mcp/disconnect": self.disconnect}

    async def connect(self, params: dict[str, Any]) -> dict[str, Any]:
        server_id = server_id_of(params)
        if not self.active or server_id != self.server_id:
            raise RpcError(INVALID_PARAMS, f"No MCP server with id {server_id!r} on this connection")
        # The SDK import takes about a second: keep it off the event loop (the UI stays live).
        server = await asyncio.to_thread(importlib.import_module, "rat_tui.client_tools.server")
        connection_id = f"conn-{uuid.uuid4().hex[:12]}"

        async def send(message: dict[str, Any]) -> None:
            await self._outgoing(connection_id, message)

        endpoint = server.McpEndpoint(self.host, send, name=connection_id)
        self.endpoints[connection_id] = endpoint
        endpoint.start()
        log.info("MCP-over-ACP connection %s opened", connection_id)
        return {"connectionId": connection_id}

    def _endpoint(self, params: dict[str, Any]) -> Any:
        endpoint = self.endpoints.get(params.get("connectionId"))  # type: ignore[arg-type]
        if endpoint is None:
            raise RpcError(INVALID_PARAMS, f"No open MCP connection {params.get('connectionId')!r}")
        return endpoint

    async def message(self, params: dict[str, Any]) -> Any:
        """An `mcp/message` request: the inner MCP request, answered with its result (or its error)."""
        endpoint = self._endpoint(params)
        method = params.get("method")
        if not isinstance(method, str):
            raise RpcError(INVALID_PARAMS, "mcp/message needs the inner MCP method")
        inner_id = next(self._inner_ids)
        key = (str(params["connectionId"]), inner_id)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[key] = future
        inner: dict[str, Any] = {"jsonrpc": "2.0", "id": inner_id, "method": method}
        if isinstance(params.get("params"), dict):
            inner["params"] = params["params"]
        try:
            try:
                await endpoint.feed(inner)
            except ValueError as error:
                raise RpcError(INVALID_PARAMS, f"Not a valid MCP request: {error}") from None
            answer = await future
        except asyncio.CancelledError:
            await self._feed_quietly(endpoint, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                "params": {"requestId": inner_id, "reason": "cancelled by the agent"}})
            raise
        finally:
            self._waiting.pop(key, None)
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            raise RpcError(int(error.get("code", -32603)), str(error.get("message", "error")), error.get("data"))
        return answer.get("result")

    def notification(self, params: dict[str, Any]) -> None:
        """An `mcp/message` notification (no ACP id): the inner MCP notification."""
        endpoint = self.endpoints.get(params.get("connectionId"))  # type: ignore[arg-type]
        method = params.get("method")
        if endpoint is None or not isinstance(method, str):
            log.warning("mcp/message notification for unknown connection %r ignored", params.get("connectionId"))
            return
        inner: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if isinstance(params.get("params"), dict):
            inner["params"] = params["params"]
        try:
            endpoint.feed_nowait(inner)  # in arrival order (the router hands notifications over in order)
        except ValueError as error:
            log.warning("MCP notification not delivered: %s", error)

    async def _feed_quietly(self, endpoint: Any, message: dict[str, Any]) -> None:
        try:
            await endpoint.feed(message)
        except Exception as error:
            log.warning("MCP message not delivered: %s", error)

    async def disconnect(self, params: dict[str, Any]) -> dict[str, Any]:
        endpoint = self._endpoint(params)
        del self.endpoints[params["connectionId"]]
        self._abandon(str(params["connectionId"]))
        await endpoint.close()
        log.info("MCP-over-ACP connection %s closed", params["connectionId"])
        return {}

    async def _outgoing(self, connection_id: str, message: dict[str, Any]) -> None:
        """A message from our MCP server: a response to the agent's request, or one of its own."""
        method = message.get("method")
        if not isinstance(method, str):
            future = self._waiting.get((connection_id, message.get("id")))  # type: ignore[arg-type]
            if future is not None and not future.done():
                future.set_result(message)
            return
        connection = self.connection()
        if connection is None:
            return
        wrapped: dict[str, Any] = {"connectionId": connection_id, "method": method}
        if message.get("params") is not None:
            wrapped["params"] = message["params"]
        if "id" not in message:
            await connection.notify("mcp/message", wrapped)
            return
        asyncio.ensure_future(self._ask_agent(connection, connection_id, message["id"], wrapped))

    async def _ask_agent(self, connection: Connection, connection_id: str, inner_id: Any, wrapped: dict[str, Any]) -> None:
        endpoint = self.endpoints.get(connection_id)
        try:
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": inner_id, "result": await connection.request("mcp/message", wrapped)}
        except RpcError as error:
            reply = {"jsonrpc": "2.0", "id": inner_id, "error": error.to_json()}
        except ConnectionClosed:
            return
        if endpoint is not None:
            await self._feed_quietly(endpoint, reply)

    def _abandon(self, connection_id: str) -> None:
        """Requests still waiting on a closed connection are answered with an error."""
        for (conn, _), future in list(self._waiting.items()):
            if conn == connection_id and not future.done():
                future.set_result({"error": {"code": -32603, "message": "The MCP connection was closed"}})

    async def close(self) -> None:
        endpoints, self.endpoints = dict(self.endpoints), {}
        for connection_id, endpoint in endpoints.items():
            self._abandon(connection_id)
            await endpoint.close()
