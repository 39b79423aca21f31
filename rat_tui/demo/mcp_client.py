"""The demo agent as an MCP client of rat-tui's own tools (`ask_user`, `show_file`), over either transport.

Keywords (whole words in the prompt): ``ask`` calls ``ask_user`` (a question with three choices),
``show`` calls ``show_file`` (the workspace README or first file, at line 1). They play before the
usual script, and only when the client declared its server (named ``rat-tui``) in session/new.

Modes: with ``--mcp-acp`` on the command line or env ``RAT_DEMO_MCP_ACP=1`` the demo advertises
``mcpCapabilities.acp`` and talks request-scoped MCP-over-ACP (one ``mcp/message`` request per MCP request);
otherwise it advertises nothing and launches the declared stdio server (rat-tui's shim) as a
subprocess, speaking MCP JSON lines to it, the way agents launch stdio MCP servers.
Standard library only; this side of MCP is hand-written because it plays the agent.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from typing import Any

from .scenarios import ClientError, pick_file

KEYWORDS = ("ask", "show")
SERVER_NAME = "rat-tui"
MCP_VERSION = "2025-06-18"
_servers: dict[str, dict[str, Any]] = {}  # session id -> rat-tui's server entry from session/new


def native() -> bool:
    return "--mcp-acp" in sys.argv[1:] or os.environ.get("RAT_DEMO_MCP_ACP") == "1"


def capabilities() -> dict[str, Any]:
    """The demo's `mcpCapabilities` in this mode."""
    return {"acp": True} if native() else {}


def remember(session_id: str, params: dict[str, Any]) -> None:
    """Keep rat-tui's own server from session/new's `mcpServers`."""
    for server in params.get("mcpServers") or []:
        if isinstance(server, dict) and server.get("name") == SERVER_NAME:
            _servers[session_id] = server


def wanted(text: str) -> list[str]:
    words = set(re.findall(r"\w+", text.lower()))
    return [word for word in KEYWORDS if word in words]


class AcpMcp:
    """MCP over the agent's own ACP connection: one `mcp/message` request per MCP request, its answer
    `{"result": …}` or `{"error": …}` (no connection to open or close)."""

    transport = "MCP-over-ACP"

    def __init__(self, agent: Any, server: dict[str, Any]) -> None:
        self.agent = agent
        self.server_id = server.get("serverId") or server.get("id")
        self.next_id = 1

    async def open(self) -> None:
        pass

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        request_id, self.next_id = f"demo-{self.next_id}", self.next_id + 1
        answer = await self.agent.request("mcp/message", {"serverId": self.server_id, "requestId": request_id,
                                                          "method": method, "params": params})
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            raise ClientError(method, answer["error"])
        return answer.get("result") if isinstance(answer, dict) else None

    def notify(self, method: str) -> None:
        pass  # request-scoped: the consumer sends no MCP notifications

    async def close(self) -> None:
        pass


class StdioMcp:
    """The declared stdio server launched as a subprocess, MCP JSON-RPC one message a line."""

    transport = "a stdio MCP server (rat-tui's shim)"

    def __init__(self, server: dict[str, Any]) -> None:
        self.server = server
        self.process: asyncio.subprocess.Process | None = None
        self.next_id = 1

    async def open(self) -> None:
        env = dict(os.environ)
        env.update({item["name"]: item["value"] for item in self.server.get("env") or []})
        self.process = await asyncio.create_subprocess_exec(
            self.server["command"], *self.server.get("args", []), env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**24)

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        assert self.process is not None and self.process.stdout is not None
        id, self.next_id = self.next_id, self.next_id + 1
        self._write({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        while True:
            line = await self.process.stdout.readline()
            if not line:
                raise ClientError(method, {"message": "the MCP server exited"})
            reply = json.loads(line)
            if reply.get("id") == id and "method" not in reply:
                if "error" in reply:
                    raise ClientError(method, reply["error"])
                return reply.get("result")

    def notify(self, method: str) -> None:
        self._write({"jsonrpc": "2.0", "method": method})

    async def close(self) -> None:
        if self.process is not None and self.process.returncode is None:
            if self.process.stdin is not None:
                self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except asyncio.TimeoutError:
                self.process.kill()


def _text(result: Any) -> str:
    content = result.get("content") if isinstance(result, dict) else None
    return " ".join(c.get("text", "") for c in content or [] if isinstance(c, dict)) or "(no text)"


async def play(agent: Any, turn: Any) -> None:
    """Call the tools the prompt asks for and say what came back."""
    server = _servers.get(turn.session.id)
    if server is None:  # the client offered no tools of its own: the usual script alone
        print("rat-demo: no rat-tui MCP server in session/new; skipping ask/show", file=sys.stderr, flush=True)
        return
    client: AcpMcp | StdioMcp = AcpMcp(agent, server) if server.get("type") == "acp" else StdioMcp(server)
    lines = [f"Through {client.transport}:"]
    try:
        await client.open()
        await client.request("initialize", {"protocolVersion": MCP_VERSION, "capabilities": {},
                                            "clientInfo": {"name": "rat-demo", "version": "0.1.0"}})
        client.notify("notifications/initialized")
        for word in wanted(turn.text):
            if word == "ask":
                result = await client.request("tools/call", {"name": "ask_user", "arguments": {
                    "question": "Which greeting should the demo agent use?", "choices": ["Hello", "Howdy", "Good day"]}})
                lines.append(f"- `ask_user`: you answered **{_text(result)}**")
            elif word == "show":
                path = pick_file(turn.session.cwd)
                if path is None:
                    lines.append("- `show_file`: there is no file in the workspace to show")
                    continue
                result = await client.request("tools/call", {"name": "show_file", "arguments": {"path": str(path), "line": 1}})
                lines.append(f"- `show_file`: {_text(result)}")
    except (ClientError, OSError, ValueError, KeyError) as error:
        lines.append(f"- failed: {error}")
    finally:
        try:
            await client.close()
        except (ClientError, OSError):
            pass
    await agent.stream(turn, "agent_message_chunk", "\n".join(lines) + "\n\n")
