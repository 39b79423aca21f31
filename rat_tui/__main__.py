"""Provides the `rat` command: parse arguments, load config, run the app."""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from . import dataclass_cache, paths
from .cli import ConfigError, parse_args, resolve_agent


def setup_logging() -> Path:
    """Log to a file in the platform log dir: the terminal belongs to the UI."""
    log_file = paths.log_dir() / "rat.log"
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(log_file, encoding="utf-8")
    except OSError as error:  # no log is no reason not to start
        print(f"rat: cannot write the log {log_file}: {error.strerror or error}; running without it", file=sys.stderr)
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return log_file


# How long a thread keeps the GIL while another waits for it (CPython's default: 5 ms). See share_the_gil.
SWITCH_INTERVAL = 0.001


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.serve is not None:
        return serve(args)
    share_the_gil()
    log_file = setup_logging()
    # Before the config's classes, and Textual's: their methods compiled at an earlier launch (40-70 ms).
    dataclass_cache.install()
    from .config import load_config  # pydantic: only once the arguments are known to be good

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
    stop_collector()
    # The agent starts now and its own startup overlaps the app's import and first frame; the first
    # session adopts it (protocol/prespawn.py).
    from .protocol import prespawn

    if command.remote is None:  # a remote agent has no process to start early
        prespawn.start(command.argv, args.cwd, command.env)
    # --add-dir joins the config's list: every session of this run may use them (session/setup.py).
    config.additional_directories = [*args.add_dirs, *config.additional_directories]
    rpc_log = args.rpc_log or (Path(config.rpc_log).expanduser() if config.rpc_log else None)
    from .ui import images

    images.probe(config.images.mode)  # asks the terminal: only possible before the app reads stdin
    from .app import RatApp  # Textual is imported only once the arguments are known to be good

    app = RatApp(command, args.cwd, config=config, rpc_log_path=rpc_log, problems=problems,
                 config_path=args.config or paths.config_file())
    install_stop_signals(app)
    code = finished(app, log_file)
    logging.getLogger("rat").info("the app has exited")
    return code


def share_the_gil() -> None:
    """Hand the GIL over after SWITCH_INTERVAL instead of 5 ms. A frame reaches the terminal through
    Textual's writer thread, and the loop gets the GIL back after each call that lets it go (a write, a
    poll, a journal commit): with the loop busy (a flood) or the warm-up thread importing, each of those
    waited up to a switch interval. bench/stress.py, typing through each workload (median of the worst key
    over 3-4 alternating runs, 5 ms against 1 ms): chunks20000 100 against 28 ms, toolcalls 117 / 69, code
    124 / 62, plan 128 / 75, markdown 57 / 42, tabs20 150 / 120, load50000 224 / 208; the floods ended
    about as soon (code 22% later, chunks20000 7%, load50000 5%). 2 ms fell between the two (better than 1 ms
    in tabs20 and load50000, worse in diff and plan)."""
    sys.setswitchinterval(SWITCH_INTERVAL)


def stop_collector() -> None:
    """No garbage collection until the first frame (RatApp._warm_up freezes what startup built, then turns the
    collector back on): startup allocates what lives as long as the process (modules, classes, the first
    screen), and the collector walking it about a hundred times before the first frame cost 25 ms."""
    gc.disable()


def finished(app, log_file: Path, headless: bool = False) -> int:
    """Run the app; a crash exits non-zero and says where the log is (Textual has printed the traceback)."""
    try:
        app.run(headless=headless)
    except Exception:  # the app could not even start its loop
        logging.getLogger("rat").exception("rat crashed")
        print(f"rat: crashed; the log is {log_file}", file=sys.stderr)
        return 1
    finally:
        gc.enable()  # an app that ended before its first frame
    code = app.return_code or 0
    if code:
        logging.getLogger("rat").error("rat exited with an error (code %d)", code)
        print(f"rat: exited with an error (code {code}); the log is {log_file}", file=sys.stderr)
    return code


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


# After SIGHUP or SIGTERM: agents still alive this long after SIGTERM get SIGKILL, and the app, if it
# has not exited this long after (a closed terminal can wedge its output), ends the process.
KILL_AFTER_SECONDS = 1.0
EXIT_AFTER_SECONDS = 3.0


def install_stop_signals(app) -> None:
    """SIGHUP (the terminal closed) and SIGTERM stop every agent and terminal command rat started.

    They run in their own process groups (so a Ctrl+C typed for rat does not reach them), which also
    means nothing else would tell them: the handler sends SIGTERM to each group at once, SIGKILL to
    those left after a second, and asks the app to exit; if it cannot (its terminal is gone), the
    process ends after a few seconds anyway.
    """
    from .protocol.transport import LIVE_GROUPS, signal_live_groups

    def stop(signum: int, _frame) -> None:
        log = logging.getLogger("rat")
        if signum == signal.SIGHUP:
            # A terminal hanging up sends SIGCONT right after (Linux, tmux): Textual's driver took it for
            # a resume from Ctrl+Z and set up the gone terminal again; its new writer thread died on the
            # first write, and the app's shutdown then waited on that thread's full queue until the
            # process was ended (EXIT_AFTER_SECONDS). Nothing is left to resume.
            signal.signal(signal.SIGCONT, signal.SIG_DFL)
        log.warning("%s: stopping %d agent and terminal process groups", signal.Signals(signum).name, len(LIVE_GROUPS))
        signal_live_groups(signal.SIGTERM)

        def finish() -> None:
            threading.Event().wait(KILL_AFTER_SECONDS)
            signal_live_groups(signal.SIGKILL)
            threading.Event().wait(EXIT_AFTER_SECONDS - KILL_AFTER_SECONDS)
            log.warning("the app did not exit after %s; ending the process", signal.Signals(signum).name)
            logging.shutdown()
            os._exit(128 + signum)

        threading.Thread(target=finish, name="stop-after-signal", daemon=True).start()
        threading.Thread(target=_exit_app, args=(app,), name="exit-app", daemon=True).start()

    for signum in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, stop)


def _exit_app(app) -> None:
    try:
        app.call_from_thread(app.exit)
    except Exception:  # the app is not running (yet, or any more)
        pass


def replay(path: Path, config, problems: list[str]) -> int:
    """`rat replay FILE`: the recording in a read-only tab, no agent process."""
    from .history.records import RecordingError, read_recording

    try:
        recording = read_recording(path)
    except RecordingError as error:
        print(f"rat: {error}", file=sys.stderr)
        return 2
    stop_collector()
    from .ui import images

    images.probe(config.images.mode)
    from .ui.replay_app import ReplayApp

    return finished(ReplayApp(recording, path, config=config, problems=problems), paths.log_dir() / "rat.log")


if __name__ == "__main__":
    sys.exit(main())
