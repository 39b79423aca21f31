"""The first agent starts before the app is imported (protocol/prespawn.py): the session adopts it when it
asks for the same command; any other one is killed, and one nobody adopts dies with `rat`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rat_tui.protocol import prespawn
from rat_tui.protocol.transport import AgentProcess

from .helpers.agents import first_line

ROOT = Path(__file__).resolve().parent.parent
ECHO = [sys.executable, "-c", "import sys\nfor line in sys.stdin: print(line.strip().upper(), flush=True)"]
SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_the_session_adopts_the_agent_started_for_its_command(tmp_path: Path) -> None:
    assert prespawn.start(ECHO, tmp_path, {"RAT_TEST": "1"})
    started = prespawn._waiting[prespawn._key(ECHO, tmp_path, {"RAT_TEST": "1"})].pid
    agent = AgentProcess(ECHO, tmp_path, {"RAT_TEST": "1"})
    await agent.start()
    assert agent.pid == started
    await agent.write_line(b"hello")
    assert await first_line(agent) == b"HELLO"
    assert await agent.close() == 0
    assert agent.returncode == 0 and gone(started)


async def test_another_command_spawns_its_own_and_the_early_one_is_killed(tmp_path: Path) -> None:
    assert prespawn.start(SLEEPER, tmp_path, {})
    early = prespawn._waiting[prespawn._key(SLEEPER, tmp_path, {})]
    agent = AgentProcess(ECHO, tmp_path, {})  # the user picked another agent, say
    await agent.start()
    try:
        assert early.poll() is not None and agent.pid != early.pid
        await agent.write_line(b"x")
        assert await first_line(agent) == b"X"
    finally:
        await agent.close()
    # The same command with another environment is another agent too.
    assert prespawn.start(SLEEPER, tmp_path, {"A": "1"})
    early = prespawn._waiting[prespawn._key(SLEEPER, tmp_path, {"A": "1"})]
    assert prespawn.take(SLEEPER, tmp_path, {"A": "2"}) is None and early.poll() is not None


async def test_an_early_agent_that_died_is_spawned_again(tmp_path: Path) -> None:
    quick = [sys.executable, "-c", "pass"]
    assert prespawn.start(quick, tmp_path, {})
    prespawn._waiting[prespawn._key(quick, tmp_path, {})].wait()
    assert prespawn.take(quick, tmp_path, {}) is None  # AgentProcess spawns it anew, and says why it fails


def test_an_agent_nobody_adopts_dies_with_rat(tmp_path: Path) -> None:
    code = (f"from rat_tui.protocol import prespawn\n"
            f"assert prespawn.start({SLEEPER!r}, {str(tmp_path)!r}, {{}})\n"
            f"print(next(iter(prespawn._waiting.values())).pid)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert gone(int(out.stdout.strip()))

