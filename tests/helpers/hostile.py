"""Shared by the tests that run rat-tui against the hostile agent (tests/agents/hostile_agent.py):
its command line, a tmux pane that captures the app's output bytes, and /proc process checks."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from .agents import AGENTS
from .tmux import Tmux

HOSTILE_AGENT = AGENTS / "hostile_agent.py"
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal")


def hostile_argv(case: str, args: dict | None = None) -> list[str]:
    return [sys.executable, str(HOSTILE_AGENT), case, *([json.dumps(args)] if args else [])]


class CapturedTmux(Tmux):
    """A tmux pane whose output bytes (everything the app writes to its terminal) go to a file."""

    def start_captured(self, command: list[str], cwd: Path, capture: Path) -> None:
        gate = cwd / ".go"
        line = " ".join("'" + part.replace("'", "'\\''") + "'" for part in command)
        self.start(["sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.05; done; exec {line}"], cwd)
        self.run("pipe-pane", "-o", "-t", self.name, f"cat >> '{capture}'")
        gate.write_text("")

    def pid(self) -> int:
        return int(self.run("display-message", "-p", "-t", self.name, "#{pane_pid}").strip())


def tmux_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "TERM": "xterm-256color", "TMUX_TMPDIR": str(tmp_path)}
    env.pop("TMUX", None)
    return env


def descendants(pid: int) -> set[int]:
    """Every live process under `pid` (children, grandchildren, ...), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def wait_gone(pid: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
