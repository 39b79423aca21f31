"""Provides the MCP servers a session passes to its agent: config merged, filtered by the agent's capabilities.

Every agent must take stdio servers; http and sse only when `agentCapabilities.mcpCapabilities`
says so; any other type is skipped. What was sent and what was skipped (and why) is kept as a
report for the session's summary panel (Alt+M); skipped servers also leave a warning in the
transcript. No Textual.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import McpServerConfig

TRANSPORTS = ("stdio", "http", "sse")
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class McpServerRow:
    """One configured server as the summary shows it."""

    name: str
    transport: str
    target: str  # the command line or the URL
    sent: bool
    why: str = ""  # why it was not sent
    warn: bool = False  # worth a warning in the transcript (not for servers switched off on purpose)


def configured(global_servers: Iterable[McpServerConfig], profile_servers: Iterable[McpServerConfig]) -> list[McpServerConfig]:
    """The global servers, then the profile's; a profile server replaces a global one of the same name."""
    merged: dict[str, McpServerConfig] = {}
    for server in [*global_servers, *profile_servers]:
        merged.pop(server.name, None)  # re-inserted last: the profile's place in the order
        merged[server.name] = server
    return list(merged.values())


def plan(
    servers: Iterable[McpServerConfig],
    capabilities: Mapping[str, Any],
    cwd: Path,
    environ: Mapping[str, str] | None = None,
) -> tuple[list[dict[str, Any]], list[McpServerRow]]:
    """(the `mcpServers` wire list, a row per configured server) for an agent with these capabilities."""
    environ = os.environ if environ is None else environ
    mcp = capabilities.get("mcpCapabilities") if isinstance(capabilities, Mapping) else None
    mcp = mcp if isinstance(mcp, Mapping) else {}
    wire: list[dict[str, Any]] = []
    rows: list[McpServerRow] = []
    for server in servers:
        entry, row = _one(server, mcp, cwd, environ)
        rows.append(row)
        if entry is not None:
            wire.append(entry)
    return wire, rows


def target(server: McpServerConfig) -> str:
    """What the summary shows for a server as configured: its URL, or its command line."""
    return (server.url or "") if server.type in ("http", "sse") else " ".join([server.command or "", *server.args]).strip()


def _one(server: McpServerConfig, mcp: Mapping[str, Any], cwd: Path, environ: Mapping[str, str]) -> tuple[dict[str, Any] | None, McpServerRow]:
    kind = server.type

    def skipped(why: str, warn: bool = True) -> tuple[None, McpServerRow]:
        return None, McpServerRow(server.name, kind, target(server), False, why, warn)

    if not server.enabled:
        return skipped("disabled in the config", warn=False)
    if kind not in TRANSPORTS:
        return skipped(f"unknown transport {kind!r} (rat-tui sends stdio, http and sse)")
    if mcp.get(kind) is not True and (kind != "stdio" or mcp.get("stdio") is False):  # stdio: v1 baseline, v2 flag
        return skipped(f"the agent does not support {kind} MCP servers (mcpCapabilities.{kind})")
    try:
        if kind == "stdio":
            if not server.command:
                return skipped("no command")
            command = _executable(server.command, cwd, environ)
            if command is None:
                return skipped(f"command not found: {server.command}")
            entry: dict[str, Any] = {
                "name": server.name,
                "command": command,
                "args": list(server.args),
                "env": [{"name": k, "value": _expand(v, environ)} for k, v in server.env.items()],
            }
            return entry, McpServerRow(server.name, kind, " ".join([command, *server.args]), True)
        if not server.url:
            return skipped("no url")
        entry = {
            "type": kind,
            "name": server.name,
            "url": _expand(server.url, environ),
            "headers": [{"name": k, "value": _expand(v, environ)} for k, v in server.headers.items()],
        }
        return entry, McpServerRow(server.name, kind, server.url, True)
    except KeyError as missing:
        return skipped(f"environment variable {missing.args[0]} is not set")


def _executable(command: str, cwd: Path, environ: Mapping[str, str]) -> str | None:
    """The absolute path the schema asks for: `~` expanded, relative paths from the session's cwd, bare names on PATH."""
    command = os.path.expanduser(command)
    if os.sep in command or (os.altsep and os.altsep in command):
        path = Path(command) if os.path.isabs(command) else Path(cwd) / command
        return os.path.normpath(path) if path.exists() else None  # not resolve(): keep the user's symlinks
    return shutil.which(command, path=environ.get("PATH"))


def _expand(value: str, environ: Mapping[str, str]) -> str:
    """`${NAME}` from the environment (so secrets stay out of config.toml); KeyError when it is unset."""
    return VARIABLE.sub(lambda m: environ[m.group(1)], value)


def warnings(rows: Iterable[McpServerRow]) -> list[str]:
    """One transcript line per server skipped for a reason the user did not choose."""
    return [f"MCP server {row.name!r} not sent to the agent: {row.why}." for row in rows if not row.sent and row.warn]
