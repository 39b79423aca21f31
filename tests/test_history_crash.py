"""kill -9 of rat mid-stream loses nothing it had received: the journal, then the history screen after a restart."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from rat_tui.history.journal import HistoryJournal, default_path

from .helpers.agents import AGENTS
from .helpers.tmux import Tmux

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal"),
]

LINES = 3000


def streaming_script() -> dict:
    steps: list[dict] = []
    for n in range(LINES):
        steps += [{"chunk": f"line {n:05d} of the stream\n"}, {"sleep": 0.005}]
    return {"turns": [steps]}


def wait_until(predicate, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def last_line_on(screen: str) -> int:
    numbers = [int(n) for n in re.findall(r"line (\d{5}) of the stream", screen)]
    return max(numbers) if numbers else -1


def test_sigkill_mid_stream_loses_no_received_message(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps(streaming_script()))
    written = tmp_path / "written.jsonl"
    env = {**os.environ, "TERM": "xterm-256color", "TMUX_TMPDIR": str(tmp_path), "RAT_FAKE_WRITTEN": str(written)}
    env.pop("TMUX", None)
    tmux = Tmux(env)
    agent = [sys.executable, str(AGENTS / "scripted_agent.py"), str(script)]
    # exec: the pane's process is rat itself, so its pid is the one to kill.
    tmux.start(["exec", sys.executable, "-m", "rat_tui", "--cwd", str(project), "--", *agent], project)
    try:
        tmux.wait_for("ready")
        rat_pid = int(tmux.run("display-message", "-p", "-t", tmux.name, "#{pane_pid}").strip())
        tmux.keys("-l", "stream please")
        tmux.keys("Enter")
        wait_until(lambda: last_line_on(tmux.screen()) >= 200, "the stream to be well under way")
        seen = last_line_on(tmux.screen())
        os.kill(rat_pid, signal.SIGKILL)
        wait_until(lambda: not tmux.alive(), "rat to die")
    finally:
        tmux.kill()

    sent = [json.loads(line) for line in written.read_text().splitlines() if line.strip()]
    streamed = [m for m in sent if m.get("method") == "session/update"]
    assert len(streamed) < LINES, "the agent finished before the kill: nothing was tested"
    journal = HistoryJournal(default_path())
    [info] = journal.sessions()
    inbound = [r.message for r in journal.records(info.id) if r.direction == "in"]
    # What the journal holds is exactly what the agent wrote, in order, up to some point at or past
    # the last line that was on the screen when rat was killed.
    assert inbound == sent[: len(inbound)]
    chunks = [m["params"]["update"]["content"]["text"] for m in inbound if m.get("method") == "session/update"]
    assert len(chunks) >= seen + 1
    assert chunks[seen] == f"line {seen:05d} of the stream\n"
    assert info.first_prompt == "stream please"
    journal.close()

    # rat again (on the demo agent): the history screen shows the killed session up to that line.
    tmux = Tmux(env)
    tmux.start([sys.executable, "-m", "rat_tui", "--cwd", str(project)], project)
    try:
        tmux.wait_for("ready")
        tmux.keys("C-r")
        tmux.wait_for("stream please")
        tmux.keys("Enter")
        tmux.wait_for("replayed")
        tmux.wait_for(f"line {len(chunks) - 1:05d} of the stream", 10)  # the transcript follows its end
        tmux.keys("C-q")
        wait_until(lambda: not tmux.alive(), "rat to quit", 15)
    finally:
        tmux.kill()
