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
    remote: RemoteSpec | None = None
    """Where the agent runs when it is not a local process (`rat connect URL`, a profile's `url`)."""


@dataclass(frozen=True)
class RemoteSpec:
    """A remote agent's address and how to reach it; the token itself is read from `token_env` when the session
    connects, so no spec, argv, log or journal ever holds it."""

    url: str
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # values may be secrets: never shown
    token_env: str | None = None
    cwd: str | None = None
    """The working directory on the agent's side (else the server's metadata says, else the local one)."""
    insecure: bool = False
    shared_cwd: bool = False
    """The agent's directory is this machine's too (a mount): rat offers its file system and terminals."""

    def endpoint(self) -> Any:
        """The Endpoint to connect to, the token read now; raises RemoteError when its variable is unset."""
        from ..protocol.remote_link import Endpoint, RemoteError

        token = None
        if self.token_env:
            token = os.environ.get(self.token_env)
            if not token:
                raise RemoteError(f"The environment variable {self.token_env}, which should hold the token for "
                                  f"{self.url}, is not set.", retry=False)
        return Endpoint(self.url, self.headers, token=token, insecure=self.insecure)


def parse_header(raw: str) -> tuple[str, str]:
    """`Name: value` as a header pair; raises ValueError naming what is wrong (never the value)."""
    name, colon, value = raw.partition(":")
    if not colon or not name.strip() or any(c in name for c in " \t\r\n") or any(c in value for c in "\r\n"):
        raise ValueError(f"not a header of the form 'Name: value': {name.strip()[:40]!r}")
    return name.strip(), value.strip()


def remote_spec(name: str, remote: RemoteSpec, protocol: int = 1) -> AgentSpec:
    """The spec of a remote agent: no command (its `argv` names the URL for pickers and the journal)."""
    return AgentSpec(name=name, argv=[remote.url], env={}, is_demo=False, protocol=protocol, remote=remote)


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
    where = spec.remote.url if spec.remote is not None else short_command(spec.argv)  # a URL is not a path
    return f"{spec.title or spec.name}  —  {where}{version}"


def _overrides(client_tools: Any) -> Any:
    """A profile's `client_tools` (config.ClientToolsConfig) when it sets anything, else None."""
    ct = client_tools
    return ct if ct.enabled is not None or ct.native is not None or ct.tools else None


def profile_spec(name: str, profile: AgentProfile) -> AgentSpec:
    """The AgentSpec of config profile `name`: its command, env, MCP servers, defaults and client tools."""
    # A bare command name stays bare: it is looked up on PATH when the agent is spawned.
    argv = [os.path.expanduser(profile.command), *profile.args] if not profile.url else [profile.url]
    return AgentSpec(
        name=name, argv=argv, env=dict(profile.env), is_demo=False, missing_file_empty=profile.missing_file_empty,
        mcp_servers=tuple(profile.mcp_servers), defaults=dict(profile.defaults),
        client_tools=_overrides(profile.client_tools),
        protocol=profile.protocol,
        system_prompt=profile.system_prompt, system_prompt_mode=profile.system_prompt_mode,
        additional_directories=tuple(profile.additional_directories), title=profile.title,
        remote=_profile_remote(profile),
    )


def _profile_remote(profile: AgentProfile) -> RemoteSpec | None:
    if not profile.url:
        return None
    return RemoteSpec(url=profile.url, headers=tuple(profile.headers.items()), token_env=profile.token_env,
                      cwd=profile.cwd, insecure=profile.insecure, shared_cwd=profile.shared_cwd)
