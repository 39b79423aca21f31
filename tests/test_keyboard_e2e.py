"""Approvals only on purpose, in a real terminal (tmux): keys typed one by one at typing speed while an
agent's permission request arrives, in the same tab and in a background tab.

No answer may reach the agent until a deliberate key opens the request; the composer keeps every
character typed; "always" is never given by one key.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from .helpers.agents import received
from .helpers.tmux import Tmux, rat_on_script, send_prompt

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal"),
]

def permission_step(call_id: str, command: str, request_id: str) -> dict:
    options = [{"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
               {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
               {"optionId": "reject", "name": "Reject", "kind": "reject_once"}]
    return {"request": {"id": request_id, "method": "session/request_permission", "params": {
        "sessionId": "$SESSION", "options": options,
        "toolCall": {"toolCallId": call_id, "title": f"`{command}`", "kind": "execute", "rawInput": {"command": command}}}}}


KEY_GAP = 0.12  # 100 words a minute: about 120 ms between keys
# Words full of the dialog's answer keys (a: always, n: reject, y: allow, 1: the first option).
TYPED = "i was typing a long message, any answer: yes no always 1"


def start(tmp_path: Path, release: Path) -> tuple[Tmux, Path]:
    script = {"turns": [[{"wait_file": str(release)}, permission_step("rm-1", "rm -rf build", request_id="perm-1"),
                         {"chunk": "after permission"}]]}
    record = tmp_path / "received.jsonl"
    return rat_on_script(tmp_path, script, record), record


def type_slowly(tmux: Tmux, text: str, release: Path | None = None, release_after: int = 0) -> None:
    """One key at a time, as a person types; the agent's request is released mid-word."""
    for index, char in enumerate(text):
        if release is not None and index == release_after:
            release.touch()
        tmux.keys("-l", char)
        time.sleep(KEY_GAP)


def answers(record: Path) -> list[dict]:
    return [m for m in received(record) if m.get("id") == "perm-1" and "method" not in m]


def quit_app(tmux: Tmux) -> None:
    tmux.keys("C-q")
    deadline = time.monotonic() + 15
    while tmux.alive() and time.monotonic() < deadline:
        time.sleep(0.1)


def test_request_in_the_same_tab_waits_while_typing_and_always_needs_enter(tmp_path: Path) -> None:
    release = tmp_path / "release"
    tmux, record = start(tmp_path, release)
    try:
        tmux.wait_for("ready")
        send_prompt(tmux, "go")
        tmux.wait_for("working")
        type_slowly(tmux, TYPED, release, release_after=8)  # the request arrives while "typing" is typed
        screen = tmux.wait_for("1 request waiting")
        screen = tmux.wait_for("always 1")  # the last key typed reached the composer
        assert "asks for permission" not in screen
        assert TYPED in screen  # every character, in the composer
        assert answers(record) == []  # nothing answered: the dialog never opened
        tmux.keys("C-g")  # the deliberate key
        tmux.wait_for("asks for permission")
        time.sleep(0.6)  # a person reads the dialog (longer than the grace period)
        tmux.keys("a")
        tmux.wait_for("Enter confirms")  # "always" asks for a confirmation: one key is not enough
        assert answers(record) == []
        tmux.keys("Escape")  # any other key goes back to the options
        tmux.wait_for("a always (then Enter)")
        assert answers(record) == []
        time.sleep(0.6)  # reading again: the confirmation step started a new grace period
        tmux.keys("a")
        tmux.wait_for("Enter confirms")
        time.sleep(0.6)
        tmux.keys("Enter")
        screen = tmux.wait_for("after permission")
        assert TYPED in screen  # the draft is still in the composer
        [answer] = answers(record)
        assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow_always"}
        quit_app(tmux)
    finally:
        tmux.kill()


def test_a_quick_answer_from_someone_who_was_not_typing_is_taken(tmp_path: Path) -> None:
    release = tmp_path / "release"
    tmux, record = start(tmp_path, release)
    try:
        tmux.wait_for("ready")
        send_prompt(tmux, "go")
        tmux.wait_for("working")
        time.sleep(1.2)  # hands off the keyboard, watching the agent work (longer than TYPING_WINDOW)
        release.touch()
        tmux.wait_for("asks for permission")
        assert "reading…" not in tmux.screen()  # no grace to show: nobody was typing
        time.sleep(0.3)  # seen, and answered at once (the grace for typists is 0.5 s)
        tmux.keys("y")
        tmux.wait_for("after permission")
        [answer] = answers(record)
        assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
        quit_app(tmux)
    finally:
        tmux.kill()


