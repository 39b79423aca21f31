"""Parses a huge wire line in a child process, so the loop's thread keeps reading keys and drawing.

A JSON parser holds the GIL from the first byte to the last (orjson and the stdlib's scanner alike): a
50 MB line froze the UI for as long as its parse took, and a thread cannot help. The child parses the
line as the router would (`decode_line` with the router's decoder) and sends the value back in
`marshal`'s format, which holds nothing but JSON's types and runs no code when read. What the child
cannot parse, or a child that is gone, is answered "not parsed": the router then parses the line itself
as before (and says what is wrong with it), so this only ever makes a line cheaper, never different.

Frames both ways: an 8-byte big-endian length, then that many bytes; answers begin with one status byte.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import marshal
import struct
import sys
from typing import Any

log = logging.getLogger(__name__)

HUGE_LINE = 4 * 1024 * 1024
"""Lines at least this long are parsed aside; below it the hand-off costs more than the parse it saves."""
_LENGTH = struct.Struct("!Q")
_PARSED, _REFUSED = b"1", b"0"
_PIECE = 1024 * 1024
NOT_PARSED = object()


class AsideParser:
    """One child process, started for the first huge line and reused; one line at a time, in order."""

    def __init__(self) -> None:
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self.parsed = 0  # lines parsed in the child (tests)

    async def parse(self, line: bytes) -> Any:
        """The line's JSON value, or NOT_PARSED (the caller parses it itself)."""
        async with self._lock:
            try:
                proc = await self._started()
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(_LENGTH.pack(len(line)))
                view = memoryview(line)
                for start in range(0, len(line), _PIECE):  # a copy of a piece at a time, not of the line
                    proc.stdin.write(view[start : start + _PIECE])
                    await proc.stdin.drain()
                status = await proc.stdout.readexactly(1)
                (size,) = _LENGTH.unpack(await proc.stdout.readexactly(_LENGTH.size))
                payload = await _read_into(proc.stdout, size)
            except (OSError, EOFError, asyncio.IncompleteReadError, ValueError) as error:
                log.warning("the parser for long lines failed (%s); parsing on the main thread", error)
                await self.close()
                return NOT_PARSED
            if status != _PARSED:
                return NOT_PARSED
            try:
                value = marshal.loads(payload)
            except (EOFError, ValueError, TypeError):
                return NOT_PARSED
            self.parsed += 1
            return value

    async def _started(self) -> asyncio.subprocess.Process:
        if self._proc is None or self._proc.returncode is not None:
            self._proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "rat_tui.protocol.aside", stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        return self._proc

    async def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 2.0)


async def _read_into(stream: asyncio.StreamReader, size: int) -> bytearray:
    """`size` bytes, gathered a piece at a time into one buffer (readexactly copies them whole at the end)."""
    payload = bytearray(size)
    view, got = memoryview(payload), 0
    while got < size:
        piece = await stream.read(min(_PIECE, size - got))
        if not piece:
            raise asyncio.IncompleteReadError(bytes(view[:got]), size)
        view[got : got + len(piece)] = piece
        got += len(piece)
    return payload


def _serve() -> None:
    """The child: parse each framed line, answer its value or a refusal; end at EOF (rat is gone)."""
    from .lines import decode_line
    from .router import WIRE_DECODER

    read, write = sys.stdin.buffer.read, sys.stdout.buffer.write
    while True:
        header = read(_LENGTH.size)
        if len(header) < _LENGTH.size:
            return
        (size,) = _LENGTH.unpack(header)
        line = read(size)
        try:
            payload = marshal.dumps(decode_line(line, WIRE_DECODER))  # (an int subclass, a clamped id, is refused)
            status = _PARSED
        except Exception:  # not JSON, too deep, not marshallable: the router parses it and says why
            payload, status = b"", _REFUSED
        write(status + _LENGTH.pack(len(payload)))
        write(payload)
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    _serve()
