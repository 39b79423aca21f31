"""Provides the undo of a revert (F3's r, h and R): the files' exact bytes before it, put back. No Textual.

A revert is one key in the change review; rather than ask each time (which trains a reflexive Enter
and slows the hunk-by-hunk review), every revert can be undone: before it writes, each file it touches
is read as bytes (None: absent) with its mode, and `u` writes those bytes back (or deletes a file the
revert created). An undo never overwrites what happened after the revert: a file whose bytes are not
what the revert left is reported and nothing of that revert is undone. The steps live in memory, for
the session (a revert from an earlier run of rat-tui is undone by reverting nothing: its file is there).
"""

from __future__ import annotations

import contextlib
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..protocol.fs import Scope, open_directory, replace_in

_SEQUENCE = itertools.count(1)  # orders the steps of several trackers: the newest revert is undone first


@dataclass(frozen=True)
class FileBytes:
    """A file as it was on disk: its bytes and mode, or absent (`data` None)."""

    path: str
    data: bytes | None
    mode: int | None = None


def read_file(path: str) -> FileBytes:
    try:
        with open(path, "rb") as file:
            return FileBytes(path, file.read(), os.fstat(file.fileno()).st_mode & 0o7777)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return FileBytes(path, None)


def put_back(state: FileBytes, scope: Scope) -> None:
    """Make the file on disk exactly `state` (atomically; None: delete it), inside `scope` only."""
    target = Path(state.path)
    if state.data is None:
        with contextlib.suppress(FileNotFoundError):
            directory = open_directory(target.parent, scope)
            try:
                os.unlink(target.name, dir_fd=directory)
            finally:
                os.close(directory)
        return
    directory = open_directory(target.parent, scope, create=True)
    try:
        replace_in(directory, target.name, state.data, state.mode)
    finally:
        os.close(directory)


@dataclass
class UndoStep:
    """One revert: what it was (for the messages) and, per file it changed, the bytes before and after it,
    with the tracker's own record of the file (`current`) before it."""

    label: str
    files: list[tuple[Any, FileBytes, str | None, FileBytes]] = field(default_factory=list)  # (FileChange, …)
    sequence: int = field(default_factory=lambda: next(_SEQUENCE))
