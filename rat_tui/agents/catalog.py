"""Provides the agent catalog: which ACP agents rat knows how to start, and which are installed.

Four sources, later ones merging over earlier ones by agent id:

1. built-in entries shipped in ``rat_tui/agents/manifests/*.json``;
2. the live ACP registry's index (agents/registry.py: fetched at most daily, cached), over those;
3. the user's manifests in ``<config dir>/agents/``: ``*.json`` files or ``*/agent.json`` (the
   layout of the registry repository), each one agent or a whole registry index
   (``{"version": ..., "agents": [...]}``);
4. the ``[agents.NAME]`` profiles of config.toml (they win: their command replaces the entry's).

Manifests use the ACP agent-registry format (github.com/agentclientprotocol/registry, FORMAT.md):
``id``, ``name``, ``description``, ``distribution`` with ``npx`` / ``uvx`` (``package``, ``cmd``,
``args``, ``env``) and per-platform ``binary`` targets (``archive``, ``cmd``, ``args``, ``env``).
The reader is tolerant: unknown fields are ignored, a bad optional field is dropped, and a
manifest that cannot be read is skipped with a problem naming its file. rat adds one optional
block, ``"rat"``, for what the registry cannot say: ``command`` and ``args`` (the program an
installed agent runs as), ``env``, ``install`` (what to run to install it), ``aliases`` (other
names for ``rat --agent``), ``missingFileEmpty`` (see AgentProfile.missing_file_empty) and
``protocol`` (2: ask for ACP v2, see AgentProfile.protocol).

"Installed" means the agent's own program is on PATH (``rat.command``, the binary target's
``cmd``, or a config profile's command). We never download a binary archive. An agent that is not
installed but has an ``npx`` or ``uvx`` distribution is still runnable when ``npx`` / ``uvx`` is
on PATH: the package is fetched on first run (status "fetch"). Otherwise it is "missing" and the
UI shows its install hint.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from .spec import AgentSpec, profile_spec

if TYPE_CHECKING:
    from .registry import RegistrySnapshot
from ..config import AgentProfile, Config

log = logging.getLogger("rat.catalog")

INSTALLED = "installed"
FETCH = "fetch"
MISSING = "missing"

Which = Callable[[str], "str | None"]


class ManifestError(ValueError):
    """A manifest that cannot describe an agent (not an object, no id, ...)."""


@dataclass(frozen=True)
class Launch:
    """One way to start an agent: `how` is "command", "binary", "profile", "npx", "uvx" or "remote" (a
    profile's `url`: the agent runs elsewhere, `argv` is its URL)."""

    how: str
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def program(self) -> str:
        return self.argv[0]

    @property
    def fetches(self) -> bool:
        """True for npx / uvx: the program is the package runner, the agent is downloaded on first run."""
        return self.how in ("npx", "uvx")

    @property
    def command_line(self) -> str:
        return " ".join(_quote(part) for part in self.argv)


@dataclass(frozen=True)
class CatalogAgent:
    """One agent the catalog knows, with every way it can be launched, best first."""

    id: str
    name: str
    description: str = ""
    launches: tuple[Launch, ...] = ()
    install: str | None = None
    aliases: tuple[str, ...] = ()
    missing_file_empty: bool = False
    protocol: int = 1
    """The ACP version to ask for (manifest `rat.protocol`: 2 for agents proven on ACP v2)."""
    source: str = "built-in"
    """Where it came from: "built-in", a manifest's path, or "config"."""
    website: str | None = None
    profile: AgentProfile | None = field(default=None, compare=False)
    """The config profile this entry stands for (source "config"): spec_for starts it as the profile."""

    @property
    def install_hint(self) -> str:
        """What to tell a user who does not have it."""
        if self.install:
            return self.install
        if self.website:
            return f"see {self.website}"
        return "no install hint is known; add a profile to config.toml"

    def names(self) -> tuple[str, ...]:
        return (self.id, *self.aliases)


@dataclass(frozen=True)
class Availability:
    """Whether an agent can start here, and how."""

    status: str  # INSTALLED, FETCH or MISSING
    launch: Launch | None

    @property
    def runnable(self) -> bool:
        return self.launch is not None

    @property
    def label(self) -> str:
        if self.status == INSTALLED:
            return "installed"
        if self.status == FETCH and self.launch is not None:
            return f"via {self.launch.program} (fetched on first run)"
        return "not installed"


def check(agent: CatalogAgent, which: Which = shutil.which) -> Availability:
    """Installed if one of the agent's own programs is on PATH; else runnable through npx/uvx; else missing."""
    for launch in agent.launches:
        if launch.how == "remote" or (not launch.fetches and _on_path(launch.program, which)):
            return Availability(INSTALLED, launch)  # (a remote agent is there to connect to: nothing to install)
    for launch in agent.launches:
        if launch.fetches and _on_path(launch.program, which):
            return Availability(FETCH, launch)
    return Availability(MISSING, None)


def _on_path(program: str, which: Which) -> bool:
    if os.sep in program or (os.altsep and os.altsep in program):
        path = os.path.expanduser(program)
        return os.path.isfile(path) and os.access(path, os.X_OK)
    return which(program) is not None


def _quote(part: str) -> str:
    if part and all(c.isalnum() or c in "@%+=:,./-_" for c in part):
        return part
    return "'" + part.replace("'", "'\\''") + "'"


# -- reading manifests ------------------------------------------------------------------------


def platform_key() -> str:
    """This machine in the registry's binary target names: linux-x86_64, darwin-aarch64, ..."""
    system = {"linux": "linux", "darwin": "darwin", "windows": "windows"}.get(platform.system().lower(), "")
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return f"{system}-{machine}"


def _strings(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def _env(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items() if isinstance(v, str)}
    return {}


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _package_launch(kind: str, spec: Any) -> Launch | None:
    """`npx <package> [args]`, or `npx --package <package> <cmd> [args]` (uvx: `--from`)."""
    if not isinstance(spec, dict) or not _text(spec.get("package")):
        return None
    package = str(spec["package"]).strip()
    args = _strings(spec.get("args")) or []
    cmd = _text(spec.get("cmd"))
    if cmd:
        argv = (kind, "--package" if kind == "npx" else "--from", package, cmd, *args)
    else:
        argv = (kind, package, *args)
    return Launch(kind, argv, _env(spec.get("env")))


def _binary_launch(spec: Any) -> Launch | None:
    """The target for this platform, run by its program name (installed on PATH), never downloaded."""
    target = spec.get(platform_key()) if isinstance(spec, dict) else None
    if not isinstance(target, dict) or not _text(target.get("cmd")):
        return None
    program = os.path.basename(str(target["cmd"]).replace("\\", "/"))
    if program.lower().endswith(".exe") and os.name != "nt":
        program = program[:-4]
    args = _strings(target.get("args")) or []
    return Launch("binary", (program, *args), _env(target.get("env")))


def parse_manifest(data: Any, source: str = "built-in") -> CatalogAgent:
    """One agent from a registry-format manifest; raises ManifestError if it names no agent."""
    if not isinstance(data, dict):
        raise ManifestError("not a JSON object")
    agent_id = _text(data.get("id"))
    if agent_id is None:
        raise ManifestError('no "id"')
    extra = data.get("rat") if isinstance(data.get("rat"), dict) else {}
    launches: list[Launch] = []
    command = _text(extra.get("command"))
    if command:
        launches.append(Launch("command", (command, *(_strings(extra.get("args")) or [])), _env(extra.get("env"))))
    distribution = data.get("distribution") if isinstance(data.get("distribution"), dict) else {}
    binary = _binary_launch(distribution.get("binary"))
    if binary:
        launches.append(binary)
    for kind in ("npx", "uvx"):
        launch = _package_launch(kind, distribution.get(kind))
        if launch:
            launches.append(launch)
    return CatalogAgent(
        id=agent_id,
        name=_text(data.get("name")) or agent_id,
        description=_text(data.get("description")) or "",
        launches=tuple(launches),
        install=_text(extra.get("install")),
        aliases=tuple(a for a in (_strings(extra.get("aliases")) or []) if a.strip()),
        missing_file_empty=extra.get("missingFileEmpty") is True,
        protocol=2 if extra.get("protocol") == 2 else 1,
        source=source,
        website=_text(data.get("website")) or _text(data.get("repository")),
    )


def _manifests_in(path: Path) -> list[Any]:
    """The agent objects in one file: the file itself, or the `agents` of a registry index."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ManifestError(f"not valid JSON ({error})") from None
    if isinstance(data, dict) and isinstance(data.get("agents"), list) and "id" not in data:
        return list(data["agents"])
    return [data]


def builtin_dir() -> Path:
    return Path(__file__).resolve().parent / "manifests"


def user_agents_dir() -> Path:
    """The user's own manifests: `agents/` beside config.toml."""
    return paths.config_dir() / "agents"


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted([*folder.glob("*.json"), *folder.glob("*/agent.json")])


def _read_folder(folder: Path, source: str | None, problems: list[str]) -> list[tuple[dict, str]]:
    """Every readable manifest object in `folder`, with the source to show for it."""
    found: list[tuple[dict, str]] = []
    for path in _files(folder):
        where = source or str(path)
        try:
            items = _manifests_in(path)
        except (OSError, UnicodeDecodeError, ManifestError) as error:
            problems.append(f"{path}: {error}; agent manifest skipped")
            continue
        for index, item in enumerate(items):
            try:
                parse_manifest(item, where)
            except ManifestError as error:
                label = f"{path}" + (f" (agent {index + 1})" if len(items) > 1 else "")
                problems.append(f"{label}: {error}; agent manifest skipped")
                continue
            found.append((item, where))
    return found


def _merge(base: dict, over: dict) -> dict:
    """A user manifest over a built-in one: its fields win, the `rat` block merges key by key."""
    merged = {**base, **over}
    base_extra = base.get("rat") if isinstance(base.get("rat"), dict) else {}
    over_extra = over.get("rat") if isinstance(over.get("rat"), dict) else {}
    merged["rat"] = {**base_extra, **over_extra}
    return merged


# -- the catalog ------------------------------------------------------------------------------


@dataclass
class Catalog:
    """Every known agent (config profiles first, then the rest by name) and the problems met reading them."""

    agents: list[CatalogAgent]
    problems: list[str] = field(default_factory=list)
    source_note: str = "bundled snapshot"
    """Where the agent list comes from: "live registry", "cached registry (…)", or "bundled snapshot" (and why)."""

    def find(self, name: str) -> CatalogAgent | None:
        """The agent with this id, else the first one with this alias."""
        for agent in self.agents:
            if agent.id == name:
                return agent
        for agent in self.agents:
            if name in agent.aliases:
                return agent
        return None


def profile_launch(profile: AgentProfile) -> Launch:
    if profile.url:
        return Launch("remote", (profile.url,))
    # A bare command name stays bare: it is looked up on PATH when the agent is spawned.
    return Launch("profile", (os.path.expanduser(profile.command), *profile.args), dict(profile.env))


def load_catalog(
    config: Config | None = None, user_dir: Path | None = None, builtins: Path | None = None,
    registry: RegistrySnapshot | None = None,
) -> Catalog:
    """Read the built-in entries, the registry's (over them), the user's manifests and the config's
    profiles; never raises."""
    problems: list[str] = []
    raw: dict[str, tuple[dict, str]] = {}
    for item, source in _read_folder(builtins or builtin_dir(), "built-in", problems):
        raw[str(item["id"]).strip()] = (item, source)
    if registry is not None:  # the live index wins over our snapshot; our `rat` block (local commands) stays
        problems.extend(registry.problems)
        for item in registry.agents:
            key = str(item["id"]).strip()
            base = raw.get(key, ({}, "registry"))[0]
            raw[key] = (_merge(base, item), "registry")
    for item, source in _read_folder(user_dir or user_agents_dir(), None, problems):
        key = str(item["id"]).strip()
        base = raw.get(key, ({}, source))[0]
        raw[key] = (_merge(base, item), source)
    agents = {key: parse_manifest(item, source) for key, (item, source) in raw.items()}
    profiles: list[CatalogAgent] = []
    for name, profile in (config.agents if config else {}).items():
        known = agents.get(name) or next((a for a in agents.values() if name in a.aliases), None)
        launch = profile_launch(profile)
        if known is not None:
            del agents[known.id]
            aliases = tuple(dict.fromkeys(a for a in (*known.names(),) if a != name))
            profiles.append(replace(
                known, id=name, name=profile.title or known.name, launches=(launch,), aliases=aliases,
                missing_file_empty=profile.missing_file_empty, source="config", profile=profile,
            ))
        else:
            profiles.append(CatalogAgent(
                id=name, name=profile.title or name, launches=(launch,),
                missing_file_empty=profile.missing_file_empty, source="config", profile=profile,
            ))
    for problem in problems:
        log.warning("%s", problem)
    rest = sorted(agents.values(), key=lambda agent: agent.name.lower())
    note = registry.note if registry is not None and (registry.agents or registry.note != "bundled snapshot") \
        else "bundled snapshot"
    return Catalog([*profiles, *rest], problems, note)


def spec_for(agent: CatalogAgent, availability: Availability | None = None) -> Any:
    """The AgentSpec (cli.py) that starts `agent` the way `availability` found, or None if it cannot."""

    availability = availability or check(agent)
    if availability.launch is None:
        return None
    if agent.profile is not None:  # a profile keeps its MCP servers, defaults and client tools
        return profile_spec(agent.id, agent.profile)
    return AgentSpec(
        name=agent.id,
        argv=list(availability.launch.argv),
        env=dict(availability.launch.env),
        is_demo=False,
        missing_file_empty=agent.missing_file_empty,
        protocol=agent.protocol,
    )
