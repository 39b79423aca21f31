"""Provides the compiled methods of dataclasses, kept from one launch to the next (`install`, `save`).

`@dataclass` writes the source of each class's methods (`__init__`, `__repr__`, `__eq__`, ...) and compiles
it with `exec`: 0.1-0.3 ms a method, and about 400 methods are made before rat's first frame (Textual's
classes and ours). Measured here (`import rat_tui.cli, rat_tui.app`, best of 3): 0.29-0.30 s compiling
them, 0.23-0.25 s with this cache, its file read included (0.9 ms for 396 methods).

The source of a method depends only on its class's definition, and what is compiled from the same source
is the same code: so the code is kept in a file in the user's cache directory, keyed by its source, and
the next launch runs it without compiling. Only `dataclasses` is touched, and only its name `exec`
(a module global shadowing the builtin there): the methods it makes are made as before, from code
compiled from the very same text.

The file holds code run at startup, so it is trusted as Python trusts a `__pycache__`: only when this
user owns it and nobody else may write it. A file that is missing, damaged, written by another Python, or
not trusted is ignored (logged) and written anew at the next `save`; nothing here ever stops a launch.
`RAT_DATACLASS_CACHE=0` turns it off (the bench compares with it off).
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import importlib.util
import logging
import marshal
import os
import tempfile
import threading
from pathlib import Path
from types import CodeType
from typing import Any

log = logging.getLogger("rat.startup")

FILE_NAME = "dataclass-methods.bin"
ENV = "RAT_DATACLASS_CACHE"  # "0": compile as Python does
# The file's first bytes: the interpreter's bytecode magic (code objects are only valid for it), then ours.
HEADER = importlib.util.MAGIC_NUMBER + b"rat-dataclass-methods-2\n"
MAX_ENTRIES = 4096  # methods kept: beyond it, only those this process made (classes gone from the code drop out)
MAX_BYTES = 16 << 20  # a bigger file is not read

_known: dict[str, CodeType] = {}  # read from the file (or saved since)
_used: dict[str, CodeType] = {}  # made in this process, by source
_path: Path | None = None
_lock = threading.Lock()
_saved_atexit = False
compiled = 0  # methods compiled in this process (tests: none once the file has them)
found = 0  # methods taken from the file


def _exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> Any:
    """`exec`, as `dataclasses` calls it, compiling a source text only when it was not compiled before."""
    global compiled, found
    if type(source) is str:
        code = _known.get(source)
        if code is None:
            # As `exec` compiles it there: with the compiler flags of `dataclasses` itself, which imports no
            # __future__ feature (inheriting this module's `annotations` made every annotation of the
            # generated methods a string: `__init__.__annotations__`, the class's signature and __doc__).
            code = compile(source, "<string>", "exec", dont_inherit=True)
            compiled += 1
        else:
            found += 1
        _used[source] = code
        source = code
    return builtins.exec(source, globals, locals, **kwargs)


def install(path: Path | None = None) -> bool:
    """Make `dataclasses` take the methods compiled before from `path` (FILE_NAME in the user cache directory
    by default) and remember what it compiles, for `save`, also called at exit. Whether it is on."""
    global _path, _saved_atexit
    if os.environ.get(ENV, "1").strip() == "0":
        return False
    if path is None:
        from . import paths

        path = paths.cache_dir() / FILE_NAME
    _path = path
    _known.update(_read(path))
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    if not _saved_atexit:
        _saved_atexit = True
        atexit.register(save)
    return True


def uninstall() -> None:
    """Back to Python's own (tests)."""
    global _path
    if getattr(dataclasses, "exec", None) is _exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    _path = None
    _known.clear()
    _used.clear()


def _read(path: Path) -> dict[str, CodeType]:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return {}
    except OSError as error:
        log.info("dataclass methods not read from %s: %s", path, error.strerror or error)
        return {}
    try:
        with os.fdopen(fd, "rb") as file:
            stat = os.fstat(file.fileno())
            if hasattr(os, "getuid") and (stat.st_uid != os.getuid() or stat.st_mode & 0o022):
                log.warning("dataclass methods not read from %s: not this user's own file, or others may write it",
                            path)
                return {}
            if stat.st_size > MAX_BYTES:
                log.info("dataclass methods not read from %s: %d bytes", path, stat.st_size)
                return {}
            data = file.read()
    except OSError as error:
        log.info("dataclass methods not read from %s: %s", path, error.strerror or error)
        return {}
    if not data.startswith(HEADER):
        log.info("dataclass methods not read from %s: written by another Python or another rat", path)
        return {}
    try:
        entries = marshal.loads(memoryview(data)[len(HEADER):])
    except (ValueError, EOFError, TypeError) as error:
        log.info("dataclass methods not read from %s: damaged (%s)", path, error)
        return {}
    if type(entries) is not dict or not all(type(k) is str and type(v) is CodeType for k, v in entries.items()):
        log.info("dataclass methods not read from %s: damaged (not a table of code)", path)
        return {}
    return entries


def save() -> None:
    """Write what this process compiled to the file, with what it held (off the loop: the warm-up's thread,
    and at exit). Nothing when nothing new was compiled; a failure is logged, never raised."""
    with _lock:
        path = _path
        used = dict(_used)  # (a copy: other threads make classes meanwhile)
        if path is None or all(source in _known for source in used):
            return
        entries = {**_known, **used} if len(_known) + len(used) <= MAX_ENTRIES else used
        try:
            data = HEADER + marshal.dumps(entries)
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".dataclass-methods-")  # (mode 0600)
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(data)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except (OSError, ValueError) as error:
            log.warning("dataclass methods not saved to %s: %s", path, getattr(error, "strerror", None) or error)
            return
        _known.update(used)
        log.info("saved %d dataclass methods to %s", len(entries), path)
