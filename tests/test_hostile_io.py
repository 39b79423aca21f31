"""Hostile agents against rat-tui's I/O: an agent that stops reading its input, requests held back at quit,
request ids of every JSON type. Real agent subprocesses over real pipes; the real app in tmux where only a
terminal shows it (a freeze, the exit code, the processes left after quit).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from rat_tui.protocol.transport import AgentProcess, WriteBackedUp

from .helpers.agents import received
from .helpers.harness import wait_for
from .helpers.hostile import CapturedTmux, alive, descendants, hostile_argv, needs_tmux, rss_kib, tmux_env, wait_gone


def echo_seconds(tmux: CapturedTmux, typed: str, letters: str) -> tuple[float, str]:
    """Type `letters` one at a time, each once the one before is on the screen; the worst echo (seconds)."""
    worst = 0.0
    for letter in letters:
        typed += letter
        sent = time.monotonic()
        tmux.keys("-l", letter)
        tmux.wait_for(typed, timeout=20)
        worst = max(worst, time.monotonic() - sent)
    return worst, typed


# -- 5. an agent that stops reading its input ------------------------------------------------------


async def test_a_send_to_an_agent_that_stopped_reading_returns_at_once(tmp_path: Path) -> None:
    """The writer task waits on the pipe, never the sender: sends return at once, and past the bound are refused."""
    agent = AgentProcess([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path)  # never reads its stdin
    await agent.start()
    try:
        agent.max_queued_bytes = 4 * 1024 * 1024
        big = b"x" * (1024 * 1024)
        started = time.monotonic()
        sent = refused = 0
        for _ in range(40):
            try:
                await agent.write_line(big)
                sent += 1
            except WriteBackedUp:
                refused += 1
        took = time.monotonic() - started
        assert took < 1.0, f"sending took {took:.2f} s"
        assert 3 <= sent <= 5 and refused == 40 - sent
        assert agent.queued_bytes <= agent.max_queued_bytes
        assert agent.stalled  # the refusal said so (the session shows it as stuck)
    finally:
        started = time.monotonic()
        await agent.close(0.25)
        assert time.monotonic() - started < 2.0
    assert agent.returncode is not None


async def test_messages_reach_a_reading_agent_in_order(tmp_path: Path) -> None:
    script = "import sys\nfor line in sys.stdin: print(line.strip()[-6:], flush=True)"
    agent = AgentProcess([sys.executable, "-c", script], tmp_path)
    await agent.start()
    got: list[bytes] = []
    reader = asyncio.create_task(agent.read_lines(got.append))
    try:
        for n in range(300):
            agent.send_line(b"y" * (n * 100) + b"%06d" % n)  # 4.5 MB in all, queued faster than it is read
        await wait_for(lambda: len(got) == 300, 60, "every line echoed")
        assert got == [b"%06d" % n for n in range(300)]
        assert agent.queued_bytes == 0
    finally:
        reader.cancel()
        await agent.close()


def start_deaf(tmp_path: Path, tabs: int = 1) -> tuple[CapturedTmux, int, Path]:
    """rat in tmux on the deaf agent (stops reading, ignores SIGTERM, a grandchild in its group), which asks for
    a 10 MB file forty times once prompted; (tmux, rat's pid, the project)."""
    project = tmp_path / "project"
    project.mkdir()
    big = project / "big.txt"
    big.write_text(("x" * 1023 + "\n") * 10240)  # 10 MB
    args = {"big_file": str(big), "reads": 40, "child_pid": str(tmp_path / "child.pid")}
    env = {**tmux_env(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    tmux = CapturedTmux(env)
    tmux.start_captured([sys.executable, "-m", "rat_tui", "--cwd", str(project), "--", *hostile_argv("deaf", args)],
                        project, tmp_path / "pane.bytes")
    tmux.wait_for("ready")
    return tmux, tmux.pid(), project


@pytest.mark.slow
@needs_tmux
def test_an_agent_that_stops_reading_freezes_nothing_and_quit_ends_it(tmp_path: Path) -> None:
    tmux, rat, _ = start_deaf(tmp_path)
    try:
        before = rss_kib(rat)
        tmux.keys("-l", "go")
        tmux.keys("Enter")
        tmux.wait_for("deaf now")
        tmux.wait_for("stuck: not reading its input")  # the queue for it is full: the status bar says so
        tree = descendants(rat)
        assert len(tree) >= 2  # the agent and its grandchild
        rss = rss_kib(rat)
        print(f"rat's RSS: {before // 1024} MB before, {rss // 1024} MB with forty 10 MB answers the agent never takes")
        assert rss - before < 150 * 1024, f"rat grew by {(rss - before) // 1024} MB"
        tmux.keys("Escape")  # cancel: the agent never reads it, and the app must not wait for it to
        tmux.wait_for("cancelling")
        worst, typed = echo_seconds(tmux, "", "second prompt")
        print(f"worst key echo after Esc: {worst * 1000:.0f} ms")
        tmux.keys("Enter")  # queued behind the turn that never ends
        tmux.wait_for("1. second prompt")  # in the queue
        # Another tab, its composer typed in.
        tmux.keys("C-n")
        tmux.wait_for("New session")
        tmux.keys("Enter")
        tmux.wait_until(lambda screen: "● ready" in screen and "New session" not in screen, "the second tab")
        worst_tab, _ = echo_seconds(tmux, "", "other tab")
        print(f"worst key echo in another tab: {worst_tab * 1000:.0f} ms")
        tree |= descendants(rat)
        started = time.monotonic()
        tmux.keys("C-q")
        tmux.wait_for("Stop it and quit?")  # a turn is running: Ctrl+Q asks first
        tmux.keys("C-q")
        wait_gone(rat, 10)
        took = time.monotonic() - started
        assert not alive(rat), "Ctrl+Q did not quit"
        print(f"quit took {took:.2f} s")
        assert took < 4.0, f"quit took {took:.2f} s"  # 2 s, and the confirmation's round trip through tmux
        for pid in tree:
            wait_gone(pid, 3)
        left = [pid for pid in tree if alive(pid)]
        assert not left, f"processes left behind: {left}"
        logs = "".join(log.read_text() for log in (tmp_path / "state").rglob("*.log"))
        assert "rat crashed" not in logs
    finally:
        tmux.kill()


# -- 4. quitting after a request was held back ------------------------------------------------------


PERMISSION = {"method": "session/request_permission", "params": {
    "sessionId": "$SESSION", "toolCall": {"toolCallId": "t1", "title": "Run the tests", "kind": "execute",
                                          "rawInput": {"command": "make test"}},
    "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"}]}}
FORM = {"method": "elicitation/create", "params": {
    "sessionId": "$SESSION", "mode": "form", "message": "Your name please",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string", "title": "Name"}}}}}


@pytest.mark.slow
@needs_tmux
@pytest.mark.parametrize("case", ["permission answered", "permission waiting", "form waiting",
                                  "big diff answered", "big diff waiting", "big form waiting"])
def test_quit_after_a_request_was_held_back_exits_cleanly(tmp_path: Path, case: str) -> None:
    from rat_tui.ui.screens.dialog import GRACE_SECONDS

    from .helpers.agents import scripted_argv

    project = tmp_path / "project"
    project.mkdir()
    release = tmp_path / "release"
    request = FORM if case.startswith("form") else PERMISSION
    if case.startswith("big diff"):  # its preview diffed in a worker thread
        old = "".join(f"value_{i} = compute({i})\n" for i in range(20000))
        new = old.replace("compute(5", "compute(55")
        request = json.loads(json.dumps(PERMISSION))
        request["params"]["toolCall"].update(kind="edit", content=[
            {"type": "diff", "path": str(project / "big.py"), "oldText": old, "newText": new}])
    elif case.startswith("big form"):  # its fields mounted in batches
        request = json.loads(json.dumps(FORM))
        request["params"]["requestedSchema"]["properties"] = {
            f"f{i}": {"type": "string", "title": f"Field {i}"} for i in range(1000)}
    argv = scripted_argv({"turns": [[{"wait_file": str(release)}, {"request": request}, {"chunk": "answered"}]]},
                         tmp_path)
    env = {**tmux_env(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    tmux = CapturedTmux(env)
    rc = tmp_path / "rc"
    line = " ".join("'" + part.replace("'", "'\\''") + "'"
                    for part in [sys.executable, "-m", "rat_tui", "--cwd", str(project), "--", *argv])
    tmux.start(["sh", "-c", f"{line}; echo $? > '{rc}'; sleep 60"], project)
    try:
        tmux.wait_for("ready")
        tmux.keys("-l", "go")
        tmux.keys("Enter")
        tmux.wait_for("working")
        tmux.keys("-l", "a draft")  # the user is typing: the request is held back
        tmux.wait_for("a draft")
        release.write_text("")
        tmux.wait_for("1 request waiting")  # announced, Ctrl+G opens it
        if case.endswith("answered"):
            tmux.keys("C-g")
            tmux.wait_for("asks for permission")
            time.sleep(GRACE_SECONDS + 0.5)  # a dialog takes no key typed within its grace period
            tmux.keys("y")
            tmux.wait_for("answered")
            tmux.keys("C-q")
        else:
            tmux.keys("C-q")
            tmux.wait_for("Stop it and quit?")  # a turn is running: Ctrl+Q asks first
            tmux.keys("C-q")
        deadline = time.monotonic() + 15
        while not rc.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert rc.exists(), f"rat did not exit; the screen was:\n{tmux.screen()}"
        logs = "".join(log.read_text() for log in (tmp_path / "state").rglob("*.log"))
        assert "rat crashed" not in logs and "LookupError" not in logs, logs[-3000:]
        assert rc.read_text().strip() == "0", f"exit code {rc.read_text().strip()}; screen:\n{tmux.screen()}"
    finally:
        tmux.kill()


# -- 2. what the permission dialog shows is what runs ----------------------------------------------


def test_clean_shows_format_characters_visibly_and_finds_lookalike_scripts() -> None:
    import unicodedata

    from rat_tui.protocol.sanitize import clean, code_points, invisible_count, line_is_clean, mixed_script_words

    every_cf = [chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"]
    shown = clean("a" + "b".join(every_cf) + "c")
    assert not [char for char in shown if unicodedata.category(char) == "Cf"]
    assert invisible_count(shown) == len(every_cf) and "⟨U+202E⟩" in shown and "⟨U+FEFF⟩" in shown
    assert clean(shown) == shown  # cleaning twice changes nothing
    for char in every_cf:  # the router's quick check of a line sees each one, raw and escaped
        assert not line_is_clean(json.dumps({"t": char}, ensure_ascii=False).encode()), hex(ord(char))
        assert not line_is_clean(json.dumps({"t": char}).encode()), hex(ord(char))
    assert line_is_clean(json.dumps({"t": "café ✓ 日本"}, ensure_ascii=False).encode())
    assert mixed_script_words("rm -rf /tmp/\u0440\u0430th bash café αβγ") == ["\u0440\u0430th"]
    assert code_points("b\u0430sh \u202e") == "b\\u0430sh \\u202e"


@pytest.mark.slow
async def test_permission_dialog_shows_invisible_characters_and_flags_them(tmp_path: Path) -> None:
    import unicodedata

    from rat_tui.app import RatApp
    from rat_tui.ui.screens.permission import PermissionScreen

    from .helpers.app import scripted, screen_text, state_word, until

    command = "rm -rf ./build\u202e# txt.gpj\u2066\u200b && c\u0430t notes\ufeff"  # Cyrillic а in "cat"
    request = json.loads(json.dumps(PERMISSION))
    request["params"]["toolCall"]["title"] = "Clean the build\u200d"
    request["params"]["toolCall"]["rawInput"] = {"command": command}
    script = {"turns": [[{"request": request}, {"chunk": "done"}]]}
    project = tmp_path / "project"
    project.mkdir()
    app = RatApp(scripted(script, tmp_path), project)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await pilot.press(*"go")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen), "the permission dialog")
        await pilot.pause()
        text = screen_text(app)
        invisible = [hex(ord(char)) for char in text if unicodedata.category(char) == "Cf"]
        assert not invisible, invisible
        assert "rm -rf ./build⟨U+202E⟩# txt.gpj⟨U+2066⟩⟨U+200B⟩ && c\u0430t notes⟨U+FEFF⟩" in text
        assert "contains 5 invisible characters" in text and "mixes lookalike scripts: c\u0430t" in text
        assert "r: raw command" in text
        screen = app.screen
        screen.action_raw_command()  # what r does (a key this soon is the grace period's: held back)
        await pilot.pause()
        assert "c\\u0430t" in screen_text(app)


# -- 12. every request id answered per JSON-RPC ----------------------------------------------------


@pytest.fixture
def record_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What the agent received, without conftest's schema check (the ids here are odd on purpose)."""
    path = tmp_path / "received.jsonl"
    monkeypatch.setenv("RAT_FAKE_RECORD", str(path))
    return path


async def test_every_request_id_is_answered_per_json_rpc(tmp_path: Path, record_file: Path) -> None:
    from types import SimpleNamespace

    from rat_tui.protocol.router import INVALID_REQUEST, METHOD_NOT_FOUND
    from rat_tui.session.agent_session import AgentSession

    from .helpers.agents import scripted_argv
    from .helpers.harness import finish

    valid = ["a string", 7, -3, 1.5, 2**70, -(2**70), 0.0, 1e300]
    invalid = ['{"an": "object"}', "true", "false", "[1, 2]"]
    steps = [{"raw": json.dumps({"jsonrpc": "2.0", "id": ident, "method": "x/unknown", "params": {}})} for ident in valid]
    steps += [{"raw": '{"jsonrpc":"2.0","id":' + ident + ',"method":"x/unknown","params":{}}'} for ident in invalid]
    steps += [{"raw": '{"jsonrpc":"2.0","id":1267650600228229401496703205376,"method":"x/unknown"}'},  # 2**100, as written
              {"sleep": 0.3}, {"chunk": "end"}]
    command = SimpleNamespace(name="ids", argv=scripted_argv({"turns": [steps]}, tmp_path), env={})
    session = AgentSession(command, tmp_path)
    task = asyncio.create_task(session.run())
    try:
        await wait_for(lambda: session.state.status == "ready", what="handshake")
        session.start_prompt("go")
        expected = len(valid) + len(invalid) + 1
        answers = lambda: [m for m in received(record_file) if "method" not in m and ("error" in m)]  # noqa: E731
        await wait_for(lambda: len(answers()) >= expected, 20, "every request answered")
        got = answers()
        by_id = [m["id"] for m in got if m["error"]["code"] == METHOD_NOT_FOUND]
        assert sorted(map(repr, by_id)) == sorted(map(repr, [*valid, 2**100])), by_id
        refused = [m for m in got if m["error"]["code"] == INVALID_REQUEST]
        assert len(refused) == len(invalid) and all(m["id"] is None for m in refused)
    finally:
        await finish(session, task)
