"""Where the UI thread's time goes while the headless app plays one bench/stress_agent.py workload.

Run: .venv/bin/python bench/breakdown.py NAME [--tree PATH] [--runs N] [--timeline]
From Enter to the frame that draws the workload's end marker (`END-NAME` in the transcript's rendered lines):
the wall time, the UI thread's CPU time, and the time spent in each of a few top-level parts (routing the
agent's lines, the transcript's flushes, the store's deliveries, the journal's commits, Textual's compositing
and layouts), each timed where it is entered from the loop (a part called inside another is not counted
again). No profiler: cProfile triples the cost of small calls, and the flood is made of them. `--tree` times
another checkout (its `rat_tui`), to compare two trees run by run, alternating (`--runs`).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (module, class, method, label): timed where entered from the loop
PARTS = [
    ("rat_tui.protocol.router", "Connection", "_route_line", "routing the agent's lines"),
    ("rat_tui.ui.widgets.transcript", "Transcript", "_flush_now", "transcript flushes"),
    ("rat_tui.state.store", "SessionStore", "flush", "store deliveries"),
    ("rat_tui.history.journal", "HistoryJournal", "flush", "journal commits"),
    ("textual.screen", "Screen", "_compositor_refresh", "compositing"),
    ("textual.screen", "Screen", "_refresh_layout", "layouts"),
]


def instrument(spent: dict[str, float], calls: collections.Counter, timeline: list | None = None) -> None:
    import importlib

    depth = [0]
    for module, cls, method, label in PARTS:
        owner = getattr(importlib.import_module(module), cls)
        original = getattr(owner, method)

        def timed(*args, __original=original, __label=label, **kwargs):
            if depth[0]:
                return __original(*args, **kwargs)
            depth[0] += 1
            started = time.perf_counter()
            try:
                return __original(*args, **kwargs)
            finally:
                took = time.perf_counter() - started
                spent[__label] += took
                calls[__label] += 1
                if timeline is not None:
                    timeline.append((started, took, __label))
                depth[0] -= 1

        setattr(owner, method, timed)


def print_timeline(timeline: list, started: float, drawn: float) -> None:
    """The parts in the order they ran, from Enter (ms): a stretch of one part's calls with nothing else between
    them is one row (its first start, its end, the time in it, the calls)."""
    rows: list[list] = []
    for start, took, label in timeline:
        if start > drawn:
            break
        if rows and rows[-1][0] == label:
            rows[-1][2] = start + took
            rows[-1][3] += took
            rows[-1][4] += 1
        else:
            rows.append([label, start, start + took, took, 1])
    for label, first, end, took, count in rows:
        print(f"    {1000 * (first - started):7.1f} - {1000 * (end - started):7.1f}  {label:<26} {1000 * took:6.1f} ms  x{count}")


async def play(name: str, show_timeline: bool = False) -> None:
    from textual import events

    from profile_workload import ready_app

    from rat_tui.ui.widgets.transcript import Transcript

    spent: dict[str, float] = collections.defaultdict(float)
    calls: collections.Counter = collections.Counter()
    timeline: list = []
    instrument(spent, calls, timeline if show_timeline else None)
    async with ready_app(name) as (app, _view):
        await asyncio.sleep(0.2)
        drawn: list[float] = []
        render_lines = Transcript.render_lines

        def watched(self, crop):
            strips = render_lines(self, crop)
            if not drawn and any(f"END-{name}" in strip.text for strip in strips):
                drawn.append(time.perf_counter())
            return strips

        Transcript.render_lines = watched  # type: ignore[method-assign]
        spent.clear()
        calls.clear()
        timeline.clear()
        started, cpu = time.perf_counter(), time.thread_time()
        app._driver.send_message(events.Key("enter", "\r"))
        while not drawn and time.perf_counter() - started < 60:
            await asyncio.sleep(0.002)
        cpu = time.thread_time() - cpu
        if not drawn:
            print(f"{name}: the end was not drawn within 60 s")
            return
        print(f"{name}: end drawn {1000 * (drawn[0] - started):.0f} ms after Enter; UI thread CPU {1000 * cpu:.0f} ms")
        for label, seconds in sorted(spent.items(), key=lambda item: -item[1]):
            print(f"  {label:<26} {1000 * seconds:7.1f} ms  x{calls[label]}")
        if show_timeline:
            print_timeline(timeline, started, drawn[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--tree", help="time this checkout's rat_tui too, run by run alternating")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--timeline", action="store_true", help="also print the parts in the order they ran")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a single run in this process, of this tree
    args = parser.parse_args()
    if args.one:
        import profile_workload  # noqa: F401 (first: it puts this tree on sys.path, the tree timed goes before it)

        sys.path.insert(0, args.one)
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            os.environ[var] = tempfile.mkdtemp()
        asyncio.run(play(args.name, args.timeline))
        return
    trees = [str(HERE.parent)] + ([str(Path(args.tree).resolve())] if args.tree else [])
    for run in range(args.runs):
        for tree in trees if run % 2 == 0 else trees[::-1]:
            print(f"[{tree}]", flush=True)
            subprocess.run([sys.executable, __file__, args.name, "--one", tree, *(["--timeline"] if args.timeline else [])],
                           check=False)


if __name__ == "__main__":
    main()
