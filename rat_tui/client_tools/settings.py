"""Provides the effective client-tools settings of one session: the global `[client_tools]`, then the profile's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SERVER_NAME = "rat-tui"
TOOL_NAMES = ("ask_user", "show_file", "notify", "list_sessions", "read_session")
# Reading other sessions shows the agent what the user did elsewhere: ask first unless told otherwise.
DEFAULT_POLICY = {"ask_user": "allow", "show_file": "allow", "notify": "allow",
                  "list_sessions": "ask", "read_session": "ask"}


@dataclass(frozen=True)
class ClientToolsSettings:
    enabled: bool = True
    native: bool = True  # MCP-over-ACP when the agent advertises mcpCapabilities.acp
    tools: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_POLICY))  # name -> allow|ask|off

    @property
    def offered(self) -> list[str]:
        return [name for name in TOOL_NAMES if self.tools.get(name, "off") != "off"]


def merged(global_config: Any, profile_config: Any = None) -> ClientToolsSettings:
    """config.ClientToolsConfig objects (either may be None): unset keys fall back to the global, then the default."""
    enabled, native, tools = True, True, dict(DEFAULT_POLICY)
    for layer in (global_config, profile_config):
        if layer is None:
            continue
        if layer.enabled is not None:
            enabled = layer.enabled
        if layer.native is not None:
            native = layer.native
        tools.update({k: v for k, v in layer.tools.items() if k in DEFAULT_POLICY})
    return ClientToolsSettings(enabled, native, tools)
