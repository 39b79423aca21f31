"""Provides the `rat` command line: `parse_args` and `resolve_agent` (which agent to start).

Kept free of Textual so that `rat --help`, `--version` and argument errors answer instantly.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .agents.spec import AgentSpec, RemoteSpec, demo_agent, parse_header, profile_spec, remote_spec

if TYPE_CHECKING:  # pydantic takes a while to import: `rat --help` and argument errors do without it
    from .config import Config

USAGE = "rat [--cwd DIR] [--agent NAME] [--config FILE] [--rpc-log FILE] [--protocol 1|2] [-- COMMAND ARGS...]"
REPLAY_USAGE = "rat replay [--config FILE] FILE"
CONNECT_USAGE = ("rat connect URL [--header 'Name: value']... [--token-env VAR] [--cwd DIR] [--insecure] [--shared-cwd] "
                 "[--protocol 1|2] [--config FILE] [--rpc-log FILE]")
SERVE_USAGE = ("rat serve [--host HOST] [--port N] [--cwd DIR] [--agent NAME] [--config FILE] [--protocol 1|2] "
               "[-- COMMAND ARGS...]")


class ConfigError(Exception):
    """The command line asks for something the config cannot give (an unknown profile)."""


@dataclass(frozen=True)
class CliArgs:
    """The parsed command line."""

    cwd: Path
    """Absolute working directory of the session (default: the current directory)."""
    agent: str | None = None
    """Agent profile named with `--agent`."""
    config: Path | None = None
    """Config file named with `--config`; None means $RAT_CONFIG or the default location."""
    rpc_log: Path | None = None
    """JSONL traffic log named with `--rpc-log`."""
    command: list[str] = field(default_factory=list)
    """Agent command line given after `--`; empty if none."""
    add_dirs: list[str] = field(default_factory=list)
    """Directories given with `--add-dir` (absolute), before the config's `additional_directories`."""
    replay: Path | None = None
    """`rat replay FILE`: the recording to play (journal export, --rpc-log file or agent trace); no agent runs."""
    protocol: int | None = None
    """`--protocol 1|2`: the ACP version to ask the agent for, over the profile's `protocol`."""
    serve: tuple[str, int] | None = None
    """`rat serve`: (host, port) to serve the app to a browser on (rat_tui/serve.py)."""
    remote: RemoteSpec | None = None
    """`rat connect URL`: the remote agent to connect to (no local agent process)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rat",
        usage=USAGE,
        description="A terminal client for the Agent Client Protocol (ACP).",
        # Raw, so the example command line is not broken at its hyphen.
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "Everything after -- is the agent's command line, for example:\n"
            "  rat -- npx @zed-industries/claude-code-acp\n"
            "Without it, --agent or the config's default_agent picks a profile;\n"
            "with neither, the built-in demo agent runs.\n"
            "rat replay FILE plays a recorded session without any agent (rat replay --help).\n"
            "rat serve serves the app to a web browser (rat serve --help).\n"
            "rat connect URL opens a remote agent over ACP's network transport (rat connect --help).\n"
        ),
    )
    parser.add_argument("--cwd", metavar="DIR", help="working directory of the session (default: current)")
    parser.add_argument("--agent", metavar="NAME", help="agent profile from the config file, or a catalog agent id")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $RAT_CONFIG or the user config dir)")
    parser.add_argument("--rpc-log", metavar="FILE", help="append every JSON-RPC message to FILE (JSONL)")
    parser.add_argument("--protocol", type=int, choices=(1, 2), metavar="1|2",
                        help="ACP version to ask the agent for (2: ACP v2 Preview; v1 if the agent answers v1)")
    parser.add_argument("--add-dir", metavar="DIR", action="append", default=[], dest="add_dirs",
                        help="another directory the agent may use besides the session's (repeatable)")
    parser.add_argument("--version", action="version", version=f"rat-tui {__version__}")
    return parser


def parse_args(argv: list[str]) -> CliArgs:
    """Parse the command line; bad arguments exit with status 2 and a message, never a traceback."""
    # Split at the first `--` ourselves: argparse would otherwise try to match the agent's own
    # options (`-- goose --help`) against ours.
    if "--" in argv:
        split = argv.index("--")
        ours, command = argv[:split], argv[split + 1 :]
    else:
        ours, command = argv, None
    if ours and ours[0] == "replay":
        return _parse_replay(ours[1:], command)
    if ours and ours[0] == "serve":
        return _parse_serve(ours[1:], command)
    if ours and ours[0] == "connect":
        return _parse_connect(ours[1:], command)
    parser = _parser()
    namespace = parser.parse_args(ours)
    if command is not None and not command:
        parser.error("no agent command after --")
    cwd = Path(os.path.abspath(os.path.expanduser(os.getcwd() if namespace.cwd is None else namespace.cwd)))
    if not cwd.exists():
        parser.error(f"--cwd: no such directory: {cwd}")
    if not cwd.is_dir():
        parser.error(f"--cwd: not a directory: {cwd}")
    return CliArgs(
        cwd=cwd,
        agent=namespace.agent,
        config=Path(namespace.config).expanduser() if namespace.config else None,
        rpc_log=Path(namespace.rpc_log).expanduser() if namespace.rpc_log else None,
        command=list(command or []),
        protocol=namespace.protocol,
        add_dirs=[_existing_dir(parser, d) for d in namespace.add_dirs],
    )


def _existing_dir(parser: argparse.ArgumentParser, raw: str) -> str:
    path = os.path.abspath(os.path.expanduser(raw))
    if not os.path.isdir(path):
        parser.error(f"--add-dir: not a directory: {path}")
    return path


def _parse_replay(ours: list[str], command: list[str] | None) -> CliArgs:
    parser = argparse.ArgumentParser(
        prog="rat replay",
        usage=REPLAY_USAGE,
        description="Play a recorded session into the UI, read-only, without starting any agent. FILE is a "
        "journal exported from the history screen (j), an --rpc-log file or a recorded agent trace (JSONL).",
    )
    parser.add_argument("file", metavar="FILE", help="the recording to play")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $RAT_CONFIG or the user config dir)")
    namespace = parser.parse_args(ours)
    if command is not None:
        parser.error("a replay starts no agent: nothing may follow --")
    path = Path(os.path.abspath(os.path.expanduser(namespace.file)))
    if not path.is_file():
        parser.error(f"no such file: {path}")
    return CliArgs(cwd=Path(os.getcwd()), config=Path(namespace.config).expanduser() if namespace.config else None,
                   replay=path)


def _parse_serve(ours: list[str], command: list[str] | None) -> CliArgs:
    parser = argparse.ArgumentParser(
        prog="rat serve",
        usage=SERVE_USAGE,
        description="Serve rat-tui to a web browser (through textual-serve): every page load runs the app with "
        "the same config, history, working directory and agent choice as `rat` would. Local only by default; "
        "a --host beyond localhost requires the printed token in the URL.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, metavar="N", help="port to listen on (default: 8000)")
    parser.add_argument("--cwd", metavar="DIR", help="working directory of the sessions (default: current)")
    parser.add_argument("--agent", metavar="NAME", help="agent profile from the config file, or a catalog agent id")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $RAT_CONFIG or the user config dir)")
    parser.add_argument("--rpc-log", metavar="FILE", help="append every JSON-RPC message to FILE (JSONL)")
    parser.add_argument("--protocol", type=int, choices=(1, 2), metavar="1|2",
                        help="the ACP version to ask the agent for (default: the profile's, else 1)")
    namespace = parser.parse_args(ours)
    if command is not None and not command:
        parser.error("no agent command after --")
    if not 0 <= namespace.port <= 65535:
        parser.error(f"--port: not a port number: {namespace.port}")
    cwd = Path(os.path.abspath(os.path.expanduser(os.getcwd() if namespace.cwd is None else namespace.cwd)))
    if not cwd.is_dir():
        parser.error(f"--cwd: no such directory: {cwd}")
    return CliArgs(
        cwd=cwd,
        agent=namespace.agent,
        config=Path(os.path.abspath(os.path.expanduser(namespace.config))) if namespace.config else None,
        rpc_log=Path(os.path.abspath(os.path.expanduser(namespace.rpc_log))) if namespace.rpc_log else None,
        command=list(command or []),
        protocol=namespace.protocol,
        serve=(namespace.host, namespace.port),
    )


def _parse_connect(ours: list[str], command: list[str] | None) -> CliArgs:
    parser = argparse.ArgumentParser(
        prog="rat connect",
        usage=CONNECT_USAGE,
        description="Open an agent that runs elsewhere, over ACP's remote transport: ws:// or wss:// (WebSocket, "
        "e.g. `acpremote expose`), http:// or https:// (Streamable HTTP, e.g. `qwen serve`). The token is read from "
        "the environment variable --token-env names, never from the command line.",
    )
    parser.add_argument("url", metavar="URL", help="the agent's ACP endpoint")
    parser.add_argument("--header", metavar="'NAME: VALUE'", action="append", default=[], dest="headers",
                        help="an extra request header (repeatable)")
    parser.add_argument("--token-env", metavar="VAR", help="environment variable holding the bearer token")
    parser.add_argument("--cwd", metavar="DIR", help="working directory on the agent's side (default: what the "
                        "server says, else the current one)")
    parser.add_argument("--insecure", action="store_true", help="do not check the server's TLS certificate")
    parser.add_argument("--shared-cwd", action="store_true",
                        help="the agent's directory is this machine's too: offer it rat's files and terminals")
    parser.add_argument("--protocol", type=int, choices=(1, 2), metavar="1|2", help="ACP version to ask for")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $RAT_CONFIG or the user config dir)")
    parser.add_argument("--rpc-log", metavar="FILE", help="append every JSON-RPC message to FILE (JSONL)")
    namespace = parser.parse_args(ours)
    if command is not None:
        parser.error("a remote agent runs no local command: nothing may follow --")
    url = namespace.url.strip()
    if url.split(":", 1)[0].lower() not in ("ws", "wss", "http", "https") or "//" not in url:
        parser.error(f"not a ws://, wss://, http:// or https:// URL: {url}")
    try:
        headers = tuple(parse_header(raw) for raw in namespace.headers)
    except ValueError as error:
        parser.error(f"--header: {error}")
    remote = RemoteSpec(url=url, headers=headers, token_env=namespace.token_env, cwd=namespace.cwd,
                        insecure=namespace.insecure, shared_cwd=namespace.shared_cwd)
    return CliArgs(cwd=Path(os.getcwd()), config=Path(namespace.config).expanduser() if namespace.config else None,
                   rpc_log=Path(namespace.rpc_log).expanduser() if namespace.rpc_log else None,
                   protocol=namespace.protocol, remote=remote)


def resolve_agent(args: CliArgs, config: Config) -> tuple[AgentSpec, list[str]]:
    """Pick the agent to start (`--protocol` over its own ACP version); returns it and any problems worth a toast."""
    spec, problems = _resolve_agent(args, config)
    if args.protocol is not None and args.protocol != spec.protocol:
        spec = replace(spec, protocol=args.protocol)
    return spec, problems


def _resolve_agent(args: CliArgs, config: Config) -> tuple[AgentSpec, list[str]]:
    """Pick the agent to start; returns it and any problems worth a toast.

    Precedence: `-- COMMAND`, then `--agent NAME`, then `default_agent`, then the demo agent.
    Raises ConfigError only for an explicit `--agent` naming no profile: the user asked for a
    specific agent, so silently running another would be wrong. A stale `default_agent` instead
    falls back to the demo with a problem message.
    """
    problems: list[str] = []
    if args.remote is not None:
        from urllib.parse import urlsplit

        return remote_spec(urlsplit(args.remote.url).hostname or "remote", args.remote), problems
    if args.command:
        if args.agent:
            problems.append(f"--agent {args.agent} ignored: an agent command was given after --")
        argv = [os.path.expanduser(args.command[0]), *args.command[1:]]
        return AgentSpec(name=os.path.basename(argv[0]) or argv[0], argv=argv, env={}, is_demo=False), problems
    if args.agent:
        if args.agent not in config.agents:
            return _from_catalog(args.agent, config, problems), problems
        return _from_profile(args.agent, config), problems
    if config.default_agent:
        if config.default_agent in config.agents:
            return _from_profile(config.default_agent, config), problems
        try:
            return _from_catalog(config.default_agent, config, problems), problems
        except ConfigError:
            pass
        problems.append(
            f"default_agent {config.default_agent!r} names no agent profile ({_known(config)}); "
            "using the demo agent"
        )
    return demo_agent(), problems


def _from_profile(name: str, config: Config) -> AgentSpec:
    return profile_spec(name, config.agents[name])


def _from_catalog(name: str, config: Config, problems: list[str]) -> AgentSpec:
    """An agent of the catalog (rat_tui/agents/catalog.py) by id or alias, when no profile has the name."""
    from .agents.catalog import check, load_catalog, spec_for  # only needed when no profile matched

    catalog = load_catalog(config)
    problems.extend(catalog.problems)
    agent = catalog.find(name)
    if agent is None:
        ids = ", ".join(a.id for a in catalog.agents if a.source != "config")
        raise ConfigError(f"unknown agent {name!r}; {_known(config)}; catalog agents: {ids}")
    availability = check(agent)
    if availability.launch is None:
        raise ConfigError(f"{agent.name} ({agent.id}) is not installed; to install it: {agent.install_hint}")
    return spec_for(agent, availability)


def _known(config: Config) -> str:
    if not config.agents:
        return "no agent profiles are configured (see config.example.toml)"
    return "known profiles: " + ", ".join(sorted(config.agents))
