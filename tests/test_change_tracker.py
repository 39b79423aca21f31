"""Tests ChangeTracker: originals per turn, persistence across a restart, reverts of a file, a hunk, a turn."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from rat_tui.session.change_tracker import ChangeTracker, RevertError, changes_root, resolve_original
from rat_tui.paths import data_dir

TWO_HUNKS_OLD = "".join(f"line {i}\n" for i in range(1, 21))
TWO_HUNKS_NEW = TWO_HUNKS_OLD.replace("line 2\n", "line two\n").replace("line 18\n", "line eighteen\n")


def write(path: Path, text: str) -> None:
    path.write_bytes(text.encode())


def read(path: Path) -> str:
    return path.read_bytes().decode()


def agent_edit(journal: ChangeTracker, path: Path, new: str) -> None:
    """What AgentSession does for an fs/write_text_file: the file changes, then the journal hears of it."""
    old = read(path) if path.exists() else None
    write(path, new)
    journal.record(str(path), old, new, "write")


def test_the_first_record_of_a_turn_fixes_the_original(tmp_path: Path) -> None:
    journal = ChangeTracker.create(str(tmp_path))
    target = tmp_path / "a.txt"
    write(target, "one\n")
    journal.begin_turn(1, "fix it")
    agent_edit(journal, target, "two\n")
    agent_edit(journal, target, "three\n")
    journal.begin_turn(2, "again")
    agent_edit(journal, target, "four\n")

    first, second = journal.turns
    assert (first.turn, first.prompt, len(first.files)) == (1, "fix it", 1)
    assert (first.files[0].original, first.files[0].current, first.files[0].source) == ("one\n", "three\n", "write")
    assert (second.files[0].original, second.files[0].current) == ("three\n", "four\n")
    assert journal.current_text(str(target)) == "four\n"
    assert journal.current_text(str(tmp_path / "missing")) is None


def test_nothing_is_written_until_a_file_changes(tmp_path: Path) -> None:
    journal = ChangeTracker.create(str(tmp_path))
    journal.begin_turn(1, "just talk")
    assert not journal.directory.exists()
    assert journal.directory.parent == data_dir() / "changes"


def test_a_new_instance_reads_everything_back(tmp_path: Path) -> None:
    """A journal is saved as each record happens: a new instance (a restart) sees all of it."""
    journal = ChangeTracker.create(str(tmp_path))
    (tmp_path / "a.txt").write_text("old a\n")
    journal.begin_turn(1, "edit a, create b")
    agent_edit(journal, tmp_path / "a.txt", "new a\n")
    agent_edit(journal, tmp_path / "b.txt", "brand new\n")
    manifest = json.loads((journal.directory / "manifest.json").read_text())
    assert manifest["cwd"] == str(tmp_path) and len(manifest["turns"][0]["files"]) == 2

    again = ChangeTracker(journal.directory, str(tmp_path))
    [turn] = again.turns
    assert (turn.turn, turn.prompt, turn.started) == (1, "edit a, create b", journal.turns[0].started)
    assert [(f.path, f.original, f.current, f.source) for f in turn.files] == [
        (str(tmp_path / "a.txt"), "old a\n", "new a\n", "write"),
        (str(tmp_path / "b.txt"), None, "brand new\n", "write"),
    ]
    assert again.revert_file(1, str(tmp_path / "a.txt")) == "Reverted a.txt."
    assert read(tmp_path / "a.txt") == "old a\n"


def test_load_all_finds_this_directory_newest_first(tmp_path: Path) -> None:
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir(), elsewhere.mkdir()
    journals = []
    for name, cwd in (("20240101-000000-aaaaaa", here), ("20240102-000000-bbbbbb", elsewhere),
                      ("20240103-000000-cccccc", here)):
        journal = ChangeTracker(changes_root() / name, str(cwd))
        journal.begin_turn(1, name)
        agent_edit(journal, cwd / "f.txt", name)
        journals.append(journal)
    loaded = ChangeTracker.load_all(str(here))
    assert [j.directory.name for j in loaded] == ["20240103-000000-cccccc", "20240101-000000-aaaaaa"]
    assert loaded[1].turns[0].files[0].current == "20240101-000000-aaaaaa"


def test_a_corrupt_manifest_is_skipped_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    good = ChangeTracker(changes_root() / "20240101-000000-aaaaaa", str(tmp_path))
    good.begin_turn(1, "ok")
    agent_edit(good, tmp_path / "f.txt", "x\n")
    broken = changes_root() / "20240102-000000-bbbbbb"
    broken.mkdir()
    (broken / "manifest.json").write_text('{"schema": 1, "cwd": ' + json.dumps(str(tmp_path)) + ', "turns": [')
    missing_blob = changes_root() / "20240103-000000-cccccc"
    missing_blob.mkdir()
    (missing_blob / "manifest.json").write_text(json.dumps({"schema": 1, "cwd": str(tmp_path), "turns": [
        {"turn": 1, "prompt": "p", "started": "s", "files": [{"path": "/x", "original": "nope", "current": None}]}]}))
    with caplog.at_level(logging.WARNING, logger="rat.changes"):
        loaded = ChangeTracker.load_all(str(tmp_path))
    assert [j.directory.name for j in loaded] == ["20240101-000000-aaaaaa"]
    assert "20240102-000000-bbbbbb" in caplog.text and "20240103-000000-cccccc" in caplog.text


def test_revert_one_hunk_of_two_keeps_the_other(tmp_path: Path) -> None:
    journal = ChangeTracker.create(str(tmp_path))
    target = tmp_path / "notes.txt"
    write(target, TWO_HUNKS_OLD)
    journal.begin_turn(1, "two edits")
    agent_edit(journal, target, TWO_HUNKS_NEW)

    assert journal.revert_hunk(1, str(target), 1) == "Reverted change 2 of notes.txt."
    assert read(target) == TWO_HUNKS_OLD.replace("line 2\n", "line two\n")
    assert journal.turns[0].files[0].current == read(target)
    assert ChangeTracker(journal.directory, str(tmp_path)).turns[0].files[0].current == read(target)
    with pytest.raises(RevertError):
        journal.revert_hunk(1, str(target), 1)  # only one hunk is left
    journal.revert_hunk(1, str(target), 0)
    assert read(target) == TWO_HUNKS_OLD


def test_revert_turn_restores_every_file_and_deletes_created_ones(tmp_path: Path) -> None:
    journal = ChangeTracker.create(str(tmp_path))
    write(tmp_path / "a.txt", "a\n")
    write(tmp_path / "b.txt", "b\n")
    journal.begin_turn(1, "first")
    agent_edit(journal, tmp_path / "a.txt", "a1\n")
    journal.begin_turn(2, "second")
    agent_edit(journal, tmp_path / "a.txt", "a2\n")
    agent_edit(journal, tmp_path / "b.txt", "b2\n")
    agent_edit(journal, tmp_path / "new.txt", "created\n")

    assert journal.revert_turn(2) == "Reverted turn 2: 3 files."
    assert (read(tmp_path / "a.txt"), read(tmp_path / "b.txt")) == ("a1\n", "b\n")
    assert not (tmp_path / "new.txt").exists()
    assert journal.turns[1].files[2].current is None


def test_reverting_a_created_file_deletes_it(tmp_path: Path) -> None:
    journal = ChangeTracker.create(str(tmp_path))
    journal.begin_turn(1, "create")
    agent_edit(journal, tmp_path / "new.py", "print('hi')\n")
    assert journal.revert_file(1, str(tmp_path / "new.py")) == "Deleted new.py (the agent created it)."
    assert not (tmp_path / "new.py").exists()
    # Its only hunk, reverted on its own, deletes it too.
    agent_edit(journal, tmp_path / "other.py", "x = 1\n")
    journal.revert_hunk(1, str(tmp_path / "other.py"), 0)
    assert not (tmp_path / "other.py").exists()


def test_revert_says_when_the_user_edited_the_file_since(tmp_path: Path) -> None:
    journal = ChangeTracker.create(str(tmp_path))
    target = tmp_path / "a.txt"
    write(target, TWO_HUNKS_OLD)
    journal.begin_turn(1, "edit")
    agent_edit(journal, target, TWO_HUNKS_NEW)
    write(target, TWO_HUNKS_NEW + "my own line\n")
    message = journal.revert_hunk(1, str(target), 0)
    assert "changed since the agent's edit" in message
    assert read(target) == TWO_HUNKS_OLD.replace("line 18\n", "line eighteen\n") + "my own line\n"
    write(target, "the user rewrote it\n")
    assert "changed since the agent's edit" in journal.revert_file(1, str(target))
    assert read(target) == TWO_HUNKS_OLD
    assert "changed since" not in journal.revert_file(1, str(target))


def test_revert_keeps_crlf_and_mode(tmp_path: Path) -> None:
    journal = ChangeTracker.create(str(tmp_path))
    target = tmp_path / "run.sh"
    old = TWO_HUNKS_OLD.replace("\n", "\r\n")
    write(target, old)
    target.chmod(0o750)
    journal.begin_turn(1, "edit")
    agent_edit(journal, target, TWO_HUNKS_NEW.replace("\n", "\r\n"))
    journal.revert_hunk(1, str(target), 0)
    assert read(target) == TWO_HUNKS_NEW.replace("line two", "line 2").replace("\n", "\r\n")
    journal.revert_file(1, str(target))
    assert target.read_bytes() == old.encode()
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o750


def test_completed_diff_tool_calls_are_recorded_once(tmp_path: Path) -> None:
    """An agent that edits files itself: a whole-file diff, a fragment (Claude's Edit), a snapshot."""
    journal = ChangeTracker.create(str(tmp_path))
    journal.begin_turn(1, "edit yourself")
    whole, fragment, snap = tmp_path / "whole.txt", tmp_path / "fragment.py", tmp_path / "snap.txt"
    write(whole, "new whole\n")
    write(fragment, "a = 1\nb = 20\nc = 3\n")
    write(snap, "before\n")
    journal.observe_tool_call("c3", "pending", [{"type": "diff", "path": str(snap), "oldText": "x", "newText": "y"}])
    write(snap, "after\n")
    diffs = {
        "c1": [{"type": "diff", "path": str(whole), "oldText": "old whole\n", "newText": "new whole\n"}],
        "c2": [{"type": "diff", "path": "fragment.py", "oldText": "b = 2\n", "newText": "b = 20\n"}],
        "c3": [{"type": "diff", "path": str(snap), "oldText": "x", "newText": "y"}],
    }
    for call_id, content in diffs.items():
        journal.observe_tool_call(call_id, "completed", content)
        journal.observe_tool_call(call_id, "completed", content)  # a repeated update: still one record
    files = {Path(f.path).name: (f.original, f.current, f.source) for f in journal.turns[0].files}
    assert files == {
        "whole.txt": ("old whole\n", "new whole\n", "diff"),
        "fragment.py": ("a = 1\nb = 2\nc = 3\n", "a = 1\nb = 20\nc = 3\n", "diff"),
        "snap.txt": ("before\n", "after\n", "diff"),
    }


def test_a_diff_that_does_not_match_the_disk_is_not_recorded() -> None:
    unknown = resolve_original("x\n", "a", "b", None, False)
    assert resolve_original(None, "a", "b", None, False) is unknown  # nothing on disk
    assert resolve_original("b b\n", "a", "b", None, False) is unknown  # fragment found twice
    assert resolve_original("x\r\ny\r\n", "x\n", "x\ny\n", None, False) == "x\r\n"  # CRLF on disk
