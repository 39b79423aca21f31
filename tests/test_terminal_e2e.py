"""The installed `rat` command in a real terminal (tmux): launch on the demo agent, chat, quit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal"),
]


class Tmux:
    def __init__(self, env: dict[str, str]) -> None:
        self.name = f"rat-e2e-{uuid.uuid4().hex[:8]}"
        self.env = env

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", *args], capture_output=True, text=True, env=self.env, check=True).stdout

    def start(self, command: list[str], cwd: Path) -> None:
        line = " ".join(_quote(part) for part in command)
        self.run("new-session", "-d", "-s", self.name, "-x", "120", "-y", "48", "-c", str(cwd), line)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def alive(self) -> bool:
        return subprocess.run(["tmux", "has-session", "-t", self.name], env=self.env, capture_output=True).returncode == 0

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen() if self.alive() else ""
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")

    def kill(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], env=self.env, capture_output=True)


def _quote(part: str) -> str:
    return "'" + part.replace("'", "'\\''") + "'"


def test_rat_launches_on_the_demo_agent_and_answers(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# A project\n")
    env = {**os.environ, "TERM": "xterm-256color", "TMUX_TMPDIR": str(tmp_path), "RAT_DEMO_DELAY": "0.001"}
    env.pop("TMUX", None)
    tmux = Tmux(env)
    rpc_log = tmp_path / "rpc.jsonl"
    tmux.start([sys.executable, "-m", "rat_tui", "--cwd", str(tmp_path), "--rpc-log", str(rpc_log)], tmp_path)
    try:
        screen = tmux.wait_for("ready")
        assert "Demo agent" in screen
        tmux.keys("-l", "hello from tmux")
        tmux.keys("Enter")
        screen = tmux.wait_for("def greet")  # the demo answer's code block, rendered
        tmux.wait_for("ready")
        tmux.keys("C-q")
        deadline = time.monotonic() + 15
        while tmux.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not tmux.alive(), "rat did not quit on Ctrl+Q"
    finally:
        tmux.kill()
    assert '"session/prompt"' in rpc_log.read_text()
