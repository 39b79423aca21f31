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
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.protocol.router import INVALID_PARAMS, INVALID_REQUEST
from rat_tui.protocol.sanitize import clean, clean_ansi, clean_data, incomplete_escape
from rat_tui.session.agent_session import AgentSession

from .conftest import AGENTS, received
from .harness import finish, wait_for
from .test_terminal_e2e import Tmux

HOSTILE_AGENT = AGENTS / "hostile_agent.py"
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux for a real terminal")


def hostile_argv(case: str, args: dict | None = None) -> list[str]:
    return [sys.executable, str(HOSTILE_AGENT), case, *([json.dumps(args)] if args else [])]


async def start(case: str, cwd: Path, args: dict | None = None, **kwargs) -> tuple[AgentSession, asyncio.Task]:
    command = SimpleNamespace(name="hostile", argv=hostile_argv(case, args), env={})
    session = AgentSession(command, cwd, **kwargs)
    task = asyncio.create_task(session.run())
    await wait_for(lambda: session.state.status != "starting", what="handshake")
    return session, task


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


def test_clean_ansi_keeps_colour_and_drops_every_other_sequence() -> None:
    text = "\x1b[31mred\x1b[0m \x1b]0;title\x07\x1b]52;c;SGk=\x1b\\\x1b[2J\x1b[6n\x1bP+q\x1b\\\x1b7ok\x9b6n\x07"
    assert clean_ansi(text) == "\x1b[31mred\x1b[0m ok␇"
    assert clean_ansi("progress\r50%\r\n") == "progress\n50%\n"
    cut = "out \x1b[3"
    assert incomplete_escape(cut) == 4 and incomplete_escape("done") == 4


# -- 1. no escape from the agent reaches the terminal ----------------------------------------------

# What only the agent's text could have made the app write: OSC 52 (clipboard), OSC 0 (title), a
# device status query, a DCS, an 8-bit CSI (0x9b is a C1 control, U+009B encodes as C2 9B).
FORBIDDEN = [b"\x1b]52", b"\x1b]0;", b"\x1b[6n", b"\x1bP", "\x9b".encode()]
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


class CapturedTmux(Tmux):
    """A tmux pane whose output bytes (everything the app writes to its terminal) go to a file."""

    def start_captured(self, command: list[str], cwd: Path, capture: Path) -> None:
        gate = cwd / ".go"
        line = " ".join("'" + part.replace("'", "'\\''") + "'" for part in command)
        self.start(["sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.05; done; exec {line}"], cwd)
        self.run("pipe-pane", "-o", "-t", self.name, f"cat >> '{capture}'")
        gate.write_text("")

    def pid(self) -> int:
        return int(self.run("display-message", "-p", "-t", self.name, "#{pane_pid}").strip())


def tmux_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "TERM": "xterm-256color", "TMUX_TMPDIR": str(tmp_path)}
    env.pop("TMUX", None)
    return env


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
        tmux.keys("Escape")
        tmux.wait_for("elicitation message")
        tmux.keys("Escape")
        tmux.wait_for("failed this turn")
        # The login methods, the traffic log and
        # the change review show the agent's words too.
        for key, shown in (("M-l", "Enter logs in"), ("F8", "session/prompt"), ("F3", "Files the agent")):
            tmux.keys(key)
            tmux.wait_for(shown)
            tmux.keys("Escape")
            time.sleep(0.3)
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
    # Textual's own: OSC 8 (links) and OSC 22 (the mouse pointer's shape).
    assert not [k for k in kinds if k.startswith(b"OSC") and k not in (b"OSC 8", b"OSC 22")], kinds
    assert b"CSI n" not in kinds and b"CSI J" not in kinds, kinds  # no device query, no screen clear
