"""Profile `rat` from launch to its first frame and to `ready` (cProfile, headless, bench/stress_agent.py).

Run: .venv/bin/python bench/profile_startup.py [--top 30] [--sort cumulative|tottime] [--no-profile]
Goes the way `rat -- AGENT` goes (__main__: arguments, config, then the app), in a fresh config and data
directory; prints the seconds from launch to the first frame (RatApp._warm_up runs right after it) and to
the first tab's `ready` (and the CPU time this process had used by then: less noisy on a busy machine), then the functions with the most time over the whole launch. bench/stress.py
measures startup in a real terminal against a bare Textual app; this says where the time goes.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()
CPU_STARTED = time.process_time()

import argparse  # noqa: E402
import cProfile  # noqa: E402
import os  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def launch(marks: dict[str, float], cpu: dict[str, float]) -> None:
    from rat_tui import dataclass_cache
    from rat_tui.cli import parse_args, resolve_agent

    dataclass_cache.install()  # as __main__ does
    from rat_tui.config import load_config

    args = parse_args(["--", sys.executable, str(HERE / "stress_agent.py")])
    config, problems = load_config(args.config)
    command, more = resolve_agent(args, config)
    from rat_tui.__main__ import stop_collector

    stop_collector()  # as __main__ does: no collection until the first frame
    from rat_tui.app import RatApp

    marks["imported"] = time.perf_counter()
    cpu["imported"] = time.process_time()
    warm_up = RatApp._warm_up

    def first_frame(app: RatApp) -> None:
        marks.setdefault("first frame", time.perf_counter())
        cpu.setdefault("first frame", time.process_time())
        warm_up(app)

    RatApp._warm_up = first_frame  # type: ignore[method-assign]
    app = RatApp(command, args.cwd, config=config, problems=[*problems, *more])

    def seen(_batch) -> None:
        if app.first_session.state.status == "ready" and "ready" not in marks:
            marks["ready"] = time.perf_counter()
            cpu["ready"] = time.process_time()
            app.call_later(app.exit)

    app.first_session.store.subscribe(seen)
    app.run(headless=True, size=(200, 50))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--no-profile", action="store_true", help="only the times (no profiler overhead)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="rat-startup-"))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        os.environ[name] = str(base / name.lower())
    os.environ["RAT_REGISTRY_OFF"] = "1"
    marks: dict[str, float] = {}
    cpu: dict[str, float] = {}
    profile = cProfile.Profile()
    if not args.no_profile:
        profile.enable()
    launch(marks, cpu)
    profile.disable()
    print("  ".join(f"{name} {at - STARTED:.3f} s (CPU {cpu[name] - CPU_STARTED:.3f})" for name, at in marks.items()))
    if not args.no_profile:
        pstats.Stats(profile).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
