"""Provides ChangeTracker: the files an agent changed, turn by turn, with their originals kept on disk.

The agent's edits are the user's code: whatever happens to rat-tui, the user must be able to get
the originals back. So each record is saved before it returns (blobs first, then the manifest that
names them, both atomic) and a tracker outlives the app under `data_dir()/changes/`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import posixpath
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..state.diffing import apply_hunk_revert
from ..paths import data_dir
from ..protocol.fs import Scope, _write_atomically, open_directory
from .revert_undo import UndoStep, put_back, read_file

log = logging.getLogger("rat.changes")

Source = Literal["write", "diff"]
SCHEMA = 1
MANIFEST = "manifest.json"
BLOBS = "blobs"
# A file bigger than this is not snapshotted when a tool call first names it (the read runs on the
# event loop); its original then comes from the diff the agent reports.
MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024


@dataclass(eq=False)
class FileChange:
    """One file in one turn: `original` before the turn (None: the agent created it), `current` as
    the agent (or our last revert) left it (None: deleted)."""

    path: str
    original: str | None
    current: str | None
    source: Source


@dataclass(eq=False)
class TurnChanges:
    turn: int
    prompt: str
    started: str  # local time, ISO 8601
    files: list[FileChange] = field(default_factory=list)

    def file(self, path: str) -> FileChange | None:
        return next((change for change in self.files if change.path == path), None)


class ChangeTrackerError(ValueError):
    """A manifest that cannot be read: load_all skips that tracker rather than failing the review."""


class RevertError(Exception):
    """A revert that could not be done; the message is for the user."""


def changes_root() -> Path:
    return data_dir() / "changes"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _read_text(path: Path) -> str:
    """newline="" keeps "\\r\\n" as on disk, so a revert writes back exactly what was there."""
    with open(path, encoding="utf-8", errors="replace", newline="") as file:
        return file.read()


class ChangeTracker:
    """One session's changes. Nothing touches the disk until the first record, so sessions that
    change no file leave no directory behind."""

    def __init__(self, directory: Path, cwd: str, remote: str | None = None) -> None:
        self.directory = Path(directory)
        # A remote agent's files are on its machine (`remote` is its host): the tracker records the diffs
        # it reports and never reads, snapshots or writes a local path of the same name.
        self.remote = remote
        self.cwd = posixpath.normpath(cwd) if remote else os.path.abspath(cwd)
        self.created = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.turns: list[TurnChanges] = []
        self._blobs: set[str] = set()  # blob names known to be on disk
        self._before: dict[tuple[str, str], str | None] = {}  # (call id, path) -> text when first seen
        self._recorded: set[tuple[str, str]] = set()
        self.undo_steps: list[UndoStep] = []  # the reverts of this run, newest last (revert_undo.py)
        if (self.directory / MANIFEST).exists():
            self._load()

    @classmethod
    def create(cls, cwd: str, root: Path | None = None, remote: str | None = None) -> ChangeTracker:
        """A new tracker for a session: its directory is named by time (sorts newest last) + a random id."""
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        return cls((root or changes_root()) / name, cwd, remote)

    @classmethod
    def load_all(cls, cwd: str, root: Path | None = None) -> list[ChangeTracker]:
        """Every stored tracker of `cwd`, newest first; an unreadable one is logged and skipped."""
        root = root or changes_root()
        wanted = os.path.abspath(cwd)
        trackers: list[ChangeTracker] = []
        try:
            directories = sorted((d for d in root.iterdir() if d.is_dir()), reverse=True)
        except OSError:
            return []
        for directory in directories:
            try:
                manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
                if not isinstance(manifest, dict) or manifest.get("cwd") != wanted:
                    continue
                trackers.append(cls(directory, wanted))
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as error:
                log.warning("skipping unreadable change tracker %s: %s", directory, error)
        return trackers

    # -- recording ------------------------------------------------------------------------------

    def begin_turn(self, turn: int, prompt: str) -> TurnChanges:
        entry = TurnChanges(turn, prompt, time.strftime("%Y-%m-%dT%H:%M:%S"))
        self.turns.append(entry)
        return entry

    def turn(self, turn: int) -> TurnChanges:
        for entry in reversed(self.turns):
            if entry.turn == turn:
                return entry
        raise RevertError(f"There is no turn {turn} in this tracker.")

    def record(self, path: str, old_text: str | None, new_text: str | None, source: Source) -> None:
        """The first record of a path in a turn fixes its original; later ones move only `current`.
        A change outside any turn (a late write) goes to the last turn."""
        turn = self.turns[-1] if self.turns else self.begin_turn(0, "")
        change = turn.file(path)
        if change is not None:
            change.current = new_text
        elif old_text == new_text:
            return  # rewrote the same text: nothing to review
        else:
            turn.files.append(FileChange(path, old_text, new_text, source))
        self._save_quietly()

    def observe_tool_call(self, call_id: str, status: str, content: list[dict[str, Any]]) -> None:
        """Agents that edit files themselves (Claude Agent, Codex) only report diffs, often of a
        fragment: snapshot each file when its call shows up, record it once the call completes."""
        for item in content:
            if item.get("type") != "diff" or not isinstance(item.get("path"), str):
                continue
            if self.remote:
                self._observe_remote(call_id, status, item)
                continue
            path = os.path.realpath(os.path.join(self.cwd, item["path"]))
            if not self.in_scope(path):
                # Only files rat-tui itself wrote outside (the user allowed each) may be reverted there.
                log.warning("tool call %s reports a diff outside %s: %s; not tracked", call_id, self.cwd, path)
                continue
            key = (call_id, path)
            if key in self._recorded:
                continue
            if status == "failed":
                self._before.pop(key, None)  # nothing changed (or nothing we can trust): forget it
                continue
            if status != "completed":
                if key not in self._before:
                    with contextlib.suppress(OSError, _TooBig):
                        self._before[key] = _snapshot(path)
                continue
            self._recorded.add(key)
            disk = self.current_text(path)
            latest = self.turns[-1] if self.turns else None
            if latest is not None and latest.file(path) is not None:
                self.record(path, None, disk, "diff")  # the original is already fixed
                continue
            has_before = key in self._before
            original = resolve_original(disk, item.get("oldText"), item.get("newText"),
                                        self._before.pop(key, None), has_before)
            if original is _UNKNOWN:
                log.info("cannot tell the original of %s from tool call %s: not recorded", path, call_id)
                continue
            self.record(path, original, disk, "diff")  # type: ignore[arg-type]

    def _observe_remote(self, call_id: str, status: str, item: dict[str, Any]) -> None:
        """A remote agent's diff, recorded as it reports it (old and new text) once its call completes."""
        path = posixpath.normpath(posixpath.join(self.cwd, item["path"]))
        if status != "completed" or (call_id, path) in self._recorded or not self.in_scope(path):
            return
        self._recorded.add((call_id, path))
        old, new = item.get("oldText"), item.get("newText")
        if isinstance(new, str):
            self.record(path, old if isinstance(old, str) else None, new, "diff")

    def current_text(self, path: str) -> str | None:
        """The file as it is on disk now; None if it is gone (or not a file). A remote agent's: as it last
        reported it."""
        if self.remote:
            change = next((c for turn in reversed(self.turns) for c in turn.files if c.path == path), None)
            return change.current if change is not None else None
        try:
            return _read_text(Path(path))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None

    def in_scope(self, path: str) -> bool:
        """Whether a file lies in the session's directory (symlinks resolved; a remote one's by its name)."""
        if self.remote:
            return posixpath.normpath(path).startswith(self.cwd.rstrip("/") + "/")
        return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(self.cwd))

    def offered(self, change: FileChange) -> bool:
        """Whether the review lists a change: a file in the session's directory, or one rat-tui wrote outside
        it itself after the user allowed that write. A diff an agent names outside is never offered (a record
        of one, from a stored manifest, included): nothing may be written there."""
        return self.in_scope(change.path) or change.source == "write"

    def _scope(self, change: FileChange) -> Scope:
        """Where a revert may write: the session's directory; outside it, only the very file that rat-tui
        wrote there itself after the user allowed it (a `write` record), never one an agent's diff names."""
        if self.in_scope(change.path):
            return Scope((Path(os.path.realpath(self.cwd)),))
        if change.source == "write":
            return Scope((Path(change.path).parent,), exact=True)
        raise RevertError(f"{change.path} is outside the session's directory: rat-tui does not write there.")

    def display_path(self, path: str) -> str:
        """Relative to the session's directory when inside it, as the user thinks of the file."""
        relative = os.path.relpath(path, self.cwd)
        return path if relative.startswith("..") else relative

    # -- reverts --------------------------------------------------------------------------------

    def revert_file(self, turn: int, path: str) -> str:
        change = self._change(turn, path)
        return self._undoable(self.display_path(path), [change], lambda: self._revert_file(turn, path))

    def revert_hunk(self, turn: int, path: str, hunk_index: int) -> str:
        change = self._change(turn, path)
        return self._undoable(f"change {hunk_index + 1} of {self.display_path(path)}", [change],
                              lambda: self._revert_hunk(turn, path, hunk_index))

    def revert_turn(self, turn: int) -> str:
        return self._undoable(f"turn {turn}", list(self.turn(turn).files), lambda: self._revert_turn(turn))

    def _undoable(self, label: str, changes: list[FileChange], revert) -> str:
        """Run `revert`, keeping the files' bytes before it for `undo_revert` (even when it fails halfway:
        what it did write can be undone)."""
        if self.remote:
            raise RevertError(f"The files are on {self.remote}, where the agent runs: rat only saw the diffs it "
                              "reported and cannot put them back (ask the agent to).")
        before = [(change, read_file(change.path), change.current) for change in changes]
        try:
            return revert()
        finally:
            step = UndoStep(label)
            for change, was, current in before:
                now = read_file(change.path)
                if now.data != was.data:
                    step.files.append((change, was, current, now))
            if step.files:
                self.undo_steps.append(step)

    def undo_revert(self) -> str:
        """Put back the files of the newest revert exactly as they were before it; refused (and kept for
        later) when one of them changed since the revert, so nothing done after it is lost."""
        if not self.undo_steps:
            raise RevertError("No revert to undo.")
        step = self.undo_steps[-1]
        moved = [self.display_path(change.path) for change, _was, _current, now in step.files
                 if read_file(now.path).data != now.data]
        if moved:
            raise RevertError(f"Not undone: {', '.join(moved)} changed since the revert of {step.label}.")
        self.undo_steps.pop()
        for change, was, current, _now in step.files:
            try:
                put_back(was, self._scope(change))
            except OSError as error:
                raise RevertError(f"Could not undo the revert of {self.display_path(change.path)}: "
                                  f"{error.strerror or error}") from None
            change.current = current
        self._save_quietly()
        return f"Undid the revert of {step.label}."

    def _revert_file(self, turn: int, path: str) -> str:
        change = self._change(turn, path)
        disk, left = self.current_text(path), change.current
        self._put(change, change.original)
        self._save_quietly()
        name = self.display_path(path)
        text = f"Deleted {name} (the agent created it)." if change.original is None else f"Reverted {name}."
        if disk != left:
            text += " It had changed since the agent's edit: those later changes are undone too."
        return text

    def _revert_hunk(self, turn: int, path: str, hunk_index: int) -> str:
        """Puts back one hunk of original → file on disk now (the diff the review shows), so the
        user's own later edits elsewhere in the file stay."""
        change = self._change(turn, path)
        disk, left = self.current_text(path), change.current
        name = self.display_path(path)
        try:
            text = apply_hunk_revert(change.original, disk or "", hunk_index)
        except IndexError:
            raise RevertError(f"{name} has no change {hunk_index + 1} to revert.") from None
        self._put(change, None if change.original is None and text == "" else text)
        self._save_quietly()
        message = f"Reverted change {hunk_index + 1} of {name}."
        if disk != left:
            message += " (The file had changed since the agent's edit.)"
        return message

    def _revert_turn(self, turn: int) -> str:
        """Every file of the turn back to its original; goes on past a failure, then reports it."""
        edited: list[str] = []
        failed: list[str] = []
        done = 0
        for change in self.turn(turn).files:
            disk, left = self.current_text(change.path), change.current
            try:
                self._put(change, change.original)
            except RevertError as error:
                failed.append(str(error))
                continue
            done += 1
            if disk != left:
                edited.append(self.display_path(change.path))
        self._save_quietly()
        text = f"Reverted turn {turn}: {done} file{'' if done == 1 else 's'}."
        if edited:
            text += f" Changed since the agent's edit (those changes are undone too): {', '.join(edited)}."
        if failed:
            raise RevertError(" ".join([text, *failed]))
        return text

    def _change(self, turn: int, path: str) -> FileChange:
        change = self.turn(turn).file(path)
        if change is None:
            raise RevertError(f"{self.display_path(path)} did not change in turn {turn}.")
        return change

    def _put(self, change: FileChange, text: str | None) -> None:
        """Make the file on disk `text` (None: delete it), keeping its mode and line endings."""
        target = Path(change.path)
        scope = self._scope(change)
        try:
            if text is None:
                with contextlib.suppress(FileNotFoundError):
                    directory = open_directory(target.parent, scope)
                    try:
                        os.unlink(target.name, dir_fd=directory)
                    finally:
                        os.close(directory)
            else:
                _write_atomically(target, text, scope)
        except OSError as error:
            raise RevertError(f"Could not revert {self.display_path(change.path)}: {error.strerror or error}") from None
        change.current = text

    # -- persistence ----------------------------------------------------------------------------

    def _save_quietly(self) -> None:
        """A tracker that cannot be saved must not break the session: keep it in memory, say so in the log."""
        try:
            self.save()
        except (OSError, UnicodeError):
            log.exception("could not save the change tracker %s", self.directory)

    def save(self) -> None:
        (self.directory / BLOBS).mkdir(parents=True, exist_ok=True)
        turns = []
        for entry in self.turns:
            files = [{"path": c.path, "source": c.source, "original": self._blob(c.original),
                      "current": self._blob(c.current)} for c in entry.files]
            turns.append({"turn": entry.turn, "prompt": entry.prompt, "started": entry.started, "files": files})
        manifest = {"schema": SCHEMA, "cwd": self.cwd, "created": self.created, "turns": turns}
        _write_atomically(self.directory / MANIFEST, json.dumps(manifest, indent=1, ensure_ascii=False))
        referenced = {name for t in turns for f in t["files"] for name in (f["original"], f["current"]) if name}
        for stale in self._blobs - referenced:  # texts the agent later replaced
            with contextlib.suppress(OSError):
                (self.directory / BLOBS / stale).unlink()
        self._blobs &= referenced

    def _blob(self, text: str | None) -> str | None:
        """The blob name holding `text`, written (atomically, before the manifest names it) if new."""
        if text is None:
            return None
        name = _digest(text)
        if name not in self._blobs:
            path = self.directory / BLOBS / name
            if not path.exists():
                _write_atomically(path, text)
            self._blobs.add(name)
        return name

    def _load(self) -> None:
        try:
            manifest = json.loads((self.directory / MANIFEST).read_text(encoding="utf-8"))
            if manifest.get("schema") != SCHEMA:
                raise ChangeTrackerError(f"unknown schema {manifest.get('schema')!r}")
            self.created = str(manifest.get("created", self.created))
            blobs: dict[str, str] = {}

            def text(name: Any) -> str | None:
                if name is None:
                    return None
                if name not in blobs:
                    blobs[name] = _read_text(self.directory / BLOBS / str(name))
                return blobs[name]

            for item in manifest["turns"]:
                entry = TurnChanges(int(item["turn"]), str(item["prompt"]), str(item["started"]))
                for f in item["files"]:
                    source = "diff" if f.get("source") == "diff" else "write"
                    entry.files.append(FileChange(str(f["path"]), text(f["original"]), text(f["current"]), source))
                self.turns.append(entry)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise ChangeTrackerError(f"{self.directory / MANIFEST}: {error}") from error
        self._blobs = set(blobs)