def test_a_dialog_arriving_as_you_type_shows_its_grace_then_takes_an_answer(tmp_path: Path) -> None:
    release = tmp_path / "release"
    tmux, record = start(tmp_path, release)
    try:
        tmux.wait_for("ready")
        send_prompt(tmux, "go")
        tmux.wait_for("working")
        type_slowly(tmux, "abc")
        for _ in "abc":  # ... and thought better of it: the composer is empty again, so the dialog opens
            tmux.keys("BSpace")
            time.sleep(KEY_GAP)
        release.touch()  # right after the last key: the person was typing as it came
        tmux.wait_for("reading…")  # the grace, visible under the dialog
        tmux.wait_until(lambda s: "reading…" not in s and "asks for permission" in s, "the grace over")
        assert answers(record) == []
        tmux.keys("y")
        tmux.wait_for("after permission")
        [answer] = answers(record)
        assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
        quit_app(tmux)
    finally:
        tmux.kill()


def test_request_from_a_background_tab_never_covers_the_current_one(tmp_path: Path) -> None:
    release = tmp_path / "release"
    tmux, record = start(tmp_path, release)
    try:
        tmux.wait_for("ready")
        send_prompt(tmux, "go")
        tmux.wait_for("working")
        tmux.keys("C-n")  # a second tab on the same agent
        tmux.wait_for("New session")
        tmux.keys("Enter")
        # The second tab is shown and ready: the dialog is gone and the status bar (the current tab's) says
        # ready, which the first tab, still working, cannot. ("scripted", the agent's command in the dialog,
        # proved nothing: the dialog could close before any screen showed it, under load.)
        tmux.wait_until(lambda s: "New session" not in s and "● ready" in s, "the second tab, ready")
        type_slowly(tmux, TYPED, release, release_after=3)
        announced = time.monotonic()  # at the latest (the request came as the typing began)
        screen = tmux.wait_for("always 1")
        screen = tmux.wait_for("⚠ ")  # the first tab's badge
        # and a reminder in the current tab's status bar that lasts (the toast fades)
        screen = tmux.wait_for("⚠ 1 request waiting in tab 1 · ^g opens")
        assert "asks for permission" not in screen
        # The toast ("Waiting for you") has its 6 s and goes; the reminder stays until the request is answered.
        time.sleep(max(0.0, 6.5 - (time.monotonic() - announced)))
        screen = tmux.wait_until(lambda s: "Waiting for you" not in s, "the toast gone by itself")
        assert "⚠ 1 request waiting in tab 1 · ^g opens" in screen
        assert TYPED in screen
        assert answers(record) == []
        tmux.keys("C-g")  # jumps to the first tab and opens its request
        tmux.wait_for("asks for permission")
        time.sleep(0.6)
        tmux.keys("n")
        tmux.wait_for("ready")
        [answer] = answers(record)
        assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "reject"}
        tmux.keys("M-2")  # Alt+2 (ESC 2 in tmux) back to the second tab: the draft is whole
        screen = tmux.wait_for(TYPED)
        assert "request waiting" not in screen  # answered: the reminder is gone
        quit_app(tmux)
    finally:
        tmux.kill()


def test_a_dialog_that_opens_as_a_key_is_typed_gives_the_key_to_the_composer(tmp_path: Path) -> None:
    """The composer is empty (the request may open by itself), and a key lands just as it opens."""
    release = tmp_path / "release"
    tmux, record = start(tmp_path, release)
    try:
        tmux.wait_for("ready")
        send_prompt(tmux, "go")
        tmux.wait_for("working")
        release.touch()
        tmux.wait_for("asks for permission")
        tmux.keys("-l", "yes")  # typed within the grace period: withdraws the dialog, goes to the composer
        # The status bar may say so a frame before the dialog is off the screen: wait for both.
        tmux.wait_until(lambda s: "1 request waiting" in s and "asks for permission" not in s,
                        "the dialog withdrawn and its request waiting")
        tmux.wait_for("yes")
        assert answers(record) == []
        tmux.keys("C-g")  # it opens again only on purpose
        tmux.wait_for("asks for permission")
        time.sleep(0.6)
        tmux.keys("y")
        tmux.wait_for("after permission")
        [answer] = answers(record)
        assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
        quit_app(tmux)
    finally:
        tmux.kill()
