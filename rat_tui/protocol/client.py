"""Provides AcpClient: the ACP calls a client makes (initialize, sessions, prompt, cancel, auth)."""

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
        # `terminal` auth methods: rat runs the agent's own command interactively (screens/auth.py).
        "auth": {"terminal": True},
    }


AUTH_REQUIRED = -32000  # ErrorCode "Authentication required"


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

    def supports(self, feature: str) -> bool:
        """Whether the agent advertised `feature`: load, list, resume, close, delete or logout.

        `loadSession` is a boolean; the others are objects (`{}` means yes; absent or null, no).
        """
        caps = self.capabilities
        if feature == "load":
            return caps.get("loadSession") is True
        if feature == "logout":
            auth = caps.get("auth")
            return isinstance(auth, dict) and isinstance(auth.get("logout"), dict)
        session = caps.get("sessionCapabilities")
        return isinstance(session, dict) and isinstance(session.get(feature), dict)


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

    async def load_session(self, session_id: str, cwd: Path, mcp_servers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """`session/load`: the agent replays the history as `session/update`s, then answers."""
        result = await self.connection.request(
            "session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": mcp_servers or []}
        )
        return result if isinstance(result, dict) else {}

    async def resume_session(self, session_id: str, cwd: Path, mcp_servers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """`session/resume`: like load, without a replay."""
        result = await self.connection.request(
            "session/resume", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": mcp_servers or []}
        )
        return result if isinstance(result, dict) else {}

    async def list_sessions(self, cwd: Path | None = None, cursor: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        """One page of `session/list`: (sessions, next cursor or None); malformed items are dropped."""
        params: dict[str, Any] = {}
        if cwd is not None:
            params["cwd"] = str(cwd)
        if cursor:
            params["cursor"] = cursor
        result = await self.connection.request("session/list", params)
        result = result if isinstance(result, dict) else {}
        raw = result.get("sessions")
        sessions = [
            s for s in (raw if isinstance(raw, list) else [])
            if isinstance(s, dict) and isinstance(s.get("sessionId"), str) and isinstance(s.get("cwd"), str)
        ]
        next_cursor = result.get("nextCursor")
        return sessions, next_cursor if isinstance(next_cursor, str) and next_cursor else None

    async def close_session(self, session_id: str) -> None:
        await self.connection.request("session/close", {"sessionId": session_id})

    async def delete_session(self, session_id: str) -> None:
        await self.connection.request("session/delete", {"sessionId": session_id})

    async def authenticate(self, method_id: str) -> None:
        await self.connection.request("authenticate", {"methodId": method_id})

    async def logout(self) -> None:
        await self.connection.request("logout", {})

    async def prompt(self, session_id: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        result = await self.connection.request("session/prompt", {"sessionId": session_id, "prompt": blocks})
        return result if isinstance(result, dict) else {}

    async def cancel(self, session_id: str) -> None:
        await self.connection.notify("session/cancel", {"sessionId": session_id})


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
