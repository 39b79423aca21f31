"""Profile the UI thread (cProfile) while the headless app plays one bench/stress_agent.py workload.

Run: .venv/bin/python bench/profile_workload.py NAME [--scale 1.0] [--top 30]
Stops once the workload's end marker (or its dialog) is shown, or after 60 s; prints the functions
with the most cumulative and own time. What bench/stress.py shows is slow, this says why.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


@contextlib.asynccontextmanager
async def ready_app(name: str):
    """The headless app (200x50) on bench/stress_agent.py, ready, with `name` typed into its composer, not
    sent: (app, its session view). Also bench/breakdown.py's."""
    from rat_tui.agents.spec import AgentSpec
    from rat_tui.app import RatApp
    from rat_tui.protocol import wire
    from rat_tui.ui.tabs.view import SessionView
    from rat_tui.ui.widgets import markdown_stream

    wire.schema()
    spec = AgentSpec(name="stress", argv=[sys.executable, str(HERE / "stress_agent.py")], env={}, is_demo=False)
    app = RatApp(spec, Path.cwd())
    async with app.run_test(size=(200, 50)):
        view = app.query_one(SessionView)
        while view.session.state.status != "ready" or markdown_stream.warming():
            await asyncio.sleep(0.01)  # as in bench/stress.py, where the prompt is typed meanwhile
        view.composer.insert(name)
        yield app, view


async def play(name: str, limit: float) -> None:
    from textual import events

    async with ready_app(name) as (app, view):
        profile = cProfile.Profile()
        profile.enable()
        app._driver.send_message(events.Key("enter", "\r"))
        deadline = time.perf_counter() + limit
        while time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
            if app.screen is not app.screen_stack[0]:
                break  # a dialog
            entries = view.session.state.entries
            if entries and f"END-{name}" in "".join(getattr(entries[-1], "parts", [])[-3:]):
                await asyncio.sleep(0.5)
                break
        profile.disable()
    if ARGS.save:
        profile.dump_stats(ARGS.save)
    stats = pstats.Stats(profile)
    stats.sort_stats("cumulative").print_stats(ARGS.top)
    stats.sort_stats("tottime").print_stats(ARGS.top)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--limit", type=float, default=60)
    parser.add_argument("--save", help="also write the profile to this file (pstats: callers, callees)")
    ARGS = parser.parse_args()
    os.environ["RAT_STRESS_SCALE"] = str(ARGS.scale)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        os.environ[var] = tempfile.mkdtemp()
    asyncio.run(play(ARGS.name, ARGS.limit))
