"""Provides FileAccess: the client side of ACP's fs/read_text_file and fs/write_text_file."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import secrets
import stat

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .router import INT_LIMIT, INTERNAL_ERROR, INVALID_PARAMS, RequestHandler, RpcError

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
            content = await asyncio.to_thread(_read_lines, path, line, limit, self._scope(path))
        except OutsideScope as error:
            raise RpcError(ACCESS_DENIED, f"Access denied: {error.strerror}") from None
        except ReadTooLarge as error:
            log.info("fs/read_text_file refused: %s", error)
            raise RpcError(INVALID_PARAMS, str(error), {"path": str(path), "maxBytes": error.cap}) from None
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
            change = await asyncio.to_thread(_write_atomically, path, content, self._scope(path))
        except OutsideScope as error:
            raise RpcError(ACCESS_DENIED, f"Access denied: {error.strerror}") from None
        except UnicodeEncodeError:
            raise RpcError(INVALID_PARAMS, "content is not valid Unicode (a lone surrogate)") from None
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

    def _scope(self, path: Path) -> Scope:
        """What the descriptors opened for `path` must turn out to be: inside the roots, or (a path the
        user allowed outside them) exactly that file's directory."""
        if self.is_inside(path):
            return Scope(tuple(self.roots))
        return Scope((path.parent,), exact=True)


def _optional_count(params: dict[str, Any], key: str) -> int | None:
    value = params.get(key)
    if value is None:
        return None
    # The router reads an integer past 64 bits as INT_LIMIT - 1 (clamped): that value, and any beyond it,
    # is no line number or count of a real file, and islice could not take it.
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_COUNT:
        raise RpcError(INVALID_PARAMS, f"{key} must be a non-negative integer below {MAX_COUNT}")
    return value


MAX_COUNT = INT_LIMIT - 1


# What one fs/read_text_file answer may hold, in UTF-8 bytes of the text sent: a whole file or a slice of
# lines past it (or a single line longer than it) is refused, never read whole into memory.
MAX_READ_BYTES = 16 * 1024 * 1024
_SKIP_CHUNK = 1024 * 1024  # lines before `line` are skipped in pieces of at most this many characters


class ReadTooLarge(ValueError):
    def __init__(self, path: Path, cap: int, line: int | None) -> None:
        where = f" from line {line}" if line else ""
        super().__init__(f"Cannot read {path}{where}: the text is over the {cap // (1024 * 1024)} MiB read cap "
                         f"(ask for fewer lines with line and limit)")
        self.cap = cap


class OutsideScope(OSError):
    """What was opened is not where the path said (a symlink swapped in meanwhile, a moved directory)."""


@dataclass(frozen=True)
class Scope:
    """Where an opened file or directory must really be: under one of `roots`, or (`exact`) in one of them."""

    roots: tuple[Path, ...]
    exact: bool = False

    def allows(self, real: str) -> bool:
        path = Path(real)
        if self.exact:
            return path in self.roots
        return any(path.is_relative_to(root) for root in self.roots)


