"""The installed `rat` command in a real terminal (tmux): launch on the demo agent, chat, quit."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from .helpers.tmux import Tmux

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal"),
]


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
