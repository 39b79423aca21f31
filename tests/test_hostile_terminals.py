"""Hostile terminal/create requests over real pipes: a NUL byte anywhere is invalid params and leaks no PTY;
a session holds at most MAX_TERMINALS; a command that leaves its session (setsid, a daemon's double fork)
is killed with it by terminal/kill and when the session ends; a thousand creates keep the loop live."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.protocol import terminals
from rat_tui.protocol.router import INVALID_PARAMS
from rat_tui.session.agent_session import AgentSession

from .helpers.agents import scripted_argv
from .helpers.harness import finish, wait_for

# Forks, leaves for a new session, forks again (the daemon), writes the daemon's pid; the first child exits.
DAEMON = ("import os, sys, time\n"
          "if os.fork() == 0:\n"
          "    os.setsid()\n"
          "    if os.fork() == 0:\n"
          "        open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid())); os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
          "        time.sleep(300)\n"
          "    os._exit(0)\n"
          "time.sleep(300)\n")


def create(request_id: int, command: str, **more) -> dict:
    return {"request": {"id": request_id, "method": "terminal/create",
                        "params": {"sessionId": "$SESSION", "command": command, **more}}, "wait": False}


def call(request_id: int, method: str, terminal_id: str) -> dict:
    return {"request": {"id": request_id, "method": method,
                        "params": {"sessionId": "$SESSION", "terminalId": terminal_id}}, "wait": False}


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "received.jsonl"
    monkeypatch.setenv("RAT_FAKE_RECORD", str(path))
    return path


def answers(record: Path) -> dict:
    """rat's answers the agent recorded so far (a line it is still writing is left for the next look)."""
    found = {}
    for line in record.read_text().splitlines() if record.exists() else []:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "method" not in message and isinstance(message.get("id"), int):
            found[message["id"]] = message
    return found


async def started(tmp_path: Path, turns: list) -> tuple[AgentSession, asyncio.Task]:
    command = SimpleNamespace(name="terms", argv=scripted_argv({"turns": turns}, tmp_path), env={})
    session = AgentSession(command, tmp_path)
    task = asyncio.create_task(session.run())
    await wait_for(lambda: session.state.status == "ready", what="handshake")
    return session, task


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_a_nul_byte_anywhere_is_invalid_params_and_leaks_no_pty(tmp_path: Path, record: Path) -> None:
    steps = [create(1, "true")]  # one that works first: its PTY is open before the count
    bad = [("command", {"command": "ec\0ho"}), ("args", {"command": "echo", "args": ["a\0b"]}),
           ("cwd", {"command": "true", "cwd": str(tmp_path) + "\0x"}),
           ("env", {"command": "true", "env": [{"name": "A", "value": "x\0y"}]}),
           ("env", {"command": "true", "env": [{"name": "A\0B", "value": "x"}]})]
    for index, (_, params) in enumerate(bad * 20):
        steps.append({"request": {"id": 100 + index, "method": "terminal/create",
                                  "params": {"sessionId": "$SESSION", **params}}, "wait": False})
    session, task = await started(tmp_path, [steps])
    try:
        session.start_prompt("go")
        await wait_for(lambda: 1 in answers(record), what="the first terminal")
        before = open_fds()
        await wait_for(lambda: all(100 + i in answers(record) for i in range(len(bad) * 20)), timeout=30,
                       what="the answers")
        got = answers(record)
        for index, (what, _) in enumerate(bad * 20):
            error = got[100 + index]["error"]
            assert error["code"] == INVALID_PARAMS, error
            assert "NUL byte" in error["message"] and what in error["message"] and "Traceback" not in str(error)
        assert open_fds() <= before  # no PTY (or pipe) left open by any of the hundred
    finally:
        await finish(session, task)


async def test_past_the_limit_terminal_create_is_refused_clearly(tmp_path: Path, record: Path) -> None:
    count = terminals.MAX_TERMINALS + 6
    session, task = await started(tmp_path, [[create(i, "sleep 30") for i in range(count)]])
    try:
        session.start_prompt("go")
        await wait_for(lambda: len(answers(record)) >= count, timeout=60, what="the answers")
        got = answers(record)
        ok = [i for i in range(count) if "result" in got[i]]
        refused = [got[i]["error"] for i in range(count) if "error" in got[i]]
        assert len(ok) == terminals.MAX_TERMINALS and len(refused) == 6
        assert all(e["code"] == terminals.TERMINAL_LIMIT and e["message"].startswith(
            f"Too many terminals: {terminals.MAX_TERMINALS} are open in this session") for e in refused)
    finally:
        await finish(session, task)


async def test_a_daemonising_command_dies_with_kill_and_with_the_session(tmp_path: Path, record: Path) -> None:
    script = tmp_path / "daemon.py"
    script.write_text(DAEMON)
    first, second = tmp_path / "first.pid", tmp_path / "second.pid"
    steps = [create(1, sys.executable, args=[str(script), str(first)]),
             create(2, sys.executable, args=[str(script), str(second)]),
             {"wait_file": str(tmp_path / "kill-now")}]
    session, task = await started(tmp_path, [steps])
    try:
        session.start_prompt("go")
        await wait_for(lambda: first.exists() and second.exists(), timeout=30, what="both daemons")
        daemon_one, daemon_two = int(first.read_text()), int(second.read_text())
        assert alive(daemon_one) and alive(daemon_two)
        assert os.getsid(daemon_one) != os.getsid(os.getpid())
        terminal_id = answers(record)[1]["result"]["terminalId"]
        # terminal/kill, from the agent
        await session.terminals.kill({"terminalId": terminal_id})
        await wait_for(lambda: not alive(daemon_one), timeout=10, what="the first daemon gone")
        assert alive(daemon_two)
    finally:
        (tmp_path / "kill-now").write_text("")
        await finish(session, task)  # the session ends: every terminal's tree with it
    await wait_for(lambda: not alive(daemon_two), timeout=10, what="the second daemon gone")


async def test_a_thousand_creates_keep_the_loop_live(tmp_path: Path, record: Path) -> None:
    count = 1000
    session, task = await started(tmp_path, [[create(i, "true") for i in range(count)]])
    worst = 0.0
    threads = threading.active_count()
    stop = False

    async def ticker() -> None:
        nonlocal worst, threads
        last = time.monotonic()
        while not stop:
            await asyncio.sleep(0.005)
            now = time.monotonic()
            worst = max(worst, now - last)
            threads = max(threads, threading.active_count())
            last = now

    try:
        ticking = asyncio.create_task(ticker())
        await asyncio.sleep(0.05)
        base_threads = threading.active_count()
        session.start_prompt("go")
        await wait_for(lambda: len(answers(record)) >= count, timeout=120, what="a thousand answers")
        stop = True
        await ticking
        print(f"1,000 terminal/create: worst loop stall {worst * 1000:.0f} ms, "
              f"threads {base_threads} -> at most {threads}")
        assert threads - base_threads <= 12
        assert worst < 1.0
    finally:
        await finish(session, task)
