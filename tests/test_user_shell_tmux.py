"""The tab's own shell in a real terminal (tmux): `!` commands typed key by key while the agent streams."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from rat_tui.history.journal import HistoryJournal, default_path
from rat_tui.history.rebuild import rebuild
from rat_tui.state import shell

from .helpers.shell import processes_in
from .helpers.tmux import Tmux, last_line_on, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal"),
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc"),
]

AGENTS = Path(__file__).parent / "agents"
LINES = 4000




def type_keys(tmux: Tmux, text: str) -> None:
    for char in text:  # one key at a time, as a person types
        tmux.keys("-l", char)


def test_bang_commands_typed_while_the_agent_streams(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    steps: list[dict] = []
    for n in range(LINES):
        steps += [{"chunk": f"line {n:05d} of the stream\n"}, {"sleep": 0.005}]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [steps]}))
    env = {**os.environ, "TERM": "xterm-256color", "TMUX_TMPDIR": str(tmp_path)}
    env.pop("TMUX", None)
    tmux = Tmux(env)
    agent = [sys.executable, str(AGENTS / "scripted_agent.py"), str(script)]
    tmux.start(["exec", sys.executable, "-m", "rat_tui", "--cwd", str(project), "--", *agent], project)
    sub = os.path.realpath(project / "sub")
    try:
        tmux.wait_for("ready")
        type_keys(tmux, "stream please")
        tmux.keys("Enter")
        wait_until(lambda: last_line_on(tmux.screen()) >= 100, "the stream to be under way")
        type_keys(tmux, "!cd sub")
        tmux.keys("Enter")
        type_keys(tmux, "!pwd")
        tmux.keys("Enter")
        screen = tmux.wait_until(lambda s: "! pwd" in s and sub in s, "the pwd card showing the subdirectory")
        during = last_line_on(screen)
        assert during < LINES - 1, "the stream ended before the commands ran: nothing was shown alongside it"
        type_keys(tmux, "!echo $((6*7))")
        tmux.keys("Enter")
        tmux.wait_until(lambda s: re.search(r"^\s+42\s*$", s, re.M) is not None, "the arithmetic's answer")
        wait_until(lambda: last_line_on(tmux.screen()) > during, "the stream to go on after the commands")
        tmux.keys("C-q")
        tmux.wait_for("Stop it and quit?")  # the turn still streams
        tmux.keys("y")
        try:
            wait_until(lambda: not tmux.alive(), "rat to quit", timeout=20)
        except AssertionError:
            raise AssertionError("rat did not quit; the screen was:\n" + tmux.screen()) from None
    finally:
        tmux.kill()
    wait_until(lambda: processes_in(project) == [], "every process of the tab to be gone", timeout=10)
    journal = HistoryJournal(default_path())
    try:
        (info,) = journal.sessions()
        cards = shell.shell_entries(rebuild(journal.records(info.id)).store.state)
    finally:
        journal.close()
    assert [card.command for card in cards] == ["cd sub", "pwd", "echo $((6*7))"]
    assert cards[1].exit_code == 0 and cards[1].cwd.endswith("project/sub")  # where it ran


def echo_times(tmux: Tmux, word: str, prompt_line) -> list[float]:
    """Each key of `word` typed alone, and how long until the terminal shows it in the prompt."""
    times = []
    typed = ""
    for char in word:
        typed += char
        started = time.perf_counter()
        tmux.keys("-l", char)
        deadline = started + 30
        # Polled as fast as tmux answers (Tmux.wait_until sleeps 0.1 s between looks: too coarse to time an echo).
        while not prompt_line(tmux.screen()).endswith(typed):
            if time.perf_counter() > deadline:
                raise AssertionError(f"{typed!r} never echoed; the screen was:\n{tmux.screen()}")
        times.append(time.perf_counter() - started)
    return times


def test_keys_echo_while_a_command_floods_the_card(tmp_path: Path) -> None:
    import statistics

    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "TERM": "xterm-256color", "TMUX_TMPDIR": str(tmp_path)}
    env.pop("TMUX", None)
    tmux = Tmux(env)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [[{"chunk": "ok"}]]}))
    agent = [sys.executable, str(AGENTS / "scripted_agent.py"), str(script)]
    tmux.start(["exec", sys.executable, "-m", "rat_tui", "--cwd", str(project), "--", *agent], project)

    def prompt_line(screen: str) -> str:
        lines = [line for line in screen.splitlines() if line.startswith("▊ ")]
        return lines[-1][2:].rstrip(" ▎") if lines else ""

    try:
        tmux.wait_for("ready")
        floor = echo_times(tmux, "quiet", prompt_line)
        for _ in "quiet":
            tmux.keys("BSpace")
        tmux.wait_until(lambda s: prompt_line(s).startswith("Message the agent"), "the prompt emptied")
        type_keys(tmux, "!head -c 50000000 /dev/zero | tr '\\0' y | fold -w 99")
        tmux.keys("Enter")
        tmux.wait_until(lambda s: "running…" in s, "the card running")
        busy = echo_times(tmux, "typing", prompt_line)
        still = "running…" in tmux.screen()
        screen = tmux.wait_until(lambda s: "exit code 0" in s, "the flood to end", timeout=120)
        assert "earlier lines (v to view all)" in screen
        tmux.keys("C-q")
        wait_until(lambda: not tmux.alive(), "rat to quit", timeout=20)
    finally:
        tmux.kill()
    print(f"\nkey echo on screen (tmux), median / max: idle {statistics.median(floor) * 1000:.0f} / "
          f"{max(floor) * 1000:.0f} ms; during a 50 MB !command {statistics.median(busy) * 1000:.0f} / "
          f"{max(busy) * 1000:.0f} ms (ratio of medians {statistics.median(busy) / statistics.median(floor):.1f}x; "
          f"the flood {'still ran' if still else 'had ended'} after the last key)")
