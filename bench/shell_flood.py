"""Bench: keystroke echo latency in the composer while a `!command` of the same tab prints MB megabytes.

Run: .venv/bin/python bench/shell_flood.py [MB]   (default 50)
One tab on bench/stream_agent.py (idle: the agent sends nothing). Keys go to the app's driver one at a time
(as a terminal's input does) and are timed until the composer holds the character. "idle" types the same
way with no command running: the floor, measured in the same run. Each mode runs in its own process. Also
printed: how long the command took, what the card kept and the peak memory of rat's process.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

AGENT = [sys.executable, str(HERE / "stream_agent.py"), "1"]
IDLE_KEYS = 150
KEY_GAP = 0.02  # seconds between keystrokes: a fast typist


async def measure(mode: str, megabytes: int) -> dict:
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        os.environ[name] = tempfile.mkdtemp()
    from textual import events

    from rat_tui.agents.spec import AgentSpec
    from rat_tui.app import RatApp
    from rat_tui.state import shell

    spec = AgentSpec(name="shell-bench", argv=AGENT, env={}, is_demo=False)
    rat = RatApp(spec, Path(tempfile.mkdtemp()))
    latencies: list[float] = []
    seconds = kept = total = None
    async with rat.run_test(size=(120, 40)):
        session = rat.first_session
        while session.state.status != "ready":
            await asyncio.sleep(0.01)
        while rat.warm_thread is None:  # started after the first frame, as when `rat` launches
            await asyncio.sleep(0.01)
        rat.warm_thread.join()
        view = rat.tabs.active_view
        composer = view.composer
        composer.focus()
        await asyncio.sleep(0.2)
        runs = session.shell
        start = time.perf_counter()
        if mode == "flood":
            assert runs.run(f"head -c {megabytes * 1_000_000} /dev/zero | tr '\\0' y | fold -w 99") is None
        keys = 0
        while (mode == "flood" and runs.running) or (mode == "idle" and keys < IDLE_KEYS):
            before = composer.text
            sent = time.perf_counter()
            rat._driver.send_message(events.Key("x", "x"))
            while composer.text == before:
                await asyncio.sleep(0.0005)
            latencies.append(time.perf_counter() - sent)
            keys += 1
            await asyncio.sleep(KEY_GAP)
        if mode == "flood":
            seconds = time.perf_counter() - start
            entry = shell.find(session.state)
            kept, total = len(shell.output_of(session.state, entry)), entry.total_bytes
    latencies.sort()
    return {
        "keys": len(latencies),
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p95_ms": 1000 * latencies[int(len(latencies) * 0.95)],
        "max_ms": 1000 * latencies[-1],
        "seconds": seconds, "kept": kept, "total": total,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_one(mode: str, megabytes: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", mode, str(megabytes)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(asyncio.run(measure(sys.argv[2], int(sys.argv[3])))))
        return
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    idle = run_one("idle", megabytes)
    flood = run_one("flood", megabytes)
    print(f"typing while a !command prints {megabytes} MB (done after {flood['seconds']:.2f} s; the card kept "
          f"{flood['kept']} of {flood['total']} characters)")
    print(f"{'mode':>8} {'keys':>5} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'peak MB':>8}")
    for name, got in (("idle", idle), ("flood", flood)):
        print(f"{name:>8} {got['keys']:>5} {got['p50_ms']:>7.1f} {got['p95_ms']:>7.1f} {got['max_ms']:>7.1f} "
              f"{got['peak_rss_mb']:>8.0f}")
    print(f"ratio to the floor: p50 {flood['p50_ms'] / idle['p50_ms']:.2f}x, max {flood['max_ms'] / idle['max_ms']:.2f}x, "
          f"peak memory {flood['peak_rss_mb'] / idle['peak_rss_mb']:.2f}x")


if __name__ == "__main__":
    main()
