"""Provides FileAccess: the client side of ACP's fs/read_text_file and fs/write_text_file."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import logging
import os
import secrets
import stat
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .router import INTERNAL_ERROR, INVALID_PARAMS, RequestHandler, RpcError

log = logging.getLogger("rat.fs")

# ACP's "Resource not found" (schema ErrorCode). Agents recognise it as "the file does not exist".
RESOURCE_NOT_FOUND = -32002
# Not assigned by ACP; -32001 sits in JSON-RPC's implementation-defined server range (-32000..-32099)
# next to ACP's own codes and is distinct from "not found", so an agent does not mistake a refusal
# for a missing file (and try to create it).
ACCESS_DENIED = -32001


@dataclass(frozen=True)
class FileWrite:
    """One completed agent write, for the change review: `old_text` None means the file was new.

    `new_text` is the text as written to disk (CRLF-converted if the file used CRLF), so a diff
    against `old_text` shows only what the agent changed.
    """

    path: Path
    old_text: str | None
    new_text: str


class FileAccess:
    """Serves an agent's file reads and writes, limited to the session's directories.

    A path outside the roots (after resolving symlinks and `..`) goes to `ask_outside(path, "read"
    | "write")` when given (the UI asks the user); otherwise, or when it answers False, the request
    fails with ACCESS_DENIED (-32001, "Access denied: PATH is outside the session's directories").
    A missing file answers RESOURCE_NOT_FOUND (-32002), or `{"content": ""}` with
    `missing_file_empty`, because Gemini CLI reads a file before creating it and gives up on an error.
    Writes are atomic (temp file in the same directory, fsync, os.replace), keep the file's mode and
    line endings, and are reported to `on_write` afterwards. Disk I/O runs in a worker thread so a
    big file never stalls the UI.
    """

    def __init__(
        self,
        roots: list[Path],
        *,
        missing_file_empty: bool = False,
        ask_outside: Callable[[Path, str], Awaitable[bool]] | None = None,
        on_write: Callable[[FileWrite], None] | None = None,
    ) -> None:
        self.roots = [Path(os.path.realpath(root)) for root in roots]
        self.missing_file_empty = missing_file_empty
        self.ask_outside = ask_outside
        self.on_write = on_write

    def handlers(self) -> dict[str, RequestHandler]:
        return {"fs/read_text_file": self.read_text_file, "fs/write_text_file": self.write_text_file}

    # -- requests -----------------------------------------------------------------------------

    async def read_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        path = await self._checked_path(params, "read")
        line = _optional_count(params, "line")
        limit = _optional_count(params, "limit")
        try:
            content = await asyncio.to_thread(_read_lines, path, line, limit)
        except (FileNotFoundError, NotADirectoryError):
            if self.missing_file_empty:
                return {"content": ""}
            raise RpcError(RESOURCE_NOT_FOUND, f"Resource not found: {path}") from None
        except IsADirectoryError:
            raise RpcError(INVALID_PARAMS, f"Is a directory, not a file: {path}") from None
        except OSError as error:
            raise RpcError(INTERNAL_ERROR, f"Cannot read {path}: {error.strerror or error}") from None
        return {"content": content}

    async def write_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        content = params.get("content")
        if not isinstance(content, str):
            raise RpcError(INVALID_PARAMS, "content must be a string")
        path = await self._checked_path(params, "write")
        try:
            change = await asyncio.to_thread(_write_atomically, path, content)
        except IsADirectoryError:
            raise RpcError(INVALID_PARAMS, f"Is a directory, not a file: {path}") from None
        except OSError as error:
            raise RpcError(INTERNAL_ERROR, f"Cannot write {path}: {error.strerror or error}") from None
        if self.on_write is not None:
            try:
                self.on_write(change)
            except Exception:  # the write happened; a failing observer must not turn it into an error
                log.exception("on_write observer failed for %s", path)
        return {}  # WriteTextFileResponse is an (empty) object in the schema, not null

    # -- scope --------------------------------------------------------------------------------

    async def _checked_path(self, params: dict[str, Any], operation: str) -> Path:
        """The resolved path, once it is absolute and inside the roots (or the user allowed it)."""
        raw = params.get("path")
        if not isinstance(raw, str) or not raw:
            raise RpcError(INVALID_PARAMS, "path must be a non-empty string")
        if "\0" in raw:
            raise RpcError(INVALID_PARAMS, "path contains a NUL byte")
        if not os.path.isabs(raw):
            raise RpcError(INVALID_PARAMS, f"path must be absolute: {raw}")
        # realpath follows every symlink that exists and folds `..`, so a link inside the root
        # pointing outside is judged by where it really leads.
        path = Path(os.path.realpath(raw))
        if self.is_inside(path):
            return path
        if self.ask_outside is not None and await self.ask_outside(path, operation):
            return path
        roots = ", ".join(str(root) for root in self.roots) or "none"
        raise RpcError(ACCESS_DENIED, f"Access denied: {path} is outside the session's directories ({roots})")

    def is_inside(self, path: Path) -> bool:
        """Whether a resolved path lies in one of the roots."""
        return any(path.is_relative_to(root) for root in self.roots)


def _optional_count(params: dict[str, Any], key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RpcError(INVALID_PARAMS, f"{key} must be a non-negative integer")
    return value


def _read_lines(path: Path, line: int | None, limit: int | None) -> str:
    """The text from 1-based `line`, at most `limit` lines; streams so a slice of a big file is cheap.

    newline="" keeps "\\r\\n" as it is on disk: the agent edits by exact text match.
    """
    _require_regular(os.stat(path), path)
    with open(path, encoding="utf-8", errors="replace", newline="") as file:
        if line is None and limit is None:
            return file.read()
        start = max((line or 1) - 1, 0)
        stop = None if limit is None else start + limit
        return "".join(itertools.islice(file, start, stop))


def _require_regular(info: os.stat_result, path: Path) -> None:
    """Refuse directories, and FIFOs or devices, which would block a worker thread or never end."""
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "Not a regular file", str(path))


def _uses_crlf(data: bytes) -> bool:
    """Whether a file's first line ends in CRLF: the file's convention, as editors decide it."""
    newline = data.find(b"\n")
    return newline > 0 and data[newline - 1 : newline] == b"\r"


def _write_atomically(path: Path, content: str) -> FileWrite:
    """Write via a temp file + os.replace, so a crash leaves either the old file or the new one."""
    old_bytes: bytes | None
    old_stat: os.stat_result | None
    try:
        old_stat = os.stat(path)
    except FileNotFoundError:
        old_stat = None
    if old_stat is not None:
        _require_regular(old_stat, path)
        with open(path, "rb") as file:
            old_bytes = file.read()
    else:
        old_bytes = None
    if old_bytes is not None and _uses_crlf(old_bytes):
        content = content.replace("\r\n", "\n").replace("\n", "\r\n")
    data = content.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    temp, fd = _create_temp(path)
    try:
        if old_stat is not None:
            os.fchmod(fd, old_stat.st_mode & 0o7777)
            if (old_stat.st_uid, old_stat.st_gid) != (os.getuid(), os.getgid()):
                with contextlib.suppress(OSError):  # only root or the group's member may keep them
                    os.fchown(fd, old_stat.st_uid, old_stat.st_gid)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(temp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_directory(path.parent)
    old_text = None if old_bytes is None else old_bytes.decode("utf-8", "replace")
    return FileWrite(path=path, old_text=old_text, new_text=content)


def _create_temp(path: Path) -> tuple[Path, int]:
    """A fresh hidden file next to `path`; created with 0o666 so a new file's mode follows the umask."""
    for _ in range(100):
        temp = path.with_name(f".{path.name}.rat-{secrets.token_hex(4)}.tmp")
        try:
            return temp, os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(17, "could not create a unique temp file", str(path.parent))


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable; best effort, some filesystems refuse directory fsync."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
