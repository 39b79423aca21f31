"""Provides AcpClient: the ACP calls a client makes (initialize, session/new, prompt, cancel)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from .router import Connection

PROTOCOL_VERSION = 1
CLIENT_INFO = {"name": "rat-tui", "title": "rat-tui", "version": __version__}


class ProtocolMismatch(Exception):
    """The agent answered `initialize` with a protocol version we do not speak."""


def client_capabilities() -> dict[str, Any]:
    """What this client really implements; an agent must not call what we do not advertise."""
    return {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        # Agents may send boolean config options only to clients that say they can show them.
        "session": {"configOptions": {"boolean": {}}},
        # Forms from a requested schema and links shown until `elicitation/complete` (elicitation_broker.py).
        "elicitation": {"form": {}, "url": {}},
    }


@dataclass
class AgentHello:
    """What the agent told us in its `initialize` answer."""

    protocol_version: int
    name: str | None
    title: str | None
    version: str | None
    capabilities: dict[str, Any] = field(default_factory=dict)
    auth_methods: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def display_name(self) -> str | None:
        return self.title or self.name


class AcpClient:
    """Typed wrappers over `Connection.request` for the agent-side methods of ACP v1."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    async def initialize(self) -> AgentHello:
        result = await self.connection.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": client_capabilities(),
                "clientInfo": CLIENT_INFO,
            },
        )
        result = result if isinstance(result, dict) else {}
        version = result.get("protocolVersion")
        if version != PROTOCOL_VERSION:
            raise ProtocolMismatch(
                f"The agent speaks ACP protocol version {version!r}; rat-tui speaks version {PROTOCOL_VERSION}."
            )
        info = result.get("agentInfo") if isinstance(result.get("agentInfo"), dict) else {}
        capabilities = result.get("agentCapabilities")
        auth = result.get("authMethods")
        return AgentHello(
            protocol_version=version,
            name=_str_or_none(info.get("name")),
            title=_str_or_none(info.get("title")),
            version=_str_or_none(info.get("version")),
            capabilities=capabilities if isinstance(capabilities, dict) else {},
            auth_methods=[m for m in auth if isinstance(m, dict)] if isinstance(auth, list) else [],
            raw=result,
        )

    async def new_session(self, cwd: Path, mcp_servers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        cwd = Path(cwd)
        if not cwd.is_absolute():
            raise ValueError(f"session cwd must be absolute, got {cwd}")
        result = await self.connection.request("session/new", {"cwd": str(cwd), "mcpServers": mcp_servers or []})
        if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
            raise ValueError("the agent's session/new answer has no sessionId")
        return result

    async def prompt(self, session_id: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        result = await self.connection.request("session/prompt", {"sessionId": session_id, "prompt": blocks})
        return result if isinstance(result, dict) else {}

    async def cancel(self, session_id: str) -> None:
        await self.connection.notify("session/cancel", {"sessionId": session_id})


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
