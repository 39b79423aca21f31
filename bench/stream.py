"""Bench: time until a streamed N-chunk answer is fully on screen, as a ratio to a parse-only client.

Run: .venv/bin/python bench/stream.py [N ...]   (default N = 2000 20000)
Each measurement runs in its own process so peak RSS is its own. The floor is a client that only
spawns the same agent, reads its lines and json-parses them; the app is rat-tui headless (Textual's
test driver) with the real transcript, measured until the last chunk's text is in the viewport.
Keystroke echo latency into the composer is sampled every 50 ms while the stream runs. `UI cpu s` is the
UI thread's CPU time from the prompt to the end (time.thread_time): what the flood costs the app's own
thread, steadier than the wall time on a shared machine. With RAT_BENCH_PROFILE=FILE set, `--one app N`
writes a cProfile of the flood alone (prompt to last chunk shown) to FILE.
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
sys.path.insert(0, str(HERE))
from stream_agent import END_MARKER  # noqa: E402

AGENT = [sys.executable, str(HERE / "stream_agent.py")]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def floor(n: int) -> dict:
    proc = await asyncio.create_subprocess_exec(
        *AGENT, str(n), stdin=subprocess.PIPE, stdout=subprocess.PIPE, limit=1 << 30
    )
    assert proc.stdin and proc.stdout

    async def call(mid: int, method: str, params: dict) -> None:
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": mid, "method": method, "params": params}) + "\n").encode())
        await proc.stdin.drain()
        while True:
            msg = json.loads(await proc.stdout.readline())
            if msg.get("id") == mid:
                return

    await call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    await call(1, "session/new", {"cwd": os.getcwd(), "mcpServers": []})
    start = time.perf_counter()
    await call(2, "session/prompt", {"sessionId": "bench", "prompt": [{"type": "text", "text": "go"}]})
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    await proc.wait()
    return {"seconds": elapsed, "rss_mb": peak_rss_mb()}


async def app(n: int) -> dict:
    # A fresh config, history journal and log per run: the journal is on, as for a user, but a
    # journal grown by earlier runs would make each run slower than the last.
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        os.environ[name] = tempfile.mkdtemp()
    from textual import events

    from rat_tui.app import RatApp
    from rat_tui.agents.spec import AgentSpec
    from rat_tui.ui.tabs.view import SessionView

    command = AgentSpec(name="stream-bench", argv=[*AGENT, str(n)], env={}, is_demo=False)
    rat = RatApp(command, Path.cwd())
    latencies: list[float] = []
    async with rat.run_test(size=(120, 40)):
        view = rat.query_one(SessionView)
        while view.session.state.status != "ready":
            await asyncio.sleep(0.01)
        while rat.warm_thread is None:  # started after the first frame, as when `rat` launches
            await asyncio.sleep(0.01)
        rat.warm_thread.join()  # a user takes longer than the model import to type a prompt
        view.composer.insert("go")
        start = time.perf_counter()
        cpu = time.thread_time()  # the UI thread's own CPU time: what the flood costs it, whatever the load
        profile = None
        if os.environ.get("RAT_BENCH_PROFILE"):  # cProfile of the flood only (not the startup), to that file
            import cProfile

            profile = cProfile.Profile()
            profile.enable()
        rat._driver.send_message(events.Key("enter", "\r"))  # not pilot.press: it waits for idle
        composer = view.composer
        done = False

        async def probe_keys() -> None:
            while not done:
                before = composer.text
                sent = time.perf_counter()
                rat._driver.send_message(events.Key("x", "x"))
                while composer.text == before:
                    await asyncio.sleep(0.0005)
                latencies.append(time.perf_counter() - sent)
                await asyncio.sleep(0.05)

        prober = asyncio.create_task(probe_keys())
        entries = view.session.state.entries
        # Cheap check first (the store has the last chunk), then what the transcript shows.
        while not (entries and END_MARKER in entries[-1].parts[-1]):
            await asyncio.sleep(0.002)
        while END_MARKER not in view.transcript.visible_text():
            await asyncio.sleep(0.002)
        done = True
        elapsed = time.perf_counter() - start
        cpu = time.thread_time() - cpu
        if profile is not None:
            profile.disable()
            profile.dump_stats(os.environ["RAT_BENCH_PROFILE"])
        await prober
    latencies.sort()
    return {
        "seconds": elapsed,
        "ui_cpu": cpu,
        "rss_mb": peak_rss_mb(),
        "keys": len(latencies),
        "key_p50_ms": 1000 * latencies[len(latencies) // 2] if latencies else None,
        "key_max_ms": 1000 * latencies[-1] if latencies else None,
    }


def run_one(mode: str, n: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", mode, str(n)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        mode, n = sys.argv[2], int(sys.argv[3])
        result = asyncio.run(floor(n) if mode == "floor" else app(n))
        print(json.dumps(result))
        return
    import compileall  # an installed rat has its .pyc files (see bench/stress.py)

    compileall.compile_dir(str(HERE.parent / "rat_tui"), quiet=1)
    sizes = [int(a) for a in sys.argv[1:]] or [2000, 20000]
    print(f"{'chunks':>7} {'floor s':>8} {'app s':>7} {'ratio':>6} {'floor MB':>8} {'app MB':>7} {'key p50 ms':>10} {'key max ms':>10} {'UI cpu s':>8}")
    for n in sizes:
        base = run_one("floor", n)
        got = run_one("app", n)
        print(
            f"{n:>7} {base['seconds']:>8.3f} {got['seconds']:>7.3f} {got['seconds'] / base['seconds']:>6.2f} "
            f"{base['rss_mb']:>8.1f} {got['rss_mb']:>7.1f} {got['key_p50_ms'] or 0:>10.1f} {got['key_max_ms'] or 0:>10.1f}"
            f" {got['ui_cpu']:>7.3f}"
        )


if __name__ == "__main__":
    main()
