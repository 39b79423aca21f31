"""Provides AcpTransport: MCP-over-ACP (unstable), request-scoped `mcp/message`.

The shape of `v1-latest/schema.unstable.json`: the agent calls our server, declared as
`{type: "acp", name, serverId}`, with one `mcp/message` request per inner MCP request,
`{serverId, requestId, method, params?}` (`requestId` is the agent's own id for the inner request,
distinct from the outer JSON-RPC id). The answer carries exactly one inner outcome:
`{"result": ...}` or `{"error": {code, message, data?}}`; outer ACP errors are kept for binding
failures (an unknown serverId, a malformed request). While a request is active, what our server says
about it (a progress notification) goes to the agent as an `mcp/message` notification
`{serverId, requestId, method, params?}`. There is no connection to open or close any more
(`mcp/connect` and `mcp/disconnect` are gone): one MCP session of ours serves every request; we run
its `initialize` handshake ourselves and answer an agent's own `initialize` from it. A request the
agent withdraws (`$/cancel_request`) is cancelled inside as `notifications/cancelled`.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
from collections.abc import Callable
from typing import Any

from ..protocol.router import INVALID_PARAMS, Connection, ConnectionClosed, RpcError
from .tools import ToolHost

log = logging.getLogger("rat.client_tools")

INIT_ID = "rat-initialize"


class AcpTransport:
    def __init__(self, host: ToolHost, server_id: str, connection: Callable[[], Connection | None]) -> None:
        self.host = host
        self.server_id = server_id
        self.connection = connection
        self.active = False  # set once the server is declared with type "acp"
        self.endpoint: Any = None  # server.McpEndpoint, started on the first request
        self.init_result: dict[str, Any] | None = None
        self._start_lock = asyncio.Lock()
        self._inner_ids = itertools.count(1)
        self._waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}  # inner id -> its answer
        self._active: dict[Any, str] = {}  # inner id -> the agent's requestId, while it runs
        self._progress: dict[Any, str] = {}  # progressToken -> the agent's requestId

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        return {"mcp/message": self.message}

    async def _started(self) -> Any:
        async with self._start_lock:
            if self.endpoint is not None and not self.endpoint.closed:
                return self.endpoint
            # The SDK import takes about a second: keep it off the event loop (the UI stays live).
            server = await asyncio.to_thread(importlib.import_module, "rat_tui.client_tools.server")
            endpoint = server.McpEndpoint(self.host, self._outgoing, name=f"acp {self.server_id}")
            endpoint.start()
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self._waiting[INIT_ID] = future
            try:
                await endpoint.feed({"jsonrpc": "2.0", "id": INIT_ID, "method": "initialize", "params": {
                    "protocolVersion": server.types.LATEST_PROTOCOL_VERSION, "capabilities": {},
                    "clientInfo": {"name": "rat-tui (MCP-over-ACP)", "version": "1"}}})
                answer = await asyncio.wait_for(future, 30)
            finally:
                self._waiting.pop(INIT_ID, None)
            self.init_result = answer.get("result") if isinstance(answer.get("result"), dict) else {}
            endpoint.feed_nowait({"jsonrpc": "2.0", "method": "notifications/initialized"})
            self.endpoint = endpoint
            log.info("MCP-over-ACP server %s started", self.server_id)
            return endpoint

    async def message(self, params: dict[str, Any]) -> dict[str, Any]:
        """One `mcp/message` request: its inner MCP request, answered `{"result": …}` or `{"error": …}`."""
        server_id, request_id, method = params.get("serverId"), params.get("requestId"), params.get("method")
        if not self.active or server_id != self.server_id:
            raise RpcError(INVALID_PARAMS, f"No MCP server with id {server_id!r} on this connection")
        if not isinstance(request_id, str) or not request_id or not isinstance(method, str) or not method:
            raise RpcError(INVALID_PARAMS, "mcp/message needs a requestId and the inner MCP method")
        inner_params = params.get("params") if isinstance(params.get("params"), dict) else None
        endpoint = await self._started()
        if method == "initialize":  # our own handshake already ran: the same answer
            return {"result": self.init_result}
        inner_id = next(self._inner_ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[inner_id] = future
        self._active[inner_id] = request_id
        token = (inner_params or {}).get("_meta", {}).get("progressToken") if isinstance(
            (inner_params or {}).get("_meta"), dict) else None
        if isinstance(token, (str, int)):
            self._progress[token] = request_id
        inner: dict[str, Any] = {"jsonrpc": "2.0", "id": inner_id, "method": method}
        if inner_params is not None:
            inner["params"] = inner_params
        try:
            try:
                await endpoint.feed(inner)
            except ValueError as error:
                raise RpcError(INVALID_PARAMS, f"Not a valid MCP request: {error}") from None
            answer = await future
        except asyncio.CancelledError:  # the agent withdrew the request ($/cancel_request)
            await self._feed_quietly(endpoint, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                                "params": {"requestId": inner_id, "reason": "cancelled by the agent"}})
            raise
        finally:
            self._waiting.pop(inner_id, None)
            self._active.pop(inner_id, None)
            if isinstance(token, (str, int)):
                self._progress.pop(token, None)
        if "result" in answer:
            return {"result": answer["result"]}
        error = answer.get("error") if isinstance(answer.get("error"), dict) else {}
        return {"error": {"code": int(error.get("code", -32603)), "message": str(error.get("message", "error")),
                          **({"data": error["data"]} if "data" in error else {})}}

    def notification(self, params: dict[str, Any]) -> None:
        """An `mcp/message` notification from the agent: only a provider sends these, and we are the
        provider here, so it concerns no request of ours."""
        log.info("mcp/message notification from the agent ignored (request %r)", params.get("requestId"))

    async def _feed_quietly(self, endpoint: Any, message: dict[str, Any]) -> None:
        try:
            await endpoint.feed(message)
        except Exception as error:
            log.warning("MCP message not delivered: %s", error)

    async def _outgoing(self, message: dict[str, Any]) -> None:
        """A message from our MCP server: an answer, or a notification about an active request."""
        method = message.get("method")
        if not isinstance(method, str):
            future = self._waiting.get(message.get("id"))
            if future is not None and not future.done():
                future.set_result(message)
            return
        if "id" in message:  # a request of the server's own (sampling, roots): no way to ask in this shape
            endpoint = self.endpoint
            if endpoint is not None:
                await self._feed_quietly(endpoint, {"jsonrpc": "2.0", "id": message["id"], "error": {
                    "code": -32601, "message": "The ACP transport carries no server-to-client requests"}})
            return
        request_id = self._request_for(message)
        connection = self.connection()
        if request_id is None or connection is None:
            log.debug("MCP notification %s about no active request dropped", method)
            return
        wrapped: dict[str, Any] = {"serverId": self.server_id, "requestId": request_id, "method": method}
        if message.get("params") is not None:
            wrapped["params"] = message["params"]
        try:
            await connection.notify("mcp/message", wrapped)
        except ConnectionClosed:
            pass

    def _request_for(self, message: dict[str, Any]) -> str | None:
        """The agent's requestId a server notification belongs to: by progress token, else the one active."""
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        token = params.get("progressToken")
        if isinstance(token, (str, int)) and token in self._progress:
            return self._progress[token]
        cancelled = params.get("requestId")
        if cancelled in self._active:
            return self._active[cancelled]
        active = list(self._active.values())
        return active[-1] if len(active) == 1 else None

    async def close(self) -> None:
        for future in list(self._waiting.values()):
            if not future.done():
                future.set_result({"error": {"code": -32603, "message": "The session ended"}})
        endpoint, self.endpoint = self.endpoint, None
        if endpoint is not None:
            await endpoint.close()