# -- diffs reported by the agent ----------------------------------------------------------------


class _TooBig(Exception):
    pass


_UNKNOWN: Any = object()


def _snapshot(path: str) -> str | None:
    try:
        if os.stat(path).st_size > MAX_SNAPSHOT_BYTES:
            raise _TooBig(path)
        return _read_text(Path(path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def _endings_like(text: str | None, disk: str) -> str | None:
    """Agents report diffs with "\\n"; on a CRLF file the text on disk has "\\r\\n"."""
    if text is None or "\r\n" not in disk or "\r\n" in text:
        return text
    return text.replace("\n", "\r\n")


def resolve_original(disk: str | None, old: Any, new: Any, before: str | None, has_before: bool) -> Any:
    """The file before a completed tool call, from what we know: a snapshot taken when the call
    first showed up (if the file changed since, that is the original), a whole-file diff whose new
    side is the disk, or a fragment (Claude's Edit: old_string → new_string) found once on disk and
    swapped back. `_UNKNOWN` when none fits: recording a guess could make a revert destroy code."""
    if disk is None:
        return _UNKNOWN  # deleted or never written: there is nothing safe to restore from
    if has_before and before != disk:
        return before
    if not isinstance(new, str) or not (old is None or isinstance(old, str)):
        return _UNKNOWN
    old, new = _endings_like(old, disk), _endings_like(new, disk)
    if new == disk:
        return old  # None: the agent created the file
    if old is not None and new and disk.count(new) == 1:
        return disk.replace(new, old, 1)
    return _UNKNOWN

