"""rat-tui against a deliberately misbehaving agent (tests/agents/hostile_agent.py) over real pipes.

The escape, quit and SIGHUP cases run the installed app in a real terminal (tmux); the bytes the app
writes to its terminal are captured with `pipe-pane` and searched for escape sequences that only the
agent's text could have put there.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.ui.screens.dialog import GRACE_SECONDS

from rat_tui.protocol.router import INVALID_PARAMS, INVALID_REQUEST
from rat_tui.protocol.sanitize import clean, clean_ansi, clean_data, clean_update, incomplete_escape
from rat_tui.session.agent_session import AgentSession

from .helpers.agents import received
from .helpers.app import press_to_quit
from .helpers.harness import finish, wait_for
from .helpers.hostile import (
    CapturedTmux,
    alive,
    descendants,
    hostile_argv,
    needs_tmux,
    rss_kib,
    tmux_env,
    wait_gone,
)


async def start(case: str, cwd: Path, args: dict | None = None, **kwargs) -> tuple[AgentSession, asyncio.Task]:
    command = SimpleNamespace(name="hostile", argv=hostile_argv(case, args), env={})
    session = AgentSession(command, cwd, **kwargs)
    task = asyncio.create_task(session.run())
    await wait_for(lambda: session.state.status != "starting", what="handshake")
    return session, task


@pytest.fixture
def record_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What the agent received, without conftest's schema check: a hostile agent's own requests are
    invalid on purpose, and so are some ids our error answers must echo."""
    path = tmp_path / "received.jsonl"
    monkeypatch.setenv("RAT_FAKE_RECORD", str(path))
    return path


# -- the sanitiser itself ----------------------------------------------------------------------------


def test_clean_shows_every_control_visibly_and_keeps_text() -> None:
    assert clean("plain text\twith tab\nand lines") == "plain text\twith tab\nand lines"
    assert clean("a\x1b]52;c;SGk=\x07b") == "a␛]52;c;SGk=␇b"
    assert clean("\x1b[2J\x1b[6n") == "␛[2J␛[6n"
    assert clean("8-bit \x9b6n csi") == "8-bit \ufffd6n csi"
    assert clean("del\x7f nul\x00") == "del␡ nul␀"
    assert clean("crlf\r\nlone\rcr") == "crlf\nlone\ncr"
    assert clean("lone \ud800 surrogate") == "lone \ufffd surrogate"
    assert "\x1b" not in clean_data({"k\x1b": ["v\x1b", {"deep": "\x1b[6n"}], "n": 1})["k␛"][0]


def test_clean_update_leaves_terminal_output_to_the_reducer_which_cleans_it_once() -> None:
    """Terminal output is cleaned by the reducer (sequences cut between pieces joined first), with colour
    kept; the rest of the update by clean_update, the update itself untouched; no raw copy is kept."""
    from rat_tui.state.store import SessionStore

    coloured = "\x1b[32mok\x1b[0m test_a passed\n" * 50  # colour codes its only escapes: kept as they are
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t\x1b]52;c;eA==\x07",
              "_meta": {"terminal_output": {"terminal_id": "t-1\x1b[2J", "data": coloured}}}
    cleaned = clean_update(update)
    assert cleaned["_meta"]["terminal_output"]["data"] is coloured
    assert cleaned["toolCallId"] == "t␛]52;c;eA==␇" and cleaned["_meta"]["terminal_output"]["terminal_id"] == "t-1␛[2J"
    assert update["_meta"]["terminal_output"]["data"] is coloured and update["toolCallId"].startswith("t\x1b")
    store = SessionStore()
    store.apply_update({"sessionUpdate": "tool_call", "toolCallId": "x", "title": "make", "kind": "execute"})
    store.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": "x", "_meta": {"terminal_output": {
        "terminal_id": "t", "data": "\x1b[31mred\x1b[0m\x1b]0;title\x07\x1b[6n\x9b2J\x07 end\r\n"}}})
    assert store.state.terminals["t"].output == "\x1b[31mred\x1b[0m␇ end\n"
    assert store.state.tool_calls["x"].meta == {"terminal_output": {"terminal_id": "t"}}  # no raw copy kept


