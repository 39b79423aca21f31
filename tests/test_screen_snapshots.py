"""Snapshots of the history list and rat-tui's own ask_user dialog, on fixed data."""

from __future__ import annotations

import calendar
import time
from pathlib import Path

import pytest

from rat_tui.history.journal import HistoryJournal
from rat_tui.ui.screens.ask_user import AskUserScreen
from rat_tui.ui.screens.history import HistoryScreen

from .helpers.app import steady as steady_app
from .helpers.harness import RatThemedApp

# Fixed dates so the list (which shows them) renders the same every run; localtime is UTC in CI.
NOON = calendar.timegm((2026, 11, 2, 12, 0, 0))


def prompt(text: str) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
            "params": {"sessionId": "s", "prompt": [{"type": "text", "text": text}]}}


def chunk(text: str) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
                                                    "content": {"type": "text", "text": text}}}}


class HistoryApp(RatThemedApp):
    def __init__(self, journal: HistoryJournal) -> None:
        super().__init__()
        self.journal = journal

    def on_mount(self) -> None:
        self.use_rat_theme()
        self.push_screen(HistoryScreen(self.journal))


class AskUserApp(RatThemedApp):
    def on_mount(self) -> None:
        self.use_rat_theme()
        self.push_screen(AskUserScreen("Which greeting should the demo agent use?", ["Hello", "Howdy", "Good day"],
                                       agent_name="Demo agent"))


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def steady(pilot) -> None:
    await pilot.pause()
    steady_app(pilot.app)


def test_snapshot_history_list(snap_compare, tmp_path: Path, utc) -> None:
    journal = HistoryJournal(tmp_path / "history.sqlite3")
    sessions = [
        ("claude-acp", "/home/dev/shop", "Fix the flaky checkout test", 3),
        ("gemini", "/home/dev/blog", "Draft a post about streaming Markdown", 1),
        ("codex-acp", "/home/dev/shop", "Why is the cart total off by one cent?", 5),
    ]
    for index, (agent, cwd, text, answers) in enumerate(sessions):
        session = journal.start_session(agent, [agent], cwd)
        session.record("out", prompt(text), 100)
        for n in range(answers):
            session.record("in", chunk(f"part {n} "), 100)
        journal.flush()
        stamp = NOON + index * 3600
        journal._db.execute("UPDATE sessions SET created=?, updated=? WHERE id=?", (stamp, stamp, session.id))
    assert snap_compare(HistoryApp(journal), terminal_size=(110, 16), run_before=steady)
    journal.close()


def test_snapshot_ask_user(snap_compare) -> None:
    assert snap_compare(AskUserApp(), terminal_size=(100, 24), run_before=steady)
