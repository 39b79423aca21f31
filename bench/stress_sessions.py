"""The workloads of bench/stress.py that take more than one prompt in one tab: `tabs20` and `load50000`.

Run them through bench/stress.py (`--only tabs20,load50000`); both print the same columns as the others.

tabs20 — 20 tabs streaming at once. The app starts on bench/stress_agent.py; the harness opens 19 more
tabs with the keyboard as a user would (Ctrl+N, Enter on the highlighted agent: the one rat was launched
with, in the same directory) and sends each tab the prompt `sync chunks2000`. How they start together: an
agent given a `sync` prompt titles its session with a slot number and then waits for a "go" file
(RAT_STRESS_GO) before it streams; once all 20 wait, the harness creates the file and starts the clock, so
the 20 streams of 2,000 chunks overlap entirely (typing the prompts takes seconds per tab on this machine:
streams started by Enter would not overlap). The agent is named `t` (RAT_STRESS_NAME) and each session
titled with its slot, so the 20 tab labels (`◐ t · 7`) fit the 200-column tab bar and every tab's badge
is on screen. `shown s` is go -> the visible tab (the 20th) shows END-chunks2000 AND no tab label shows
the busy badge ◐ any more (a finished tab shows ✓; the visible one no badge). Keys are typed into the
visible tab's composer meanwhile. The floor: 20 parse-only clients in one process, each on its own agent
with the same `sync` prompt, go -> the last answer. Target (#11): peak RSS <= 300 MB.

load50000 — reopening a session whose `session/load` replays 50,000 updates. The agent lists one session
(`session/list`); the harness opens the agent's session browser (Ctrl+B), waits for that session and
presses Enter, which opens it in a new tab on a new agent process. `shown s` is Enter -> END-load50000 (the
replay's last message) on screen. Keys are typed once the new tab is there (typing into the first tab
while the second opens would have the echo vanish with the tab switch). The floor: a parse-only client
spawning the agent and doing initialize + session/load until its answer.
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

import rpc  # bench/rpc.py
import stress  # bench/stress.py (registered under this name when run as a script)

TABS = 20
TAB_WORKLOAD = "chunks2000"
BUSY = "◐"
AGENT_NAME = "t"
LOAD_MARKER = "END-load50000"
STORED_TITLE = "STORED-SESSION"


def _tab_bar(screen: str) -> str:
    return screen.split("\n", 1)[0]


def _measure(tmux, result: dict, start: float, timeout: float, done) -> tuple[dict, str]:
    """Run the workload until `done(screen)`, probing keys meanwhile; the result and the last screen."""
    shown, prober, screen = _run_loop(tmux, start, timeout, done)
    result.update(shown_s=shown, **prober.summary())
    result["rss_mb"] = tmux.peak_rss_mb()
    if shown is None:
        return _failed(tmux, result, f"timed out after {timeout:.0f} s", screen), screen
    _debug("the screen at the end", screen)
    return result, screen


def _run_loop(tmux: stress.Tmux, start: float, timeout: float, done) -> tuple[float | None, stress.Prober, str]:
    """Probe keys until `done(screen)`; returns (seconds from start or None, the prober, the last screen)."""
    prober = stress.Prober(tmux)
    prober.next_at = time.perf_counter() + 0.02
    deadline = start + timeout
    screen = ""
    while time.perf_counter() < deadline:
        screen = tmux.screen()
        if done(screen):
            return time.perf_counter() - start, prober, screen
        if time.perf_counter() >= prober.next_at:
            screen = prober.probe(screen, max(0.5, deadline - time.perf_counter()), done)
            continue
        time.sleep(stress.POLL)
    return None, prober, screen


def _debug(title: str, screen: str) -> None:
    if os.environ.get("RAT_STRESS_DEBUG"):
        print(f"-- {title}:\n{screen}", file=sys.stderr)


def _failed(tmux: stress.Tmux, result: dict, why: str, screen: str) -> dict:
    result["error"] = why
    result["screen"] = screen
    result["rss_mb"] = tmux.peak_rss_mb()
    _debug(why, screen)
    return result


# -- tabs20 ----------------------------------------------------------------------------------------


def _slots(folder: Path) -> int:
    return len(list(folder.glob("slot-*")))


def run_tabs20(scale: float, timeout: float, root: Path) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="rat-stress-go-"))
    go = folder / "go"
    env = {**stress.fresh_env(scale), "RAT_STRESS_GO": str(go), "RAT_STRESS_NAME": AGENT_NAME}
    tmux = stress.Tmux([*stress.RAT, *stress.AGENT], env, root)
    result: dict = {}
    ready = lambda s: stress.READY.search(s) is not None  # noqa: E731 (the status bar of the visible tab)
    prompt = f"sync {TAB_WORKLOAD}"
    try:
        for tab in range(1, TABS + 1):
            if tab > 1:
                tmux.keys("C-n")
                seen, screen = stress.wait_for(tmux, lambda s: "New session" in s, 10, 0.02)
                if seen is None:
                    return _failed(tmux, result, f"Ctrl+N showed no new-session dialog for tab {tab}", screen)
                tmux.keys("Enter")
            seen, screen = stress.wait_for(tmux, lambda s: "New session" not in s and ready(s), 30, 0.02)
            if seen is None:
                return _failed(tmux, result, f"tab {tab} never ready", screen)
            tmux.keys(prompt, literal=True)
            stress.wait_for(tmux, lambda s: prompt in s, 5, 0.01)
            tmux.keys("Enter")
            seen, screen = stress.wait_for(tmux, lambda s, tab=tab: _slots(folder) >= tab and not ready(s), 30, 0.02)
            if seen is None:
                return _failed(tmux, result, f"tab {tab}'s prompt never reached its agent", screen)
        # Every agent waits for the go file now; the titles may still be on their way to the tab bar.
        seen, screen = stress.wait_for(tmux, lambda s: _tab_bar(s).count(BUSY) == TABS, 30, 0.05)
        if seen is None:
            return _failed(tmux, result, f"the tab bar never showed {TABS} busy tabs", screen)
        end = f"END-{TAB_WORKLOAD}"
        done = lambda s: end in s and BUSY not in _tab_bar(s)  # noqa: E731
        go.touch()
        start = time.perf_counter()
        result, screen = _measure(tmux, result, start, timeout, done)
        result["tabs_done"] = _tab_bar(screen).count("✓")  # the hidden tabs that finished: TABS - 1 expected
        return result
    finally:
        tmux.close()


async def _client(scale: float, go_folder: Path) -> tuple[asyncio.subprocess.Process, asyncio.Task]:
    """A parse-only client on its own agent, its `sync` prompt sent; the task ends with the prompt's answer."""
    env = {**os.environ, "RAT_STRESS_SCALE": str(scale), "RAT_STRESS_GO": str(go_folder / "go")}
    proc = await asyncio.create_subprocess_exec(*stress.AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                limit=1 << 30, env=env)
    assert proc.stdin and proc.stdout

    async def send(mid: int, method: str, params: dict) -> None:
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": mid, "method": method, "params": params}) + "\n").encode())
        await proc.stdin.drain()

    async def answer(mid: int) -> float:
        while True:
            msg = json.loads(await proc.stdout.readline())
            if msg.get("id") == mid and "method" not in msg:
                return time.perf_counter()

    await send(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    await answer(0)
    await send(1, "session/new", {"cwd": os.getcwd(), "mcpServers": []})
    await answer(1)
    await send(2, "session/prompt", {"sessionId": "stress", "prompt": [{"type": "text",
                                                                         "text": f"sync {TAB_WORKLOAD}"}]})
    return proc, asyncio.create_task(answer(2))


async def floor_tabs20(scale: float) -> float:
    folder = Path(tempfile.mkdtemp(prefix="rat-stress-go-"))
    clients = [await _client(scale, folder) for _ in range(TABS)]
    while _slots(folder) < TABS:  # every agent waits for the go file
        await asyncio.sleep(0.01)
    (folder / "go").touch()
    start = time.perf_counter()
    ends = await asyncio.gather(*(task for _, task in clients))
    elapsed = max(ends) - start
    for proc, _ in clients:
        assert proc.stdin
        proc.stdin.close()
        await proc.wait()
    return elapsed


# -- load50000 -------------------------------------------------------------------------------------


def run_load50000(scale: float, timeout: float, root: Path) -> dict:
    tmux = stress.Tmux([*stress.RAT, *stress.AGENT], stress.fresh_env(scale), root)
    result: dict = {}
    try:
        seen, screen = stress.wait_for(tmux, lambda s: stress.READY.search(s) is not None, 30, 0.02)
        if seen is None:
            return _failed(tmux, result, "never ready", screen)
        tmux.keys("C-b")
        seen, screen = stress.wait_for(tmux, lambda s: STORED_TITLE in s, 10, 0.02)
        if seen is None:
            return _failed(tmux, result, "Ctrl+B never listed the stored session", screen)
        tmux.keys("Enter")
        start = time.perf_counter()
        done = lambda s: LOAD_MARKER in s  # noqa: E731
        # The second tab's label in the tab bar: from then on keys go to its composer.
        seen, screen = stress.wait_for(tmux, lambda s: _tab_bar(s).count("stress") >= 2 or done(s), timeout, 0.005)
        if seen is None:
            return _failed(tmux, result, "the session never opened in a tab", screen)
        return _measure(tmux, result, start, timeout, done)[0]
    finally:
        tmux.close()


async def floor_load50000(scale: float) -> float:
    """Spawn -> initialize -> session/load answered (the app's new tab spawns its agent too)."""
    env = {**os.environ, "RAT_STRESS_SCALE": str(scale)}
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(*stress.AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                limit=1 << 30, env=env)
    assert proc.stdin and proc.stdout
    await rpc.call(proc, 0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    await rpc.call(proc, 1, "session/load", {"sessionId": "stored-session", "cwd": os.getcwd(), "mcpServers": []})
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    await proc.wait()
    return elapsed


RUNNERS = {"tabs20": run_tabs20, "load50000": run_load50000}
FLOORS = {"tabs20": floor_tabs20, "load50000": floor_load50000}
