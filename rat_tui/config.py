"""Provides the shape of config.toml (dataclasses) and `load_config`, which never raises.

A bad config file must not stop the user from working: every problem becomes a plain message
(shown as a toast and logged) and the bad part alone falls back to its default. A well-formed file is
built without pydantic (typed_data.build, nothing slow before the first frame); one that is not is
validated by pydantic models of the same classes (typed_data.pydantic_model), whose messages say what is wrong.
"""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from dataclasses import dataclass, field

from . import paths
from .typed_data import Unsure, build, from_model, pydantic_model

# Unknown keys are forbidden at validation (typed_data.pydantic_model) so pydantic reports them with their
# full path; the loader then turns those reports into warnings and drops the keys instead of failing.
# Field docstrings document the keys (tests/test_config.py checks every field has one).


@dataclass
class McpServerConfig:
    """One MCP server for the agent to connect to, passed in session/new (and load/resume)."""

    name: str
    """Name the agent knows the server by; a profile's server replaces a global one of the same name."""
    type: str = "stdio"
    """Transport: "stdio" (every agent), "http" or "sse" (only agents whose mcpCapabilities say so).
    Servers of another type, or one the agent cannot take, are skipped with a warning."""
    command: str | None = None
    """stdio: the server's program; a bare name is looked up on PATH, `~` is expanded (sent absolute)."""
    args: list[str] = field(default_factory=list)
    """stdio: arguments of the command."""
    env: dict[str, str] = field(default_factory=dict)
    """stdio: environment variables for the server; `${NAME}` in a value is taken from rat's environment."""
    url: str | None = None
    """http and sse: the server's URL."""
    headers: dict[str, str] = field(default_factory=dict)
    """http and sse: HTTP headers; `${NAME}` in a value is taken from rat's environment."""
    enabled: bool = True
    """false keeps the entry but does not send it (a profile can switch off a global server by name)."""


@dataclass
class ClientToolsConfig:
    """rat-tui's own MCP server (ask_user, show_file, notify, list_sessions, read_session); unset keys inherit."""

    enabled: bool | None = None
    """Offer the client-hosted tools to the agent (default true; a profile can switch them off)."""
    native: bool | None = None
    """Use the unstable MCP-over-ACP transport when the agent advertises `mcpCapabilities.acp` (default
    true); false always uses the stdio bridge (a shim process relaying to rat over a private socket)."""
    tools: dict[Literal["ask_user", "show_file", "notify", "list_sessions", "read_session"],
                Literal["allow", "ask", "off"]] = field(default_factory=dict)
    """Per tool: "allow" (run at once), "ask" (a permission question first) or "off" (not offered).
    Defaults: ask_user, show_file and notify "allow"; list_sessions and read_session "ask"."""


@dataclass
class AgentProfile:
    """How to start one ACP agent."""

    command: str = ""
    """Program to run: a bare name (looked up on PATH at spawn time) or a path (`~` expanded). Not needed
    with `url`."""
    args: list[str] = field(default_factory=list)
    """Arguments passed to the command."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables for the agent process, on top of rat's own environment."""
    title: str | None = None
    """Name shown in the UI; defaults to the profile's key."""
    missing_file_empty: bool = False
    """Answer a read of a missing file with empty content instead of an error (Gemini CLI needs this
    to create new files)."""
    mcp_servers: list[McpServerConfig] = field(default_factory=list)
    """MCP servers for this agent only, after the global ones."""
    defaults: dict[str, str | bool] = field(default_factory=dict)
    """Session settings applied when a session starts: `model`, `mode`, or a config option id (or
    category) = a value id or name (true/false for a boolean option)."""
    client_tools: ClientToolsConfig = field(default_factory=ClientToolsConfig)
    """This agent's overrides of the global `[client_tools]`."""
    protocol: Literal[1, 2] = 1
    """The ACP version to ask the agent for: 1, or 2 (ACP v2 Preview, behind this key); an agent that
    answers v1 is spoken to in v1."""
    system_prompt: str | None = None
    """Instructions sent as this agent's system prompt, after the global `system_prompt` and before
    the project's `.rat/instructions.md` (only to agents that advertise a client system prompt)."""
    system_prompt_mode: Literal["append", "override"] = "append"
    """`append` adds the instructions to the agent's own system prompt; `override` replaces it, where
    the agent advertises that (else they are appended)."""
    additional_directories: list[str] = field(default_factory=list)
    """Directories besides the session's own that this agent may use (see the global key)."""
    url: str | None = None
    """A remote agent's ACP endpoint instead of a command: `ws://`/`wss://` (WebSocket; acpremote's
    `ws://HOST:PORT/acp/ws`) or `http://`/`https://` (Streamable HTTP, e.g. `qwen serve`)."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra HTTP headers for a remote agent (never logged)."""
    token_env: str | None = None
    """The environment variable holding a remote agent's bearer token (the token itself never goes in the
    config, argv, the log or the journal)."""
    cwd: str | None = None
    """A remote agent's working directory on its own machine (default: what its server says, else the local)."""
    insecure: bool = False
    """Skip TLS certificate checks for this remote agent (a lab box with a self-signed certificate only)."""
    shared_cwd: bool = False
    """The remote agent's working directory is shared with this machine: offer it rat's file system and
    terminals (off by default: its files are on its own machine)."""


