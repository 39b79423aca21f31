"""Agents run below rat's CPU priority (config `agent_nice`, protocol/transport.py `lower_priority`): the
agent's own nice value, which what it starts inherits, and its session's autogroup, which is what the kernel
weighs against rat where autogroup scheduling is on. Real processes over real pipes; the kernel is asked."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.config import AGENT_NICE, Config, validate_config
from rat_tui.protocol import prespawn
from rat_tui.protocol.transport import AgentProcess, autogroup_nice, lower_priority
from rat_tui.ui.tabs.view import SessionView

from .helpers.agents import first_line
from .helpers.app import scripted_named, until

# An agent that, for each line it reads, starts a program of its own and answers with that one's nice value.
CHILD_NICE = [sys.executable, "-c", "import subprocess, sys\nfor line in sys.stdin:\n"
              "    print(subprocess.run([sys.executable, '-c', 'import os; print(os.nice(0))'],"
              " capture_output=True, text=True).stdout.strip(), flush=True)"]


def own_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


def autogroups_settable() -> bool:
    """Whether this machine lets a process set an autogroup's nice value (a kernel with autogroups, a /proc
    that may be written): our own, written back as it is."""
    ours = autogroup_nice("self")
    if ours is None:
        return False
    try:
        Path("/proc/self/autogroup").write_text(str(ours))
    except OSError:
        return False
    return True


async def test_an_agent_and_what_it_starts_run_below_rat(tmp_path: Path) -> None:
    before = own_nice()
    agent = AgentProcess(CHILD_NICE, tmp_path, nice=7)
    await agent.start()
    try:
        assert agent.pid is not None
        assert os.getpriority(os.PRIO_PROCESS, agent.pid) == min(19, own_nice() + 7)
        if autogroups_settable():  # (the agent's session is a group of its own: the group is lowered)
            assert autogroup_nice(agent.pid) == min(19, (autogroup_nice("self") or 0) + 7)
        await agent.write_line(b"start something")
        assert int(await first_line(agent)) == min(19, own_nice() + 7)
    finally:
        await agent.close()
    assert own_nice() == before  # rat's own priority is untouched


async def test_nice_zero_leaves_an_agent_at_rats_priority(tmp_path: Path) -> None:
    agent = AgentProcess(CHILD_NICE, tmp_path)
    await agent.start()
    try:
        assert agent.pid is not None and os.getpriority(os.PRIO_PROCESS, agent.pid) == own_nice()
        if autogroup_nice("self") is not None:
            assert autogroup_nice(agent.pid) == 0  # a new session's autogroup starts at 0
    finally:
        await agent.close()


async def test_the_agent_started_before_the_app_is_lowered_when_adopted(tmp_path: Path) -> None:
    assert prespawn.start(CHILD_NICE, tmp_path, {})
    agent = AgentProcess(CHILD_NICE, tmp_path, nice=3)
    await agent.start()
    try:
        assert agent.pid is not None and os.getpriority(os.PRIO_PROCESS, agent.pid) == min(19, own_nice() + 3)
    finally:
        await agent.close()


async def test_an_agent_already_gone_is_no_error(tmp_path: Path) -> None:
    agent = AgentProcess([sys.executable, "-c", "pass"], tmp_path)
    await agent.start()
    assert await agent.wait() == 0 and agent.pid is not None
    assert lower_priority(agent.pid, 5) == []  # gone (and reaped): nothing lowered, nothing raised


@pytest.mark.slow
async def test_the_app_starts_its_agents_at_the_configured_priority(tmp_path: Path) -> None:
    app = RatApp(scripted_named({}, tmp_path), tmp_path, config=Config(agent_nice=4))
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(SessionView)
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        pid = view.session.process.pid
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, own_nice() + 4)


def test_agent_nice_is_read_from_the_config_and_checked() -> None:
    assert Config().agent_nice == AGENT_NICE
    assert validate_config({"agent_nice": 0}) == (Config(agent_nice=0), [])
    assert validate_config({"agent_nice": 19})[0].agent_nice == 19
    config, problems = validate_config({"agent_nice": 20})
    assert config.agent_nice == AGENT_NICE
    assert problems == ["agent_nice: Input should be less than or equal to 19 (using the default)"]
    assert validate_config({"agent_nice": -1})[1] == ["agent_nice: Input should be greater than or equal to 0 "
                                                      "(using the default)"]
