"""What you type goes where you meant, in a real terminal (tmux): a mouse click in the transcript, then a
sentence typed key by key at typing speed. The sentence lands whole in the composer; its letters (d opens
the diff, s a subagent, t, o, ...) run nothing."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from .helpers.agents import scripted_argv
from .helpers.tmux import Tmux

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal"),
]

KEY_GAP = 0.08
EDIT = {"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit hello.py", "kind": "edit", "status": "completed",
        "content": [{"type": "diff", "path": "/p/hello.py", "oldText": "a\n", "newText": "b\n"}]}


def click(tmux: Tmux, column: int, row: int) -> None:
    """A left click as the terminal reports it (SGR mouse mode, which Textual turns on), 1-based cells."""
    tmux.keys("-l", f"\x1b[<0;{column};{row}M")
    tmux.keys("-l", f"\x1b[<0;{column};{row}m")


def test_a_click_in_the_transcript_then_a_sentence_keeps_the_sentence(tmp_path: Path) -> None:
    script = {"turns": [[{"update": EDIT}, {"chunk": "I changed hello.py."}]]}
    env = {**os.environ, "TERM": "xterm-256color", "TMUX_TMPDIR": str(tmp_path)}
    env.pop("TMUX", None)
    tmux = Tmux(env)
    tmux.start([sys.executable, "-m", "rat_tui", "--cwd", str(tmp_path), "--", *scripted_argv(script, tmp_path)],
               tmp_path)
    try:
        tmux.wait_for("ready")
        tmux.keys("-l", "go")
        tmux.keys("Enter")
        screen = tmux.wait_for("I changed hello.py.")
        row = next(i for i, line in enumerate(screen.splitlines(), 1) if "I changed hello.py." in line)
        click(tmux, 10, row)
        tmux.keys("F1")  # proof that the click moved the focus: the keys shown are the transcript's
        tmux.wait_for("Keys — Transcript")
        tmux.keys("Escape")
        tmux.wait_until(lambda s: "Keys — Transcript" not in s, "the key list closed")
        sentence = "do the same for hello.py"
        for char in sentence:
            tmux.keys("-l", char)
            time.sleep(KEY_GAP)
        screen = tmux.wait_for(sentence)  # (d opened the full-screen diff viewer: the sentence never showed)
        assert "navigating the transcript" not in screen
        tmux.keys("C-t")  # the deliberate way in: a bar says so
        tmux.wait_for("navigating the transcript")
        tmux.keys("Escape")
        tmux.wait_until(lambda s: "navigating the transcript" not in s, "navigation mode left")
        assert sentence in tmux.screen()
    finally:
        tmux.kill()
