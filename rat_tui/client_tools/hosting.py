"""Provides ClientTools: one session's client-hosted MCP server, declared natively or through the bridge.

Native (MCP-over-ACP) when the config allows it (`[client_tools] native`, default true) and the agent
advertises `mcpCapabilities.acp: true` — an unstable feature the agent opts into by advertising it, so
rat-tui sends the unstable `acp` server type only to agents that asked for it. Every other agent gets
an ordinary stdio server whose command is the shim (stable protocol only).
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..session.mcp_servers import McpServerRow
from .shim import SECRET_ENV
from ..protocol.router import Connection
from .acp_transport import AcpTransport
from .bridge import Bridge
from .settings import SERVER_NAME
from .tools import ToolHost

log = logging.getLogger("rat.client_tools")
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding rat_tui/, for the shim's PYTHONPATH


class ClientTools:
    """The session's tool host made reachable: natively (MCP-over-ACP) or through the shim's bridge."""

    def __init__(self, host: ToolHost, connection: Callable[[], Connection | None]) -> None:
        self.host = host
        self.settings = host.settings
        self.server_id = f"rat-tui-{uuid.uuid4()}"
        self.native = AcpTransport(self.host, self.server_id, connection)
        self.bridge: Bridge | None = None
        self.transport: str | None = None  # "native" or "bridged" once declared

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        return self.native.handlers()

    def on_message_notification(self, params: dict[str, Any]) -> None:
        self.native.notification(params)

    async def plan(self, capabilities: Mapping[str, Any], local: bool = True) -> tuple[dict[str, Any] | None, McpServerRow]:
        """(the `mcpServers` entry or None, the summary row) for an agent with these capabilities; `local`
        False (a remote agent): only MCP over ACP, as it cannot start the local bridge's shim."""
        mcp = capabilities.get("mcpCapabilities") if isinstance(capabilities, Mapping) else None
        native_ok = isinstance(mcp, Mapping) and mcp.get("acp") is True
        tools = ", ".join(self.settings.offered)
        if not self.settings.enabled or not self.settings.offered:
            why = "disabled in the config" if not self.settings.enabled else "every tool is off in the config"
            return None, McpServerRow(SERVER_NAME, "client-hosted", tools, False, why, warn=False)
        if native_ok and self.settings.native:
            self.native.active = True
            self.transport = "native"
            entry = {"type": "acp", "name": SERVER_NAME, "serverId": self.server_id}
            return entry, McpServerRow(SERVER_NAME, "acp (native)", f"in rat-tui: {tools}", True)
        if not local:
            return None, McpServerRow(SERVER_NAME, "stdio (bridged)", tools, False, "the agent runs on another machine "
                                      "and does not take MCP over ACP (mcpCapabilities.acp), so it cannot reach them")
        if self.bridge is None:
            self.bridge = Bridge(self.host)
            try:
                await self.bridge.open()
            except (OSError, AttributeError, NotImplementedError) as error:  # no Unix sockets (Windows)
                self.bridge = None
                return None, McpServerRow(SERVER_NAME, "stdio (bridged)", tools, False, f"cannot open the bridge socket: {error}")
        assert self.bridge.path is not None
        self.transport = "bridged"
        args = ["-m", "rat_tui.client_tools.shim", "--socket", self.bridge.path]
        entry = {"name": SERVER_NAME, "command": sys.executable, "args": args,
                 "env": [{"name": SECRET_ENV, "value": self.bridge.secret}, {"name": "PYTHONPATH", "value": PACKAGE_ROOT}]}
        return entry, McpServerRow(SERVER_NAME, "stdio (bridged)", f"rat_tui.client_tools.shim: {tools}", True)

    async def close(self) -> None:
        await self.native.close()
        if self.bridge is not None:
            await self.bridge.close()
            self.bridge = None  # a restarted agent gets a fresh socket and secret