@dataclass
class HistoryConfig:
    """The local history journal (every session's messages, drafts and settings) and its retention."""

    enabled: bool = True
    """Journal every session to `history.sqlite3` in the user data dir; off means nothing is written."""
    retention_days: float | None = field(default=90, metadata={"gt": 0})
    """Sessions unused for longer are deleted at startup; unset keeps them forever."""
    max_sessions: int | None = field(default=1000, metadata={"gt": 0})
    """At most this many sessions are kept (the least recently used go first); unset means no limit."""
    max_megabytes: float | None = field(default=500, metadata={"gt": 0})
    """The recorded messages of all sessions are kept under this size (oldest sessions go first)."""
    export_dir: str | None = None
    """Where Markdown and journal exports are written (`~` expanded); unset means `exports/` in the data dir."""


NotifyEvent = Literal["permission", "question", "turn_done", "agent_exited"]


@dataclass
class NotificationsConfig:
    """Notifications outside the app when an agent needs you or is done (`[notifications]`).

    Sent only when the event's tab is not the visible one or the terminal window is not focused."""

    events: list[NotifyEvent] = field(default_factory=lambda: ["permission", "question", "turn_done", "agent_exited"])
    """Which events notify: "permission" (a permission request), "question" (a form, link or ask_user),
    "turn_done" (a turn ended), "agent_exited" (an agent process ended by itself). [] turns them off."""
    agents: dict[str, list[NotifyEvent]] = field(default_factory=dict)
    """Per agent (profile or agent name): its own event list instead of `events`."""
    terminal: Literal["auto", "osc9", "osc777", "osc99", "bell", "none"] = "auto"
    """The terminal's notification: "auto" picks from the environment (kitty: OSC 99; iTerm2, WezTerm,
    Windows Terminal, ghostty: OSC 9; foot, urxvt, VTE: OSC 777; else the bell); wrapped for tmux inside tmux."""
    desktop: Literal["auto", "never"] = "auto"
    """"auto": also a desktop notification through `notify-send` when a display is reachable."""
    title: bool = True
    """Keep the terminal title (OSC 2) on the sessions' state and the number waiting on you."""


@dataclass
class RegistryConfig:
    """The live ACP agent registry the agent picker reads (`[registry]`)."""

    enabled: bool = True
    """Fetch the registry's index (at most once a day, cached); false: only the bundled manifests."""
    url: str = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"
    """Where the index is (the registry's documented address)."""


@dataclass
class WorktreesConfig:
    """Sessions in a fresh git worktree (Ctrl+N, "In a fresh git worktree")."""

    dir: str | None = None
    """Folder the worktrees are made in (`~` expanded); unset means `worktrees/` in the data dir."""


@dataclass
class ImagesConfig:
    """Images from the agent and image files in the preview, drawn by the terminal (rat_tui/ui/images.py)."""

    mode: Literal["auto", "kitty", "sixel", "halfcell", "off"] = "auto"
    """auto asks the terminal at startup (kitty graphics or sixel, else the `[image: …]` placeholder); kitty,
    sixel or halfcell (coloured half blocks) force one; off always shows the placeholder."""


@dataclass
class UiConfig:
    """Layout (`[ui]`)."""

    max_width: int = field(default=120, metadata={"ge": 0})
    """The transcript's text (messages, Markdown, tool cards) is laid out at most this many columns wide,
    as a column in the middle; 0: the whole width of the terminal."""


