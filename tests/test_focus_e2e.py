"""What you type goes where you meant, in a real terminal (tmux): a mouse click in the transcript, then a
sentence typed key by key at typing speed. The sentence lands whole in the composer; its letters (d opens
the diff, s a subagent, t, o, ...) run nothing."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from .helpers.tmux import Tmux, rat_on_script, send_prompt

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
    tmux = rat_on_script(tmp_path, script)
    try:
        tmux.wait_for("ready")
        send_prompt(tmux, "go")
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


def test_backspaces_typed_fast_among_letters_act_where_they_fell(tmp_path: Path) -> None:
    """A word typed, erased and another typed, as fast as a terminal delivers keys: the prompt sent is the
    second word (Textual runs Backspace once the key has bubbled to the app; letters were typed before it)."""
    from .helpers.agents import received

    record = tmp_path / "received.jsonl"
    answers = ["first answer", "second answer", "third answer"]
    tmux = rat_on_script(tmp_path, {"turns": [[{"chunk": answer}] for answer in answers]}, record)
    try:
        tmux.wait_for("ready")
        for answer in answers:
            tmux.keys("-l", "quiet")
            tmux.keys(*["BSpace"] * 5)
            send_prompt(tmux, "hello")
            tmux.wait_for(answer)
        prompts = [m["params"]["prompt"][0]["text"] for m in received(record) if m.get("method") == "session/prompt"]
        assert prompts == ["hello"] * 3, prompts
    finally:
        tmux.kill()
