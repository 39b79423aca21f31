"""Provides the `rat` command: parse arguments, load config, run the app."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from . import paths
from .cli import ConfigError, parse_args, resolve_agent
from .protocol import wire


def setup_logging() -> Path:
    """Log to a file in the platform log dir: the terminal belongs to the UI."""
    log_file = paths.log_dir() / "rat.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return log_file


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.serve is not None:
        return serve(args)
    from .config import load_config  # pydantic: only once the arguments are known to be good

    wire.preload()  # the ACP models take seconds to build: start now, off the first frame
    setup_logging()
    config, problems = load_config(args.config)
    if args.replay is not None:
        return replay(args.replay, config, problems)
    try:
        command, more = resolve_agent(args, config)
    except ConfigError as error:
        for problem in problems:
            print(f"rat: {problem}", file=sys.stderr)
        print(f"rat: {error}", file=sys.stderr)
        return 2
    problems.extend(more)
    rpc_log = args.rpc_log or (Path(config.rpc_log).expanduser() if config.rpc_log else None)
    from .ui import images

    images.probe(config.images.mode)  # asks the terminal: only possible before the app reads stdin
    from .app import RatApp  # Textual is imported only once the arguments are known to be good

    RatApp(command, args.cwd, config=config, rpc_log_path=rpc_log, problems=problems).run()
    return 0


def serve(args) -> int:
    """`rat serve`: the app to a browser; each connection runs `rat` with these arguments."""
    from .serve import ServeOptions, serve as run_server

    from .config import load_config

    host, port = args.serve
    setup_logging()
    config, problems = load_config(args.config)
    try:  # an unknown --agent is said once here, not by every page load's app exiting at once
        resolve_agent(args, config)
    except ConfigError as error:
        for problem in problems:
            print(f"rat: {problem}", file=sys.stderr)
        print(f"rat: {error}", file=sys.stderr)
        return 2
    return run_server(ServeOptions(host=host, port=port, cwd=args.cwd, config=args.config, agent=args.agent,
                                   rpc_log=args.rpc_log, command=tuple(args.command), protocol=args.protocol))


def replay(path: Path, config, problems: list[str]) -> int:
    """`rat replay FILE`: the recording in a read-only tab, no agent process."""
    from .history.records import RecordingError, read_recording

    try:
        recording = read_recording(path)
    except RecordingError as error:
        print(f"rat: {error}", file=sys.stderr)
        return 2
    from .ui import images

    images.probe(config.images.mode)
    from .ui.replay_app import ReplayApp

    ReplayApp(recording, path, config=config, problems=problems).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