# How far below rat's own CPU priority its agents run (nice steps; `agent_nice`). Each agent starts in a
# session of its own (protocol/transport.py), which Linux's autogroup scheduling makes a group of its own,
# weighing as much as rat's whole process: with twenty agents streaming on 2 cores, rat's loop lost the
# CPU for 12-16 ms at a time in the middle of reading a pipe (0.2 ms of it CPU time), and the first key typed
# into the flood echoed after over 50 ms in 16 runs of 21 (tabs20, bench/stress.py; up to 95 ms). At
# 10, in 4 runs of 19 (up to 80 ms); at 19, in 1 of 16 (51 ms). The single-agent floods were no slower at 19
# (4 alternating pairs against 10). While the CPU is short, an agent and what it starts itself then weigh
# 15 against a normal program's 1024 (the kernel's weight for nice 19); with cores to spare nothing changes.
AGENT_NICE = 19


@dataclass
class Config:
    """Everything config.toml can set; every field has a default, so an empty file is valid."""

    default_agent: str | None = None
    """Profile started when neither `--agent` nor `-- COMMAND` is given; unset means the demo agent."""
    agents: dict[str, AgentProfile] = field(default_factory=dict)
    """Agent profiles by name, as chosen with `--agent NAME`."""
    outside_files: Literal["deny", "ask"] = "deny"
    """An agent's file access outside the session's directories: refused at once, or asked about."""
    theme: str = "rat-dark"
    """Theme name: a bundled theme, one from the user themes dir, or a Textual built-in."""
    follow: bool = False
    """Follow the agent's files (F5) from the start; F5 saves the choice here."""
    plan_panel: bool = True
    """Show the plan panel (F2); F2 saves the choice here."""
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id -> comma-separated keys, as accepted by Textual's `App.set_keymap`."""
    rpc_log: str | None = None
    """Path of a JSONL log of all JSON-RPC traffic (`--rpc-log` overrides it); unset means none."""
    mcp_servers: list[McpServerConfig] = field(default_factory=list)
    """MCP servers passed to every agent (`[[mcp_servers]]`); profiles add their own."""
    history: HistoryConfig = field(default_factory=HistoryConfig)
    """The local history journal: on/off, retention, export folder (`[history]`)."""
    request_timeout_seconds: float = field(default=120.0, metadata={"gt": 0})
    """A request the agent leaves unanswered this long is reported, with the offer to cancel it or
    restart the agent; a turn (`session/prompt`) is reported when the agent sends nothing this long."""
    agent_nice: int = field(default=AGENT_NICE, metadata={"ge": 0, "le": 19})
    """How much lower than rat's own the CPU priority of every agent (and of what it starts itself) is: with
    the machine busy, keys and the screen go first. 0 leaves agents at rat's priority; 19 is the lowest.
    Commands run in rat's terminals for an agent keep rat's priority."""
    client_tools: ClientToolsConfig = field(default_factory=ClientToolsConfig)
    """rat-tui's own MCP server of client-side tools (`[client_tools]`); profiles may override it."""
    notifications: NotificationsConfig = field(default_factory=NotificationsConfig)
    """Notifications outside the app: terminal, desktop, window title (`[notifications]`)."""
    registry: RegistryConfig = field(default_factory=RegistryConfig)
    """The live agent registry behind the agent picker (`[registry]`)."""
    worktrees: WorktreesConfig = field(default_factory=WorktreesConfig)
    """Where sessions in a fresh git worktree are made (`[worktrees]`)."""
    images: ImagesConfig = field(default_factory=ImagesConfig)
    """How images are drawn in the terminal (`[images]`)."""
    ui: UiConfig = field(default_factory=UiConfig)
    """Layout: the transcript's readable width (`[ui]`)."""
    system_prompt: str | None = None
    """Instructions sent to every agent as its session's system prompt, in append mode (the agent's
    own prompt stays), where the agent advertises it; a project adds its own in `.rat/instructions.md`."""
    additional_directories: list[str] = field(default_factory=list)
    """Directories besides the session's own (relative ones to it) that agents may read and write;
    sent as `additionalDirectories` where the agent advertises it. `--add-dir DIR` adds more."""


