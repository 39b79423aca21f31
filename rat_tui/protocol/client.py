"""Provides AcpClient: the ACP calls a client makes (initialize, sessions, prompt, cancel, auth)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from .router import Connection, ConnectionClosed, RpcError
from .sanitize import clean, clean_data

if TYPE_CHECKING:
    from . import v2

PROTOCOL_VERSION = 1
PROTOCOL_V2 = 2  # spoken through protocol/v2.py, imported only when asked for (6 ms of startup otherwise)
# The versions rat-tui speaks: v1 natively, v2 through protocol/v2.py (asked for per agent profile).
SUPPORTED_VERSIONS = (1, 2)
CLIENT_INFO = {"name": "rat-tui", "title": "rat-tui", "version": __version__}


class ProtocolMismatch(Exception):
    """The agent answered `initialize` with a protocol version we do not speak."""


def client_capabilities(local_files: bool = True) -> dict[str, Any]:
    """What this client really implements; an agent must not call what we do not advertise. `local_files`
    False (a remote agent, whose files are on its own machine): no client file system, no client terminals."""
    files: dict[str, Any] = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
    return {
        **(files if local_files else {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}),
        # Agents may send boolean config options only to clients that say they can show them;
        # `notice` and `compaction_update` only to clients that show them (state/compaction.py).
        # `promptSuggestions`: the composer shows the agent's predicted next prompt as ghost text (Tab takes it).
        "session": {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}, "promptSuggestions": {}},
        # Forms from a requested schema and links shown until `elicitation/complete` (elicitation_broker.py).
        "elicitation": {"form": {}, "url": {}},
        # Subagents stream as child sessions under their own sessionId (state/children.py).
        "subagents": {},
        # `plan_update` / `plan_removed`: several plans by planId, checklists or Markdown (state/plans.py).
        "plan": {},
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
        """Whether the agent advertised `feature`: load, list, resume, close, delete, archive, logout or auth_status.

        `loadSession` is a boolean; the others are objects (`{}` means yes; absent or null, no).
        """
        caps = self.capabilities
        if feature == "load":
            return caps.get("loadSession") is True
        if feature in ("logout", "auth_status"):
            auth = caps.get("auth")
            return isinstance(auth, dict) and isinstance(auth.get("logout" if feature == "logout" else "status"), dict)
        session = caps.get("sessionCapabilities")
        return isinstance(session, dict) and isinstance(session.get(feature), dict)


class AcpClient:
    """Typed wrappers over `Connection.request` for the agent-side methods of ACP.

    `protocol` is the version to ask for: 1, or 2 (ACP v2 Preview) with a fall back to v1 when the
    agent answers v1. Once `initialize` settled the version, the calls below speak it: in v2 the
    connection's codec (protocol/v2.py) rewrites them, and `prompt` returns when the turn is over (the
    session's `idle`), as a v1 prompt does, so the session engine runs the same turn logic on both.
    """

    def __init__(self, connection: Connection, protocol: int = PROTOCOL_VERSION, local_files: bool = True) -> None:
        self.connection = connection
        self.local_files = local_files  # offer fs and terminals (not to a remote agent: client_capabilities)
        # Extra params of session/new, load, resume and fork the agent advertised it takes
        # (`systemPrompt`, `additionalDirectories`: session/setup.py).
        self.session_extras: dict[str, Any] = {}
        self.protocol = protocol if protocol in SUPPORTED_VERSIONS else PROTOCOL_VERSION

    @property
    def version(self) -> int:
        """The version spoken (the one asked for until `initialize` answered)."""
        return self.connection.protocol_version or self.protocol

    async def initialize(self) -> AgentHello:
        capabilities = client_capabilities(self.local_files)
        v1_params = {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities, "clientInfo": CLIENT_INFO}
        if self.protocol == PROTOCOL_V2:
            from . import v2

            try:
                result = await self.connection.request("initialize", v2.initialize_params(CLIENT_INFO, capabilities))
            except RpcError as error:
                supported = error.data.get("supported") if isinstance(error.data, dict) else None
                if error.code != v2.UNSUPPORTED_VERSION or not isinstance(supported, list) or PROTOCOL_VERSION not in supported:
                    raise
                result = await self.connection.request("initialize", v1_params)  # it said it speaks v1
        else:
            result = await self.connection.request("initialize", v1_params)
        result = result if isinstance(result, dict) else {}
        version = result.get("protocolVersion")
        if version == PROTOCOL_V2 and self.protocol == PROTOCOL_V2:
            return self._speak_v2(result)
        if version != PROTOCOL_VERSION:
            raise ProtocolMismatch(
                f"The agent speaks ACP protocol version {version!r}; rat-tui speaks version "
                f"{' and '.join(str(v) for v in SUPPORTED_VERSIONS) if self.protocol == 2 else PROTOCOL_VERSION}."
            )
        self.connection.set_protocol(PROTOCOL_VERSION)
        info = result.get("agentInfo") if isinstance(result.get("agentInfo"), dict) else {}
        capabilities = result.get("agentCapabilities")
        auth = result.get("authMethods")
        return AgentHello(
            protocol_version=version,
            name=_str_or_none(info.get("name")),
            title=_str_or_none(info.get("title")),
            version=_str_or_none(info.get("version")),
            capabilities=capabilities if isinstance(capabilities, dict) else {},
            # Shown in the login picker: sanitised (a method id of control characters would not match).
            auth_methods=[clean_data(m) for m in auth if isinstance(m, dict)] if isinstance(auth, list) else [],
            raw=result,
        )

    def _speak_v2(self, result: dict[str, Any]) -> AgentHello:
        """The agent answered v2: install the codec, drop the client methods v2 has no more."""
        from . import v2

        self.connection.set_protocol(PROTOCOL_V2, v2.V2Codec())
        for method in v2.V1_ONLY_CLIENT_METHODS:
            self.connection.handlers.pop(method, None)
        info = result.get("info") if isinstance(result.get("info"), dict) else {}
        return AgentHello(
            protocol_version=PROTOCOL_V2,
            name=_str_or_none(info.get("name")),
            title=_str_or_none(info.get("title")),
            version=_str_or_none(info.get("version")),
            capabilities=v2.v1_capabilities(result),
            auth_methods=[clean_data(m) for m in v2.v1_auth_methods(result.get("authMethods"))],
            raw=result,
        )

    @property
    def _v2(self) -> v2.V2Codec | None:
        codec = self.connection.codec
        if codec is None:
            return None
        from . import v2

        return codec if isinstance(codec, v2.V2Codec) else None

    async def new_session(self, cwd: Path, mcp_servers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        cwd = Path(cwd)
        if not cwd.is_absolute():
            raise ValueError(f"session cwd must be absolute, got {cwd}")
        result = await self.connection.request(
            "session/new", {"cwd": str(cwd), "mcpServers": mcp_servers or [], **self.session_extras})
        if not isinstance(result, dict) or not isinstance(result.get("sessionId"), str):
            raise ValueError("the agent's session/new answer has no sessionId")
        return result

    async def load_session(self, session_id: str, cwd: Path, mcp_servers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """`session/load`: the agent replays the history as `session/update`s, then answers."""
        result = await self.connection.request(
            "session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": mcp_servers or [], **self.session_extras}
        )
        return result if isinstance(result, dict) else {}

    async def resume_session(self, session_id: str, cwd: Path, mcp_servers: list[dict[str, Any]] | None = None,
                             replay: bool = False) -> dict[str, Any]:
        """`session/resume`: like load, without a replay; in v2 `replay` asks for the whole history
        (`replayFrom: start`), replayed as `session/update`s before the answer."""
        params: dict[str, Any] = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": mcp_servers or [],
                                  **self.session_extras}
        if replay and self._v2 is not None:
            params["replayFrom"] = {"type": "start"}
        result = await self.connection.request("session/resume", params)
        return result if isinstance(result, dict) else {}

    async def list_sessions(self, cwd: Path | None = None, cursor: str | None = None, archived: str | None = None
                            ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of `session/list`: (sessions, next cursor or None); malformed items are dropped.

        `archived` is the archive filter (`exclude`, the agent's default, `include` or `only`): send it only
        to an agent advertising `sessionCapabilities.archive`."""
        params: dict[str, Any] = {}
        if cwd is not None:
            params["cwd"] = str(cwd)
        if cursor:
            params["cursor"] = cursor
        if archived:
            params["archived"] = archived
        result = await self.connection.request("session/list", params)
        result = result if isinstance(result, dict) else {}
        raw = result.get("sessions")
        sessions = [
            {**clean_data(s), "sessionId": s["sessionId"], "cwd": s["cwd"]}  # ids stay as sent: they are sent back
            for s in (raw if isinstance(raw, list) else [])
            if isinstance(s, dict) and isinstance(s.get("sessionId"), str) and isinstance(s.get("cwd"), str)
        ]
        next_cursor = result.get("nextCursor")
        return sessions, next_cursor if isinstance(next_cursor, str) and next_cursor else None

    async def close_session(self, session_id: str) -> None:
        await self.connection.request("session/close", {"sessionId": session_id})

    async def delete_session(self, session_id: str) -> None:
        await self.connection.request("session/delete", {"sessionId": session_id})

    async def archive_session(self, session_id: str, archived: bool = True) -> None:
        """`session/archive` (hide it from the default list; the agent closes it if active) or `session/unarchive`."""
        await self.connection.request("session/archive" if archived else "session/unarchive", {"sessionId": session_id})

    async def authenticate(self, method_id: str) -> None:
        await self.connection.request("authenticate", {"methodId": method_id})

    async def logout(self) -> None:
        await self.connection.request("logout", {})

    async def prompt(self, session_id: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
        """One turn: `{stopReason, usage?}` once it is over. In v2 the answer only says the prompt was
        inserted (`messageId`); the turn ends at the session's `state_update idle`, whose stop reason is
        returned (an `error` stop is raised as the RpcError it carries)."""
        codec = self._v2
        if codec is None:
            result = await self.connection.request("session/prompt", {"sessionId": session_id, "prompt": blocks})
            return result if isinstance(result, dict) else {}
        if codec.state_of(session_id) in ("running", "requires_action"):
            # Work the agent started on its own: the prompt waits for it, as v2 clients should.
            await self._await_turn(codec, session_id, codec.expect_turn(session_id), started=True)
        turn = codec.expect_turn(session_id)
        # v2 idempotency keys: a prompt is inserted at most once per key, so the same submission sent again
        # (its answer lost) cannot run the work twice; one key per submission.
        params = {"sessionId": session_id, "prompt": blocks, "idempotencyKey": f"rat-{uuid.uuid4()}"}
        try:
            answer = await self.connection.request("session/prompt", params)
        except BaseException:
            codec.drop_turn(session_id, turn)
            raise
        codec.inserted(session_id)
        outcome = await self._await_turn(codec, session_id, turn)
        stop = outcome.get("stopReason") if isinstance(outcome.get("stopReason"), str) else "end_turn"
        if stop == "error":
            error = outcome.get("error") if isinstance(outcome.get("error"), dict) else {}
            code = error.get("code")
            raise RpcError(code if isinstance(code, int) else -32603, str(error.get("message") or "the turn failed"),
                           error.get("data"))
        result: dict[str, Any] = {"stopReason": stop}
        if isinstance(answer, dict) and isinstance(answer.get("messageId"), str):
            result["messageId"] = answer["messageId"]
        if isinstance(outcome.get("usage"), dict):
            result["usage"] = outcome["usage"]
        return result

    @staticmethod
    async def _await_turn(codec: v2.V2Codec, session_id: str, turn: Any, started: bool = False) -> dict[str, Any]:
        if started:
            codec.inserted(session_id)
        try:
            return await turn
        except ConnectionError as error:
            raise ConnectionClosed(str(error)) from error
        finally:
            codec.drop_turn(session_id, turn)

    async def cancel(self, session_id: str) -> None:
        await self.connection.notify("session/cancel", {"sessionId": session_id})


def _str_or_none(value: Any) -> str | None:
    return clean(value) if isinstance(value, str) and value else None
