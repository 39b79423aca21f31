"""Provides AgentSpec: the agent process a session starts, and the specs of the demo agent and config profiles.

Free of Textual and pydantic (config types are only named for type checkers).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import AgentProfile, Config

DEMO_NAME = "demo"


@dataclass(frozen=True)
class AgentSpec:
    """The agent process to start: what `AgentSession` needs (it matches its AgentCommand)."""

    name: str
    argv: list[str]
    env: dict[str, str]
    is_demo: bool
    missing_file_empty: bool = False
    mcp_servers: tuple[Any, ...] = ()
    """The profile's own MCP servers (config.McpServerConfig); the global ones are added by the app."""
    defaults: dict[str, Any] = field(default_factory=dict)
    """The profile's session defaults (`[agents.NAME.defaults]`)."""
    client_tools: Any = None
    """The profile's `[agents.NAME.client_tools]` overrides (config.ClientToolsConfig), if any."""
    protocol: int = 1
    """The ACP version to ask for: 1, or 2 (ACP v2 Preview; v1 is spoken when the agent answers v1)."""
    system_prompt: str | None = None
    """The profile's instructions (session/setup.py joins them with the global and project ones)."""
    system_prompt_mode: str = "append"
    additional_directories: tuple[str, ...] = ()
    title: str | None = None
    """The profile's `title` (the name shown in pickers), if it set one."""


def demo_agent() -> AgentSpec:
    """The embedded demo agent, run as a real subprocess with this interpreter."""
    return AgentSpec(name=DEMO_NAME, argv=[sys.executable, "-m", "rat_tui.demo"], env={}, is_demo=True)


def agent_choices(config: Config, launched: AgentSpec) -> list[AgentSpec]:
    """The agents a new tab can start: the one rat was launched with, the demo, every profile."""
    choices = [launched, demo_agent(), *(profile_spec(name, config.agents[name]) for name in config.agents)]
    # Two profiles of one command line are two choices when anything else differs (a protocol, an env, the
    # defaults): only a spec that would start the very same agent in the very same way is dropped.
    unique: list[AgentSpec] = []
    for spec in choices:
        if not any(replace(spec, name=kept.name, title=kept.title) == kept for kept in unique):
            unique.append(spec)
    return unique


def short_command(argv: list[str]) -> str:
    """A command line as a person reads it: each path by its file name (`node …/dist/index.js` is `node
    index.js`), so a picker row shows which program runs without a full Node install path."""
    return " ".join(os.path.basename(arg) if os.sep in arg and not arg.startswith("-") else arg for arg in argv)


def spec_label(spec: AgentSpec) -> str:
    """How a picker names an agent: its profile's title (else its key), its command, its ACP version if 2."""
    version = "  · ACP v2" if spec.protocol == 2 else ""
    return f"{spec.title or spec.name}  —  {short_command(spec.argv)}{version}"


def _overrides(client_tools: Any) -> Any:
    """A profile's `client_tools` (config.ClientToolsConfig) when it sets anything, else None."""
    ct = client_tools
    return ct if ct.enabled is not None or ct.native is not None or ct.tools else None


def profile_spec(name: str, profile: AgentProfile) -> AgentSpec:
    """The AgentSpec of config profile `name`: its command, env, MCP servers, defaults and client tools."""
    # A bare command name stays bare: it is looked up on PATH when the agent is spawned.
    argv = [os.path.expanduser(profile.command), *profile.args]
    return AgentSpec(
        name=name, argv=argv, env=dict(profile.env), is_demo=False, missing_file_empty=profile.missing_file_empty,
        mcp_servers=tuple(profile.mcp_servers), defaults=dict(profile.defaults),
        client_tools=_overrides(profile.client_tools),
        protocol=profile.protocol,
        system_prompt=profile.system_prompt, system_prompt_mode=profile.system_prompt_mode,
        additional_directories=tuple(profile.additional_directories), title=profile.title,
    )
