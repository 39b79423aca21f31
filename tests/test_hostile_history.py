"""A broken history file (random bytes, truncated, a directory, a foreign schema, read-only, locked) turns
history off with one log line naming the cause, no traceback: an expected condition, not a crash. The real
app with such a file still starts, says so, and takes prompts."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import pytest

from rat_tui.history.journal import HistoryJournal, default_path, open_journal


def random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def truncated(path: Path) -> None:
    journal = HistoryJournal(path)
    journal.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3 or 100])
    for extra in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        extra.unlink(missing_ok=True)


def directory(path: Path) -> None:
    path.mkdir()


def foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE sessions (nothing_we_know INTEGER)")
    db.execute("CREATE TABLE messages (x)")
    db.commit()
    db.close()


def read_only(path: Path) -> None:
    path.parent.chmod(0o555)


CASES = {"random bytes": random_bytes, "truncated": truncated, "a directory": directory, "a foreign schema": foreign}
if os.geteuid() != 0:  # root writes anywhere
    CASES["read-only"] = read_only


@pytest.mark.parametrize("case", list(CASES))
def test_a_broken_history_file_is_one_line_in_the_log(tmp_path: Path, case: str,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "history.sqlite3"
    CASES[case](path)
    caplog.set_level(logging.DEBUG, logger="rat")
    try:
        journal, problem = open_journal(path)
    finally:
        folder.chmod(0o755)
    if journal is not None:  # a file sqlite can still use is fine too; it must work then
        journal.close()
        pytest.skip(f"{case}: sqlite opened it")
    assert problem is not None and problem.startswith(f"History is off: cannot open {path} (")
    records = [r for r in caplog.records if "history" in r.getMessage().lower()]
    assert len(records) == 1 and records[0].levelno == logging.DEBUG and records[0].exc_info is None
    assert records[0].getMessage().startswith(f"cannot open the history journal {path}: ")


def test_a_locked_history_file_is_one_line_in_the_log(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "history.sqlite3"
    HistoryJournal(path).close()
    lock = sqlite3.connect(path, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    caplog.set_level(logging.DEBUG, logger="rat")
    try:
        journal, problem = open_journal(path)
    finally:
        lock.close()
    assert journal is None and problem is not None and "locked" in problem
    records = [r for r in caplog.records if "history" in r.getMessage().lower()]
    assert len(records) == 1 and records[0].exc_info is None and records[0].levelno == logging.DEBUG
    assert "OperationalError: database is locked" in records[0].getMessage()


@pytest.mark.slow
async def test_the_app_with_a_corrupt_history_starts_says_so_and_logs_no_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from rat_tui.app import RatApp

    from .helpers.app import scripted, until

    history = default_path()
    history.parent.mkdir(parents=True, exist_ok=True)
    random_bytes(history)
    caplog.set_level(logging.DEBUG, logger="rat")
    app = RatApp(scripted({"turns": [[{"chunk": "answered without history"}]]}, tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await until(pilot, lambda: any("History is off" in n.message for n in app._notifications), "the notice")
        await pilot.press(*"hello", "enter")
        transcript = app.query_one("Transcript")
        await until(pilot, lambda: "answered without history" in transcript.plain_text, "the answer")
    assert not [r for r in caplog.records if r.exc_info is not None]
    shown = [r for r in caplog.records if "history" in r.getMessage().lower() and r.levelno >= logging.INFO]
    assert len(shown) == 1 and "History is off" in shown[0].getMessage() and "file is not a database" in shown[0].getMessage()
