"""Bench: keystroke echo latency in tab 2's composer while tab 1 streams N chunks, against tab 1 idle.

Run: .venv/bin/python bench/typing_tabs.py [N] [--all T]   (default N = 20000)
Two tabs on bench/stream_agent.py. Tab 2 is the one shown; keys are sent to the app's driver one at a
time (as a terminal would) and timed until tab 2's composer holds the character. "idle" types the
same way with tab 1 quiet: the floor, measured in the same run. Each mode runs in its own process.
With `--all T`: T tabs, every one of them (the shown one too) streaming N chunks at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from stream_agent import END_MARKER  # noqa: E402

AGENT = [sys.executable, str(HERE / "stream_agent.py")]
IDLE_KEYS = 150
KEY_GAP = 0.02  # seconds between keystrokes: a fast typist


async def measure(mode: str, n: int, tabs: int = 2, all_stream: bool = False) -> dict:
    # A fresh config, history journal and log per run: the journal is on, as for a user, but a
    # journal grown by earlier runs would make each run slower than the last.
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        os.environ[name] = tempfile.mkdtemp()
    from textual import events

    from rat_tui.app import RatApp
    from rat_tui.agents.spec import AgentSpec

    spec = AgentSpec(name="stream-bench", argv=[*AGENT, str(n)], env={}, is_demo=False)
    rat = RatApp(spec, Path.cwd())
    latencies: list[float] = []
    stream_seconds = None
    async with rat.run_test(size=(120, 40)):
        first = rat.first_session
        while first.state.status != "ready":
            await asyncio.sleep(0.01)
        sessions = [first]
        for _ in range(tabs - 1):
            sessions.append(await rat.open_session(spec, Path.cwd()))
        for session in sessions:
            while session.state.status != "ready":
                await asyncio.sleep(0.01)
        second = sessions[-1]
        streaming = sessions if all_stream else [first]
        while rat.warm_thread is None:  # started after the first frame, as when `rat` launches
            await asyncio.sleep(0.01)
        rat.warm_thread.join()
        view = rat.tabs.active_view
        assert view is not None and view.session is second
        composer = view.composer
        composer.focus()
        await asyncio.sleep(0.2)

        def streamed() -> bool:
            return all(s.state.entries and END_MARKER in s.state.entries[-1].text[-100:] for s in streaming)

        start = time.perf_counter()
        if mode == "stream":
            for session in streaming:
                session.start_prompt("go")
            while not all(s.state.entries for s in streaming):  # the user's prompt is the first entry
                await asyncio.sleep(0.001)
        keys = 0
        while (mode == "stream" and not streamed()) or (mode == "idle" and keys < IDLE_KEYS):
            before = composer.text
            sent = time.perf_counter()
            rat._driver.send_message(events.Key("x", "x"))  # as a terminal's input reaches Textual
            while composer.text == before:
                await asyncio.sleep(0.0005)
            latencies.append(time.perf_counter() - sent)
            keys += 1
            await asyncio.sleep(KEY_GAP)
        if mode == "stream":
            stream_seconds = time.perf_counter() - start
            assert all(s.state.stop_reason in (None, "end_turn") for s in streaming)
    latencies.sort()
    return {
        "keys": len(latencies),
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p95_ms": 1000 * latencies[int(len(latencies) * 0.95)],
        "max_ms": 1000 * latencies[-1],
        "stream_s": stream_seconds,
    }


def run_one(mode: str, n: int, tabs: int, all_stream: bool) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", mode, str(n), str(tabs), str(int(all_stream))],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        mode, n, tabs, all_stream = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
        print(json.dumps(asyncio.run(measure(mode, n, tabs, all_stream))))
        return
    args = sys.argv[1:]
    tabs, all_stream = 2, False
    if "--all" in args:
        at = args.index("--all")
        tabs, all_stream = int(args[at + 1]), True
        del args[at : at + 2]
    n = int(args[0]) if args else 20000
    idle = run_one("idle", n, tabs, all_stream)
    busy = run_one("stream", n, tabs, all_stream)
    what = f"all {tabs} tabs stream" if all_stream else "tab 1 streams"
    print(f"typing in tab {tabs} while {what} {n} chunks (all done after {busy['stream_s']:.2f} s)")
    print(f"{'streams':>8} {'keys':>5} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7}")
    for name, got in (("idle", idle), ("stream", busy)):
        print(f"{name:>8} {got['keys']:>5} {got['p50_ms']:>7.1f} {got['p95_ms']:>7.1f} {got['max_ms']:>7.1f}")
    print(f"ratio to the floor: p50 {busy['p50_ms'] / idle['p50_ms']:.2f}x, max {busy['max_ms'] / idle['max_ms']:.2f}x")


if __name__ == "__main__":
    main()