def test_a_tool_call_update_without_output_does_not_show_the_last_output_again() -> None:
    from rat_tui.state.store import SessionStore

    store = SessionStore()
    store.apply_update({"sessionUpdate": "tool_call", "toolCallId": "x", "title": "make", "kind": "execute"})
    store.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": "x",
                        "_meta": {"terminal_output": {"terminal_id": "t", "data": "abc\n"}}})
    store.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": "x", "status": "completed"})
    assert store.state.terminals["t"].output == "abc\n"


def test_clean_ansi_keeps_colour_and_drops_every_other_sequence() -> None:
    text = "\x1b[31mred\x1b[0m \x1b]0;title\x07\x1b]52;c;SGk=\x1b\\\x1b[2J\x1b[6n\x1bP+q\x1b\\\x1b7ok\x9b6n\x07"
    assert clean_ansi(text) == "\x1b[31mred\x1b[0m ok␇"
    assert clean_ansi("progress\r50%\r\n") == "progress\n50%\n"
    cut = "out \x1b[3"
    assert incomplete_escape(cut) == 4 and incomplete_escape("done") == 4


def test_the_traffic_inspector_and_the_markdown_export_show_no_raw_control_character() -> None:
    from rat_tui.history.markdown import to_markdown
    from rat_tui.protocol.traffic import TrafficLog
    from rat_tui.state.store import SessionStore
    from rat_tui.ui.screens.traffic import pretty_json

    from .agents.hostile_agent import HOSTILE, escapes_script

    traffic = TrafficLog()
    traffic.record("in", {"jsonrpc": "2.0", "method": "x/\x1b]0;t\x07", "params": {"c1": "\x9b6n", "esc": HOSTILE}}, 10)
    shown = pretty_json(traffic.records[-1])
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", shown), shown
    store = SessionStore()
    for step in escapes_script()["turns"][0]:
        if "update" in step:
            store.apply_update(step["update"])
    exported = to_markdown(store.state, {"title": HOSTILE, "agent_title": HOSTILE})
    assert "\x1b" not in exported and "\x9b" not in exported and "\x07" not in exported
    assert "plan entry<␛]52" in exported or "message<␛]52" in exported


# -- 1. no escape from the agent reaches the terminal ----------------------------------------------

# What only the agent's text could have made the app write: OSC 52 (clipboard), OSC 0 (title), a
# device status query, a DCS (XTGETTCAP), an 8-bit CSI (0x9b is a C1 control, U+009B encodes as C2 9B).
FORBIDDEN = [b"\x1b]52", b"\x1b]0;", b"\x1b[6n", b"\x1bP+q", "\x9b".encode()]
# Every escape sequence the app may emit: CSI (cursor, colour, modes), OSC 8 links; nothing else.
SEQUENCE = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78MDEc])")


def escape_kinds(data: bytes) -> tuple[set[bytes], list[bytes]]:
    """The kinds of escape sequences in `data` (CSI by final byte and private marker, OSC by number), and
    any ESC that starts no sequence the app writes."""
    kinds: set[bytes] = set()
    stray: list[bytes] = []
    position = data.find(b"\x1b")
    while position >= 0:
        match = SEQUENCE.match(data, position)
        if match is None:
            stray.append(data[position : position + 24])
            position = data.find(b"\x1b", position + 1)
            continue
        body = match.group(1)
        if body.startswith(b"["):
            kinds.add(b"CSI " + (body[1:2] if body[1:2] in b"?<=>" else b"") + body[-1:])
        elif body.startswith(b"]"):
            kinds.add(b"OSC " + body[1:].split(b";", 1)[0])
        else:
            kinds.add(b"ESC " + body[:1])
        position = data.find(b"\x1b", match.end())
    return kinds, stray


