"""The fleet board in a real terminal (tmux): a person types a sentence, key by key, with the board open while
an agent's request arrives. Nothing the letters of the words spell (`a` answer, `s` stop, `y` allow) reaches
the agent; the request waits, announced on the board, until `a` is pressed on its own."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from .helpers.agents import received
from .helpers.tmux import rat_on_script, send_prompt

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal"),
]

KEY_GAP = 0.12  # 100 words a minute
TYPED = "i was typing a sentence, yes: stop and say always 1"
OPTIONS = [{"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
           {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
           {"optionId": "reject", "name": "Reject", "kind": "reject_once"}]


def test_typing_on_the_board_while_a_request_arrives(tmp_path: Path) -> None:
    release = tmp_path / "release"
    ask = {"request": {"id": "perm-1", "method": "session/request_permission", "params": {
        "sessionId": "$SESSION", "options": OPTIONS,
        "toolCall": {"toolCallId": "rm-1", "title": "`rm -rf build`", "kind": "execute",
                     "rawInput": {"command": "rm -rf build"}}}}}
    script = {"turns": [[{"wait_file": str(release)}, ask, {"chunk": "after permission"}]]}
    record = tmp_path / "received.jsonl"
    tmux = rat_on_script(tmp_path, script, record)
    try:
        tmux.wait_for("ready")
        send_prompt(tmux, "go")
        tmux.wait_for("working")
        tmux.keys("F12")
        tmux.wait_for("Fleet board")
        for index, char in enumerate(TYPED):
            if index == 6:
                release.touch()  # the request arrives mid-word
            tmux.keys("-l", char)
            time.sleep(KEY_GAP)
        screen = tmux.wait_for("needs you")
        assert "Fleet board" in screen and "Allow" not in screen  # it waits, the board still up
        tmux.wait_for("That looked like typing")
        answers = [m for m in received(record) if m.get("id") == "perm-1" and "method" not in m]
        assert answers == []
        assert not [m for m in received(record) if m.get("method") == "session/cancel"]
        time.sleep(1.0)  # a pause, then `a` on its own: deliberate
        tmux.keys("-l", "a")
        tmux.wait_for("Allow")
        time.sleep(0.7)  # (the dialog's own grace period)
        tmux.keys("-l", "y")
        deadline = time.monotonic() + 15
        while not [m for m in received(record) if m.get("id") == "perm-1" and "method" not in m]:
            assert time.monotonic() < deadline, "the deliberate answer never reached the agent"
            time.sleep(0.1)
        [answer] = [m for m in received(record) if m.get("id") == "perm-1" and "method" not in m]
        assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
        tmux.keys("C-q")
    finally:
        tmux.kill()
