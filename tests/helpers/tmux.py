"""A real terminal (tmux) for what only a terminal shows."""

from __future__ import annotations

import re
import subprocess
import time
import uuid
from pathlib import Path


class Tmux:
    def __init__(self, env: dict[str, str]) -> None:
        self.name = f"rat-e2e-{uuid.uuid4().hex[:8]}"
        # The pane's size is the one `start` gives it: COLUMNS and LINES (a shell's, pytest-xdist's 80x24)
        # would override it for the program in the pane.
        self.env = {name: value for name, value in env.items() if name not in ("COLUMNS", "LINES")}

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

    def wait_until(self, test, what: str, timeout: float = 30.0) -> str:
        """The first screen `test(screen)` holds for (a state, where `wait_for` is one text)."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen() if self.alive() else ""
            if test(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"never saw {what}; the screen was:\n{screen}")

    def kill(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], env=self.env, capture_output=True)


def _quote(part: str) -> str:
    return "'" + part.replace("'", "'\\''") + "'"


def rat_on_script(tmp_path: Path, script: dict, record: Path | None = None) -> Tmux:
    """The installed app in a real terminal on the scripted agent playing `script` (tests/agents/);
    `record`: where the agent writes every line it receives from rat."""
    import os
    import sys

    from .agents import scripted_argv

    env = {**os.environ, "TERM": "xterm-256color", "TMUX_TMPDIR": str(tmp_path)}
    env.pop("TMUX", None)
    if record is not None:
        env["RAT_FAKE_RECORD"] = str(record)
    tmux = Tmux(env)
    tmux.start([sys.executable, "-m", "rat_tui", "--cwd", str(tmp_path), "--", *scripted_argv(script, tmp_path)],
               tmp_path)
    return tmux


def send_prompt(tmux: Tmux, text: str) -> None:
    """Type `text` into the composer and send it."""
    tmux.keys("-l", text)
    tmux.keys("Enter")


def drag(tmux: Tmux, start: tuple[int, int], end: tuple[int, int]) -> None:
    """A left-button drag as the terminal reports it (SGR mouse mode), from `start` to `end` (1-based column and
    row), one row at a time, as a hand moves the mouse."""
    (x0, y0), (x1, y1) = start, end
    tmux.keys("-l", f"\x1b[<0;{x0};{y0}M")
    step = 1 if y1 >= y0 else -1
    for row in range(y0 + step, y1 + step, step):
        tmux.keys("-l", f"\x1b[<32;{x1};{row}M")  # 32: motion with the button held
        time.sleep(0.05)
    tmux.keys("-l", f"\x1b[<0;{x1};{y1}m")


def wait_until(predicate, what: str, timeout: float = 30.0) -> None:
    """Poll `predicate` (no terminal needed) until it holds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def last_line_on(screen: str) -> int:
    """The highest "line NNNNN of the stream" on a screen of the streaming agent (-1: none yet)."""
    numbers = [int(n) for n in re.findall(r"line (\d{5}) of the stream", screen)]
    return max(numbers) if numbers else -1