@pytest.mark.slow
@needs_tmux
def test_escape_sequences_from_every_field_never_reach_the_terminal(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("notes\n")
    capture = tmp_path / "pane.bytes"
    tmux = CapturedTmux(tmux_env(tmp_path))
    tmux.start_captured([sys.executable, "-m", "rat_tui", "--cwd", str(project), "--", *hostile_argv("escapes")],
                        project, capture)
    try:
        tmux.wait_for("ready")
        tmux.keys("-l", "go")
        tmux.keys("Enter")
        tmux.wait_for("allow option")  # the permission dialog, its option names visibly escaped
        time.sleep(GRACE_SECONDS + 0.1)  # a person reads the dialog: keys sooner are held back (issue 12)
        tmux.keys("Escape")
        tmux.wait_for("elicitation message")
        time.sleep(GRACE_SECONDS + 0.1)
        tmux.keys("Escape")
        tmux.wait_for("failed this turn")
        # The login methods, the traffic log and
        # the change review show the agent's words too.
        for key, shown in (("M-l", "Enter logs in"), ("F8", "session/prompt"), ("F3", "Files the agent")):
            tmux.keys(key)
            tmux.wait_for(shown)
            time.sleep(GRACE_SECONDS + 0.1)  # the login picker is an agent's dialog: read before answering
            tmux.keys("Escape")
            tmux.wait_until(lambda screen, shown=shown: shown not in screen, f"{shown!r} closed")
        tmux.keys("-l", "again")
        tmux.keys("Enter")
        screen = tmux.wait_for("last words")  # the stderr tail in the exit notice
        assert "␛]52;c;SE9TVElMRQ==␇" in screen  # shown, visibly
        tmux.keys("C-q")
        deadline = time.monotonic() + 15
        while tmux.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        tmux.kill()
    data = capture.read_bytes()
    # Each field reached the screen (so its escapes had their chance), shown with visible pictures.
    shown = ["agent title", "session title", "message", "user echo", "link title", "tool title", "/location",
             "tool text", "old text", "new text", "terminal card", "red-output", "plan entry", "notice title",
             "notice text", "unknown update", "permission title", "allow option", "elicitation message",
             "field title", "notify", "error message", "details", "auth name", "auth description", "last words"]
    missing = [label for label in shown if f"{label}<".encode() not in data and label != "red-output"]
    assert not missing, f"never on screen: {missing}"
    assert "␛]52;c;SE9TVElMRQ==".encode() in data
    for forbidden in FORBIDDEN:
        assert forbidden not in data, f"{forbidden!r} reached the terminal"
    kinds, stray = escape_kinds(data)
    assert not stray, f"escape sequences the app does not write: {stray[:5]}"
    # The app's own: OSC 8 (links), 22 (the mouse pointer's shape), 2 (the window title: the sessions'
    # states), 9 / 777 / 99 (desktop notifications, sanitised by ui/notifications.py).
    own = (b"OSC 8", b"OSC 22", b"OSC 2", b"OSC 9", b"OSC 777", b"OSC 99")
    assert not [k for k in kinds if k.startswith(b"OSC") and k not in own], kinds
    assert b"CSI n" not in kinds and b"CSI J" not in kinds, kinds  # no device query, no screen clear


# -- 3. one bad message never ends a session --------------------------------------------------------


@pytest.mark.slow
async def test_malformed_messages_are_answered_or_dropped_and_the_session_goes_on(tmp_path: Path, record_file: Path) -> None:
    session, task = await start("malformed", tmp_path)
    assert session.state.status == "ready"  # modes, models and config options of the wrong shape
    assert session.state.modes == {"availableModes": []} and session.state.config_options == ()
    for n in range(4):
        turn = session.start_prompt(f"prompt {n}")
        assert turn is not None, session.state.entries[-1]
        await asyncio.wait_for(turn, 60)
    answers = {str(m.get("id")): m for m in received(record_file) if "method" not in m}
    assert answers["no-method"]["error"]["code"] == INVALID_REQUEST
    assert answers["bad-method"]["error"]["code"] == INVALID_REQUEST
    assert answers["None"]["error"]["code"] == INVALID_REQUEST  # the id that was an object
    assert answers["deep"]["error"]["code"] == INVALID_REQUEST  # nested deeper than the limit
    assert answers["bad-params"]["error"]["code"] == INVALID_PARAMS
    texts = [getattr(e, "text", "") for e in session.state.entries]
    assert sum("still alive after the garbage" in t for t in texts) == 1 and "turn four is fine" in texts
    failures = [t for t in texts if t.startswith("The agent failed this turn")]
    assert failures == ["The agent failed this turn: string code (-32603)", "The agent failed this turn: error (-32603)",
                        'The agent failed this turn: ["a", "list"] (-32603)']
    assert sum("rat-tui cannot use" in t for t in texts) == 1  # said once; the rest is in the log
    assert session.connection.malformed_lines >= 8
    assert session.state.status == "ready" and session.process.returncode is None
    await finish(session, task)


@pytest.mark.slow
async def test_a_line_over_the_size_limit_is_skipped_with_a_notice(tmp_path: Path, record_file: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from rat_tui.protocol import transport

    monkeypatch.setattr(transport, "MAX_LINE_BYTES", 1024 * 1024)  # the malformed case sends a 2 MB line
    session, task = await start("malformed", tmp_path)
    await asyncio.wait_for(session.start_prompt("big line"), 60)
    texts = [getattr(e, "text", "") for e in session.state.entries]
    assert any("over rat-tui's limit of 1 MB; it was skipped" in t for t in texts), texts
    assert any("still alive after the garbage" in t for t in texts)
    await finish(session, task)


# -- 2. file access decided on what is opened --------------------------------------------------------


@pytest.mark.slow
async def test_nothing_outside_the_cwd_is_read_written_run_or_reverted(tmp_path: Path, record_file: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    (outside / "victim.txt").write_text("victim\n")
    (project / "in.txt").write_text("inside\n")
    (project / "link").symlink_to(outside)
    args = {"outside": str(outside), "link": str(project / "link"), "inside_file": str(project / "in.txt"),
            "inside_dir": str(project)}
    from rat_tui.client_tools.settings import ClientToolsSettings

    session, task = await start("scope", project, args, client_tools=ClientToolsSettings())
    await asyncio.wait_for(session.start_prompt("go"), 60)
    answers = [m for m in received(record_file) if "method" not in m][:8]  # then the MCP connection's
    assert [("error" in a, a.get("error", {}).get("code")) for a in answers] == [
        (True, -32001),  # read outside
        (True, -32001),  # read through a symlink leading outside
        (True, -32001),  # write through it
        (True, INVALID_PARAMS),  # another session's id
        (True, INVALID_PARAMS),  # no session id
        (True, INVALID_PARAMS),  # a permission request for a session that does not exist: no dialog
        (True, -32001),  # terminal/create with a cwd outside
        (False, None),  # a read inside still works
    ], answers
    assert "top secret" not in json.dumps(answers)
    mcp = [json.loads(line)["message"] for line in Path(f"{record_file}.mcp").read_text().splitlines()]
    [shown] = [m["result"] for m in mcp if m.get("id") == 2]
    assert shown["isError"] and "did not allow showing" in shown["content"][0]["text"]  # asked, and refused
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt", "victim.txt"]
    assert session.state.pending_permissions == 0
    # The diff reported for a file outside is not tracked, so F3 cannot revert it there.
    tracker = session.changes
    assert all(not change.path.startswith(str(outside)) for turn in tracker.turns for change in turn.files)
    await finish(session, task)
    assert (outside / "victim.txt").read_text() == "victim\n"


@pytest.mark.slow
async def test_symlink_race_thousands_of_writes_all_land_inside_the_cwd(tmp_path: Path, record_file: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # On tmpfs where there is one: every write fsyncs, which the race does not need to wait for.
    shm = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(prefix="rat-race-", dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) else tmp_path
    project, outside = base / "project", base / "outside"
    project.mkdir()
    outside.mkdir()
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "data"))  # the change tracker's records too
    count = 2000
    session, task = await start("race", project, {"dir": str(project / "d"), "outside": str(outside), "count": count})
    await asyncio.wait_for(session.start_prompt("race"), 300)
    await finish(session, task)
    assert list(outside.iterdir()) == [], f"{len(list(outside.iterdir()))} files landed outside the cwd"
    written = list(project.rglob("f*.txt"))
    assert written, "no write succeeded at all: the race did not run"
    assert all(p.resolve().is_relative_to(project.resolve()) for p in written)
    answers = [m for m in received(record_file) if "method" not in m]
    refused = [a for a in answers if a.get("error", {}).get("code") == -32001]
    assert len(answers) == count and refused, "the race never met the symlink"
    if base != tmp_path:
        shutil.rmtree(base)


# -- 4. back-pressure and shutdown -------------------------------------------------------------------


def start_deaf(tmp_path: Path) -> tuple[CapturedTmux, int, int]:
    """rat on the deaf agent (stopped reading, ignores SIGTERM, a grandchild in its group) in tmux:
    (tmux, rat's pid, the grandchild's pid), once the agent has asked for 160 MB it will never take."""
    project = tmp_path / "project"
    project.mkdir()
    big = project / "big.txt"
    big.write_text(("x" * 1023 + "\n") * 4096)  # 4 MB, asked for 40 times
    child_pid = tmp_path / "child.pid"
    args = {"big_file": str(big), "reads": 40, "child_pid": str(child_pid)}
    tmux = CapturedTmux(tmux_env(tmp_path))
    tmux.start_captured([sys.executable, "-m", "rat_tui", "--cwd", str(project), "--", *hostile_argv("deaf", args)],
                        project, tmp_path / "pane.bytes")
    tmux.wait_for("ready")
    rat = tmux.pid()
    tmux.keys("-l", "go")
    tmux.keys("Enter")
    tmux.wait_for("deaf now")
    tmux.wait_for("not read its input")  # the notice: the queue for the agent is full
    return tmux, rat, int(child_pid.read_text())


@pytest.mark.slow
async def test_an_agent_that_stops_reading_is_reported_stuck(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rat_tui.protocol import transport

    monkeypatch.setattr(transport, "WRITE_STALL_SECONDS", 0.5)
    big = tmp_path / "big.txt"
    big.write_text("y" * (1024 * 1024))
    session, task = await start("deaf", tmp_path, {"big_file": str(big), "reads": 2})  # 2 MB: under the bound
    session.start_prompt("go")
    await wait_for(lambda: "stuck" in session.state.status_detail, what="the stuck status")
    assert any("has not read its input" in getattr(e, "text", "") for e in session.state.entries)
    assert session.process.queued_bytes <= session.process.max_queued_bytes
    await finish(session, task)  # stdin, SIGTERM (ignored), SIGKILL
    assert session.process.returncode == -signal.SIGKILL


@pytest.mark.slow
@needs_tmux
def test_quit_works_with_an_agent_that_stopped_reading(tmp_path: Path) -> None:
    tmux, rat, grandchild = start_deaf(tmp_path)
    try:
        tree = descendants(rat)
        assert grandchild in tree and len(tree) >= 2
        screen = tmux.screen()
        assert "stuck" in screen  # the status bar says so
        # Bounded: 40 answers of 4 MB were never queued whole (without the bound rat grew by 1.2 GB).
        rss = rss_kib(rat)
        assert rss < 400 * 1024, f"rat uses {rss // 1024} MB"
        print(f"rat's RSS with 160 MB of answers the agent never takes: {rss // 1024} MB")
        started = time.monotonic()
        tmux.keys("C-q")
        tmux.wait_for("Stop it and quit?")  # a turn is running: Ctrl+Q asks first (issue 12)
        tmux.keys("C-q")  # Ctrl+Q again confirms
        wait_gone(rat)
        took = time.monotonic() - started
        assert not alive(rat), "Ctrl+Q did not quit"
        print(f"quit took {took:.2f} s")  # reported, not asserted: timing is noisy on a shared machine
        left = [pid for pid in tree if alive(pid)]
        assert not left, f"processes left behind: {left}"
    finally:
        tmux.kill()


@pytest.mark.slow
@needs_tmux
@pytest.mark.parametrize("how", ["SIGHUP", "SIGTERM"])
def test_a_closed_terminal_or_sigterm_leaves_no_agent_process_behind(tmp_path: Path, how: str) -> None:
    tmux, rat, grandchild = start_deaf(tmp_path)
    try:
        tree = descendants(rat)
        assert grandchild in tree
        if how == "SIGHUP":
            tmux.kill()  # the terminal closes: tmux sends SIGHUP to the pane's process
        else:
            os.kill(rat, signal.SIGTERM)
        wait_gone(rat)
        assert not alive(rat), f"rat survived {how}"
        for pid in tree:
            wait_gone(pid, 5.0)
        left = [pid for pid in tree if alive(pid)]
        assert not left, f"processes left behind after {how}: {left}"
    finally:
        tmux.kill()


@pytest.mark.slow
@needs_tmux
def test_a_closed_terminal_ends_the_app_by_itself_not_by_the_watchdog(tmp_path: Path) -> None:
    """A terminal hanging up sends SIGCONT after SIGHUP (Linux, tmux): Textual's driver took it for a resume
    from Ctrl+Z, set up the gone terminal again, and the app's shutdown then hung on the new writer thread
    until the watchdog ended the process (EXIT_AFTER_SECONDS, logged). Now the app exits on its own."""
    project = tmp_path / "project"
    project.mkdir()
    env = {**tmux_env(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    tmux = CapturedTmux(env)
    tmux.start_captured([sys.executable, "-m", "rat_tui", "--cwd", str(project)], project, tmp_path / "pane.bytes")
    try:
        tmux.wait_for("ready")  # the embedded demo agent
        rat = tmux.pid()
        subprocess.run(["tmux", "kill-server"], env=tmux.env, capture_output=True)  # the terminal is gone
        wait_gone(rat)
        assert not alive(rat), "rat survived SIGHUP"
        logs = "".join(log.read_text() for log in (tmp_path / "state").rglob("*.log"))
        assert "SIGHUP: stopping" in logs, logs  # the hang-up was handled ...
        assert "did not exit" not in logs, logs  # ... and the app ended, not the watchdog
    finally:
        tmux.kill()


# -- 6. config and startup never die -----------------------------------------------------------------


def test_config_nested_ten_thousand_deep_or_a_symlink_loop_gives_a_message_and_the_defaults(tmp_path: Path) -> None:
    from rat_tui.config import Config, load_config

    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 10000 + "]" * 10000 + "\n")
    config, problems = load_config(deep)
    assert config == Config() and "too deeply" in problems[0]
    tables = tmp_path / "tables.toml"
    tables.write_text("a = " + "{b = " * 10000 + "1" + "}" * 10000 + "\n")
    assert "too deeply" in load_config(tables)[1][0]
    loop = tmp_path / "loop.toml"
    loop.symlink_to(tmp_path / "loop2.toml")
    (tmp_path / "loop2.toml").symlink_to(loop)
    config, problems = load_config(loop)
    assert config == Config() and "symbolic link that leads nowhere" in problems[0]


def test_keymap_entries_with_bad_keys_are_reported_and_never_unbind(tmp_path: Path) -> None:
    from rat_tui.ui.keymap import binding_ids, checked_keymap, unknown_ids

    keymap = {"app.quit": "ctrl+nonsense", "app.history": "blah+r", "session.cancel": "escape", "app.new_session": "f12",
              "app.no_such_thing": "f11"}
    valid, problems = checked_keymap(keymap)
    assert valid == {"session.cancel": "escape", "app.new_session": "f12", "app.no_such_thing": "f11"}
    assert len(problems) == 2 and "app.quit" in problems[0] and "nonsense" in problems[0]
    assert unknown_ids(valid, binding_ids()) == [
        "[keymap] 'app.no_such_thing' is not a binding id (ignored); F1 shows each key's id beside it."]
    assert unknown_ids({"app.new_sesion": "f12"}, binding_ids()) == [  # a typo: the id it likely meant
        "[keymap] 'app.new_sesion' is not a binding id (ignored) (did you mean 'app.new_session'?); F1 shows each "
        "key's id beside it."]


@pytest.mark.slow
async def test_startup_survives_a_bad_rpc_log_path_a_bad_keymap_and_a_locked_history(tmp_path: Path) -> None:
    import sqlite3

    from rat_tui.app import RatApp
    from rat_tui.config import Config
    from rat_tui.history.journal import default_path

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    history = default_path()
    history.parent.mkdir(parents=True, exist_ok=True)
    lock = sqlite3.connect(history, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # another process holds the history database
    try:
        config = Config(keymap={"app.quit": "ctrl+nonsense", "app.nothing": "f11"})
        command = SimpleNamespace(name="hostile", argv=hostile_argv("malformed"), env={})
        app = RatApp(command, tmp_path, config=config, rpc_log_path=blocker / "rpc.jsonl")
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(lambda: app.session.state.status == "ready", what="ready")
            await wait_for(lambda: any("not a binding id" in n.message for n in app._notifications), what="id report")
            toasts = " ".join(n.message for n in app._notifications)
            assert "Cannot write the rpc log" in toasts and "History is off" in toasts and "ctrl+nonsense" in toasts
            await press_to_quit(pilot, "ctrl+q")  # the bad keymap entry did not unbind quitting
            await wait_for(lambda: not app.is_running, what="quit")
    finally:
        lock.close()


def test_terminal_output_split_inside_escape_sequences_shows_as_sent_whole() -> None:
    """A display terminal's output (claude-agent-acp's `_meta.terminal_output`) arrives in pieces cut
    anywhere, inside a colour code too: through the store, the terminal shows what the whole output
    cleaned at once shows (colour kept, a title or a query dropped), wherever the cuts fall."""
    from rat_tui.state.store import SessionStore

    whole = ("\x1b[32mok\x1b[0m test_a passed\n\x1b[1;31mFAILED\x1b[0m test_b\n"
             "\x1b]0;a title\x07progress \x1b[6n50%\r\n\x1b[38;5;208morange\x1b[0m done\n")
    want = clean_ansi(whole)
    for size in (1, 2, 3, 5, 7):
        store = SessionStore()
        store.apply_update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "make test",
                            "kind": "execute", "status": "in_progress"})
        for start in range(0, len(whole), size):
            store.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": "t1",
                                "_meta": {"terminal_output": {"terminal_id": "term", "data": whole[start : start + size]}}})
        assert store.state.terminals["term"].output == want, size


def test_clean_data_checks_first_and_copies_only_what_it_must() -> None:
    """`clean_data` returns the value itself when its check walk finds nothing to clean, else the copying
    walk's result: over random JSON-like values (keys, str subclasses, tuples, deep nesting) the check
    agrees with the copying walk, and the result has no raw control character left."""
    import random

    from rat_tui.protocol import sanitize

    class Name(str):
        pass

    rng = random.Random(11)
    pieces = ["ok", "é", "tab\there", "line\n", "\x1b[31m", "\r", "\x7f", "\x85", "\ud800", ""]

    def value(depth: int):
        roll = rng.random()
        if depth > 3 or roll < 0.35:
            choice = rng.choice(pieces)
            return rng.choice([choice, Name(choice), 7, None, 2.5, True])
        if roll < 0.7:
            return {rng.choice([*pieces[:4], rng.choice(pieces), 3]): value(depth + 1) for _ in range(rng.randint(0, 4))}
        items = [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return tuple(items) if rng.random() < 0.3 else items

    deep: dict = {}
    node = deep
    for _ in range(sanitize.DATA_DEPTH_LIMIT + 2):
        node["a"] = {}
        node = node["a"]
    samples = [value(0) for _ in range(3000)] + [deep, [deep], {"k": deep}]
    for sample in samples:
        walked = sanitize._clean_walk(sample)
        assert sanitize._is_clean(sample) == (walked is sample), sample
        assert sanitize.clean_data(sample) == walked
        assert not unsafe(walked), sample


def unsafe(value) -> bool:
    """Whether a string in `value` (a key left alone: not a plain str) still holds a raw control character."""
    from rat_tui.protocol import sanitize

    if isinstance(value, str):
        return sanitize._UNSAFE.search(value) is not None
    if isinstance(value, dict):
        return any((type(k) is str and unsafe(k)) or unsafe(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(unsafe(v) for v in value)
    return False