# Top-level tables whose entries are independent: a bad entry is dropped alone, not the table.
_TABLES_OF_ENTRIES = {"agents", "keymap", "mcp_servers", "history"}
# Parts of a profile whose entries are independent too: a bad one is dropped alone, not the profile.
_PROFILE_ENTRIES = {"mcp_servers", "defaults", "client_tools"}


def load_config(path: Path | None = None) -> tuple[Config, list[str]]:
    """Load config.toml; returns the config and the problems found, never raises.

    `path` is the file named with `--config`; None means $RAT_CONFIG or the default file. A missing
    default file is normal (no problem); a missing file the user named is reported.
    """
    explicit = path is not None or paths.config_file_is_explicit()
    path = Path(path).expanduser() if path is not None else paths.config_file()
    text = ""
    try:
        if not path.exists():
            if path.is_symlink():  # exists() follows links: a loop or a dangling link reads as missing
                return Config(), [f"{path}: the config file is a symbolic link that leads nowhere (a loop, "
                                  "or its target is missing); using the defaults"]
            return Config(), ([f"Config file not found: {path}"] if explicit else [])
        if path.is_dir():
            return Config(), [f"{path}: is a directory, not a config file; using the defaults"]
        text = path.read_bytes().decode("utf-8")
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return Config(), [f"{path}: TOML syntax error: {_with_line(str(error), text)}; using the defaults"]
    except RecursionError:
        return Config(), [f"{path}: the config file nests tables or arrays too deeply to read; using the defaults"]
    except (OSError, UnicodeDecodeError) as error:
        return Config(), [f"{path}: cannot read the config file ({error}); using the defaults"]
    try:
        config, problems = validate_config(data, text)
    except RecursionError:
        return Config(), [f"{path}: the config file nests tables or arrays too deeply to check; using the defaults"]
    return config, [f"{path}: {problem}" for problem in problems]


_TABLE_ARRAY = re.compile(r"\[\[\s*(.+?)\s*\]\]")
_TABLE = re.compile(r"\[\s*(.+?)\s*\]")
_KEY = re.compile(r"""((?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+))*)\s*=""")
_KEY_PART = re.compile(r""""([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+)""")


def _key_path(text: str) -> tuple[str, ...]:
    return tuple(next(part for part in match.groups() if part is not None) for match in _KEY_PART.finditer(text))


def key_lines(text: str) -> dict[tuple[Any, ...], int]:
    """Where the file defines each table and key (its path, array entries by index) -> line number; a
    best effort for the usual layout (`key = ` lines under `[table]` and `[[array]]` headers), so a
    problem found in the parsed data can say where it is (keys inside inline tables name their table)."""
    found: dict[tuple[Any, ...], int] = {}
    table: tuple[Any, ...] = ()
    entries: dict[tuple[str, ...], int] = {}
    in_string = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        quotes = bool(line.count('"""') % 2 or line.count("'''") % 2)  # a multi-line string opens or closes
        if in_string:
            in_string = not quotes
            continue
        in_string = quotes
        if not line or line.startswith("#"):
            continue
        if match := _TABLE_ARRAY.match(line):
            path = _key_path(match.group(1))
            entries[path] = entries.get(path, -1) + 1
            table = (*path, entries[path])
        elif line.startswith("[") and (match := _TABLE.match(line)):
            table = _key_path(match.group(1))
        elif match := _KEY.match(line):
            found.setdefault((*table, *_key_path(match.group(1))), number)
            continue
        else:
            continue
        found.setdefault(table, number)
    return found