def fd_path(fd: int) -> str | None:
    """The real path of an open descriptor (Linux /proc, macOS F_GETPATH); None where neither works."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
    getpath = getattr(fcntl, "F_GETPATH", None) if fcntl is not None else None
    if getpath is not None:
        with contextlib.suppress(OSError):
            raw = fcntl.fcntl(fd, getpath, b"\0" * 1024)
            return os.fsdecode(raw.split(b"\0", 1)[0])
    return None


def _verify(fd: int, scope: Scope | None, what: Path, directory: bool = False) -> None:
    """Refuse a descriptor whose real path lies outside `scope` (checked on the descriptor, not the name)."""
    if scope is None:
        return
    real = fd_path(fd)
    if real is None:  # no way to ask the kernel: judge by the resolved name (best effort)
        real = os.path.realpath(what)
    target = Path(real) if directory else Path(real).parent
    if not scope.allows(str(target)):
        raise OutsideScope(errno.EACCES, f"{what} leads to {real}, outside the session's directories", str(what))


_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def open_directory(directory: Path, scope: Scope | None, create: bool = False) -> int:
    """A descriptor of `directory` checked to lie in `scope`; missing directories are created one by
    one inside the checked one (mkdir + open with O_NOFOLLOW relative to it), so a symlink swapped in
    at any moment cannot lead the walk outside."""
    missing: list[str] = []
    current = directory
    while True:
        try:
            fd = os.open(current, _OPEN_DIR)
            break
        except FileNotFoundError:
            if not create or current.parent == current:
                raise
            missing.append(current.name)
            current = current.parent
    try:
        _verify(fd, scope, current, directory=True)
        for name in reversed(missing):
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
            child = os.open(name, _OPEN_DIR | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = child
        if missing:
            _verify(fd, scope, directory, directory=True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path: Path, scope: Scope | None) -> int:
    """`path` opened read-only without following a final symlink, checked to lie in `scope`.
    O_NONBLOCK so that opening a FIFO cannot hang a worker thread (it is refused just after)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | _NOFOLLOW)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OutsideScope(errno.EACCES, f"{path} became a symbolic link", str(path)) from None
        raise
    try:
        _require_regular(os.fstat(fd), path)
        _verify(fd, scope, path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_lines(path: Path, line: int | None, limit: int | None, scope: Scope | None = None,
                cap: int = MAX_READ_BYTES) -> str:
    """The text from 1-based `line`, at most `limit` lines; streams so a slice of a big file is cheap.

    newline="" keeps "\\r\\n" as it is on disk: the agent edits by exact text match. The file is
    judged on the descriptor that is read (`scope`), not on its name. At most `cap` bytes (UTF-8, as
    sent) are kept, and no read asks for more than that: past it, ReadTooLarge (a line of any length
    included: never read whole, nor a line skipped before `line`).
    """
    fd = open_file(path, scope)
    with open(fd, encoding="utf-8", errors="replace", newline="") as file:
        for _ in range(max((line or 1) - 1, 0)):
            piece = file.readline(_SKIP_CHUNK)
            while piece and not piece.endswith(("\n", "\r")):
                piece = file.readline(_SKIP_CHUNK)
            if not piece:
                return ""
        parts: list[str] = []
        used = 0
        count = 0
        while limit is None or count < limit:
            # A character is at least one byte: reading cap - used + 1 characters is enough to know.
            text = file.readline(cap - used + 1)
            if not text:
                break
            used += len(text.encode("utf-8", "surrogatepass"))
            if used > cap:
                raise ReadTooLarge(path, cap, line)
            parts.append(text)
            if text.endswith(("\n", "\r")):
                count += 1
        return "".join(parts)


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


def _write_atomically(path: Path, content: str, scope: Scope | None = None) -> FileWrite:
    """Write via a temp file + rename, so a crash leaves either the old file or the new one.

    Everything happens relative to one descriptor of the file's directory, checked to lie in `scope`:
    the old text is read with O_NOFOLLOW, the temp file is created in that directory and renamed over
    the name there. A directory swapped for a symlink meanwhile cannot redirect the write.
    """
    dir_fd = open_directory(path.parent, scope, create=True)
    try:
        return _write_in(dir_fd, path, content)
    finally:
        os.close(dir_fd)


def _write_in(dir_fd: int, path: Path, content: str) -> FileWrite:
    name = path.name
    old_bytes: bytes | None = None
    old_stat: os.stat_result | None = None
    try:
        old_fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | _NOFOLLOW, dir_fd=dir_fd)
    except FileNotFoundError:
        old_fd = -1
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OutsideScope(errno.EACCES, f"{path} became a symbolic link", str(path)) from None
        raise
    if old_fd >= 0:
        try:
            old_stat = os.fstat(old_fd)
            _require_regular(old_stat, path)
            os.set_blocking(old_fd, True)
            with open(old_fd, "rb", closefd=False) as file:
                old_bytes = file.read()
        finally:
            os.close(old_fd)
    if old_bytes is not None and _uses_crlf(old_bytes):
        content = content.replace("\r\n", "\n").replace("\n", "\r\n")
    data = content.encode("utf-8")
    replace_in(dir_fd, name, data, None if old_stat is None else old_stat.st_mode & 0o7777,
               None if old_stat is None else (old_stat.st_uid, old_stat.st_gid))
    old_text = None if old_bytes is None else old_bytes.decode("utf-8", "replace")
    return FileWrite(path=path, old_text=old_text, new_text=content)


def replace_in(dir_fd: int, name: str, data: bytes, mode: int | None = None,
               owner: tuple[int, int] | None = None) -> None:
    """Make `name` in the (checked) directory `dir_fd` hold exactly `data`, atomically: a temp file beside
    it, written and fsynced, renamed over it, the rename fsynced. `mode` (else the umask's) and `owner`
    (kept where we may) are set on the temp file first. The one atomic write of rat-tui: the agent's
    writes (fs/write_text_file) and the change review's reverts and their undo use it."""
    temp, fd = _create_temp(name, dir_fd)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        if owner is not None and owner != (os.getuid(), os.getgid()):
            with contextlib.suppress(OSError):  # only root or the group's member may keep them
                os.fchown(fd, *owner)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable; some filesystems refuse it
        os.fsync(dir_fd)


def _create_temp(name: str, dir_fd: int) -> tuple[str, int]:
    """A fresh hidden file beside `name` in the directory `dir_fd`; created with 0o666 so a new file's
    mode follows the umask."""
    for _ in range(100):
        temp = f".{name}.rat-{secrets.token_hex(4)}.tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW
            return temp, os.open(temp, flags, 0o666, dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(17, "could not create a unique temp file", name)
