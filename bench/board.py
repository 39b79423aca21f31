"""Bench: the fleet board (F12) open while T tabs all stream N chunks, against the same run without it.

Run: .venv/bin/python bench/board.py [N] [--tabs T]   (default N = 2000, T = 50)
Every tab streams N chunks from bench/stream_agent.py at once. "plain": the board closed, keys typed into
the shown tab's composer and timed until it holds the character (the floor). "board": the board open,
keys (down/up) sent to it and timed until its cursor moved. Both report the worst and p95 echo and how long
the streams took; "board" also reports what the board's refreshes cost (its own timer, REFRESH_SECONDS).
Each mode runs in its own process; the figures are printed as ratios to the floor of the same run.
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
KEY_GAP = 0.05


async def measure(mode: str, n: int, tabs: int) -> dict:
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        os.environ[name] = tempfile.mkdtemp()
    from textual import events

    from rat_tui.agents.spec import AgentSpec
    from rat_tui.app import RatApp
    from rat_tui.ui.screens.board import REFRESH_SECONDS, BoardScreen

    spec = AgentSpec(name="stream-bench", argv=[*AGENT, str(n)], env={}, is_demo=False)
    rat = RatApp(spec, Path.cwd())
    latencies: list[float] = []
    async with rat.run_test(size=(140, 50)):
        sessions = [rat.first_session]
        for _ in range(tabs - 1):
            sessions.append(await rat.open_session(spec, Path.cwd()))
        while not all(s.state.status == "ready" for s in sessions):
            await asyncio.sleep(0.02)
        while rat.warm_thread is None:
            await asyncio.sleep(0.01)
        rat.warm_thread.join()
        board = None
        if mode == "board":
            rat.action_board()
            while not isinstance(rat.screen, BoardScreen) or len(rat.screen.rows) < tabs:
                await asyncio.sleep(0.02)
            board = rat.screen
        composer = rat.tabs.active_view.composer
        if board is None:
            composer.focus()
        await asyncio.sleep(0.3)

        def streamed() -> bool:
            return all(s.state.entries and END_MARKER in s.state.entries[-1].text[-100:] for s in sessions)

        start = time.perf_counter()
        for session in sessions:
            session.start_prompt("go")
        refreshes_before = board.refreshes if board else 0
        cost_before = board.refresh_seconds if board else 0.0
        down = True
        while not streamed():
            sent = time.perf_counter()
            if board is not None:
                before = board.table.cursor_row
                key = "down" if down else "up"
                down = not down
                rat._driver.send_message(events.Key(key, None))
                while board.table.cursor_row == before:
                    await asyncio.sleep(0.0005)
            else:
                before = composer.text
                rat._driver.send_message(events.Key("x", "x"))
                while composer.text == before:
                    await asyncio.sleep(0.0005)
            latencies.append(time.perf_counter() - sent)
            await asyncio.sleep(KEY_GAP)
        stream_seconds = time.perf_counter() - start
        refreshes = (board.refreshes - refreshes_before) if board else 0
        cost = (board.refresh_seconds - cost_before) if board else 0.0
    latencies.sort()
    return {
        "keys": len(latencies),
        "p95_ms": 1000 * latencies[int(len(latencies) * 0.95)],
        "max_ms": 1000 * latencies[-1],
        "stream_s": stream_seconds,
        "refreshes": refreshes,
        "refresh_ms": 1000 * cost / refreshes if refreshes else 0.0,
        "interval_ms": 1000 * REFRESH_SECONDS,
    }


def run_one(mode: str, n: int, tabs: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", mode, str(n), str(tabs)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        print(json.dumps(asyncio.run(measure(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))))
        return
    args = sys.argv[1:]
    tabs = 50
    if "--tabs" in args:
        at = args.index("--tabs")
        tabs = int(args[at + 1])
        del args[at: at + 2]
    n = int(args[0]) if args else 2000
    plain = run_one("plain", n, tabs)
    board = run_one("board", n, tabs)
    print(f"{tabs} tabs streaming {n} chunks each")
    print(f"{'mode':>6} {'keys':>5} {'p95 ms':>7} {'max ms':>7} {'streams s':>9}")
    for name, got in (("plain", plain), ("board", board)):
        print(f"{name:>6} {got['keys']:>5} {got['p95_ms']:>7.1f} {got['max_ms']:>7.1f} {got['stream_s']:>9.2f}")
    print(f"board/plain: worst echo {board['max_ms'] / plain['max_ms']:.2f}x, p95 {board['p95_ms'] / plain['p95_ms']:.2f}x, "
          f"streams {board['stream_s'] / plain['stream_s']:.2f}x")
    print(f"board refresh: {board['refreshes']} refreshes, {board['refresh_ms']:.2f} ms each "
          f"({board['refresh_ms'] / board['interval_ms']:.3f} of its {board['interval_ms']:.0f} ms interval)")


if __name__ == "__main__":
    main()