def _line_of(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> str:
    """ "line N: " for the deepest part of `loc` the file defines on a line of its own, else ""."""
    for end in range(len(loc), 0, -1):
        number = lines.get(tuple(loc[:end]))
        if number is not None:
            return f"line {number}: "
    return ""


def problem_severity(problem: str) -> str:
    """"error" for a problem that set the whole config file aside (its settings are not in effect),
    else "warning" (one value or entry was dropped, the rest applies)."""
    whole_file = "; using the defaults" in problem or problem.startswith("Config file not found")
    return "error" if whole_file else "warning"


def _with_line(message: str, text: str) -> str:
    # tomllib says "(at line N, column M)" except for errors at the very end of the file.
    if "(at end of document)" in message:
        return message.replace("(at end of document)", f"(at end of document, line {len(text.splitlines())})")
    return message


def validate_config(data: dict[str, Any], text: str = "") -> tuple[Config, list[str]]:
    """Validate parsed TOML, dropping only what is invalid; returns the config and the problems (each
    with the line of `text`, the file, that holds the value, where it can be found)."""
    config, problems = _validated(data, text)
    return config, problems + _drop_agentless(config, text)


def _drop_agentless(config: Config, text: str) -> list[str]:
    """A profile names a local agent (`command`) or a remote one (`url`); one with neither is skipped."""
    problems = []
    for name in [name for name, profile in config.agents.items() if not profile.command and not profile.url]:
        del config.agents[name]
        where = _line_of(key_lines(text), ("agents", name)) if text else ""
        problems.append(f"{where}agents.{name}.command: Field required: a profile needs `command` (a local agent) "
                        f"or `url` (a remote one) (agent profile {name!r} skipped)")
    return problems


def _validated(data: dict[str, Any], text: str) -> tuple[Config, list[str]]:
    try:
        return build(Config, data), []
    except Unsure:  # something is wrong (or unusual): pydantic says what, and the loop below drops it
        pass
    from pydantic import ValidationError

    model = pydantic_model(Config)
    data = copy.deepcopy(data)  # pruned below; the caller's dict stays as it was
    problems: list[str] = []
    lines = key_lines(text) if text else {}
    # Each pass removes at least one offending item, so this ends; the bound is a safety net.
    for _ in range(100):
        try:
            return from_model(Config, model.model_validate(data)), problems
        except ValidationError as error:
            dropped = False
            items = error.errors()
            problems.extend(_line_of(lines, tuple(item["loc"])) + _describe(item) for item in items)
            targets = {_target(tuple(item["loc"]), item["type"] == "extra_forbidden") for item in items}
            # Last first, so that removing a list entry does not shift the ones still to remove.
            for target in sorted(targets, key=_sort_key, reverse=True):
                dropped |= _drop(data, target)
            if not dropped:
                break
    return Config(), [*problems, "could not repair the config; using the defaults"]


def _dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _sort_key(loc: Any) -> tuple[Any, ...]:
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in loc)


def _describe(item: Any) -> str:
    loc = tuple(item["loc"])
    if item["type"] == "extra_forbidden":
        return f"unknown key {_dotted(loc)} (ignored)"
    message = f"{_dotted(loc)}: {item['msg']}"
    if loc and loc[0] == "agents" and len(loc) >= 4 and loc[2] in _PROFILE_ENTRIES:
        return f"{message} (ignored)"
    if loc and loc[0] == "agents" and len(loc) >= 2:
        return f"{message} (agent profile {loc[1]!r} skipped)"
    if loc and loc[0] in _TABLES_OF_ENTRIES and len(loc) >= 2:
        return f"{message} (ignored)"
    if loc:
        return f"{message} (using the default)"
    return message


def _target(loc: tuple[Any, ...], exact: bool) -> tuple[Any, ...]:
    """What to remove for an error at `loc`: an unknown key alone, a whole entry, or a top-level key."""
    if exact:
        target = loc  # an unknown key: drop just it, keep what surrounds it
    elif loc and loc[0] == "agents" and len(loc) >= 4 and loc[2] in _PROFILE_ENTRIES:
        target = loc[:4]  # one MCP server or one default of a profile
    elif loc and loc[0] in _TABLES_OF_ENTRIES and len(loc) >= 2:
        target = loc[:2]  # a bad agent profile or keymap entry is dropped whole
    else:
        target = loc[:1]
    return target


def _drop(data: dict[str, Any], target: tuple[Any, ...]) -> bool:
    """Remove the item at `target`; False when there was nothing to remove (its parent went already)."""
    if not target:
        return False  # the document itself is wrong: cannot happen, TOML always gives a table
    parent: Any = data
    for part in target[:-1]:
        if isinstance(parent, list) and isinstance(part, int):
            parent = parent[part] if 0 <= part < len(parent) else None
        else:
            parent = parent.get(part) if isinstance(parent, dict) else None
    if isinstance(parent, list) and isinstance(target[-1], int) and 0 <= target[-1] < len(parent):
        del parent[target[-1]]
        return True
    if isinstance(parent, dict) and target[-1] in parent:
        del parent[target[-1]]
        return True
    return False
