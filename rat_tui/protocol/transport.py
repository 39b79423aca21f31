"""Provides AgentProcess: an agent subprocess with newline-framed stdio and a drained stderr."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path

log = logging.getLogger("rat.agent")

READ_CHUNK = 256 * 1024
# How long the reader may hold the event loop before it yields (keystrokes must echo meanwhile).
READ_SLICE_SECONDS = 0.002


class AgentSpawnError(Exception):
    """The agent command could not be started (not found, not executable, bad cwd)."""


class StderrRing:
    """Keeps the last `limit` bytes an agent wrote to stderr, to show when it fails."""

    def __init__(self, limit: int = 64 * 1024) -> None:
        self.limit = limit
        self._parts: deque[bytes] = deque()
        self._size = 0
        self.total_bytes = 0

    def add(self, data: bytes) -> None:
        self.total_bytes += len(data)
        if len(data) >= self.limit:
            self._parts.clear()
            data = data[-self.limit :]
            self._size = 0
        self._parts.append(data)
        self._size += len(data)
        while self._size - len(self._parts[0]) >= self.limit:
            self._size -= len(self._parts.popleft())

    def tail(self, max_lines: int = 20) -> str:
        text = b"".join(self._parts).decode("utf-8", "replace")
        lines = text.rstrip("\n").splitlines()
        return "\n".join(lines[-max_lines:])


class AgentProcess:
    """One agent subprocess: spawn in the session cwd, frame stdout by newline, drain stderr.

    Lines have no length limit: asyncio's `readline()` caps them at 64 KiB, and real agents send
    lines of megabytes, so we split the byte stream ourselves.
    """

    def __init__(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        stderr_limit: int = 64 * 1024,
    ) -> None:
        if not argv:
            raise AgentSpawnError("No agent command given")
        self.argv = list(argv)
        self.cwd = Path(cwd)
        self.extra_env = dict(env or {})
        self.stderr = StderrRing(stderr_limit)
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    async def start(self) -> None:
        if not self.cwd.is_dir():
            raise AgentSpawnError(f"Working directory does not exist: {self.cwd}")
        program = self.argv[0]
        if os.sep not in program and shutil.which(program) is None:
            raise AgentSpawnError(f"Agent command not found on PATH: {program}")
        env = {**os.environ, **self.extra_env}
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(self.cwd),
                env=env,
                start_new_session=True,
            )
        except OSError as error:
            raise AgentSpawnError(f"Cannot start agent {program!r}: {error.strerror or error}") from error
        self._stderr_task = asyncio.create_task(self._drain_stderr(), name="agent-stderr")
        log.info("agent started pid=%s argv=%s cwd=%s", self._proc.pid, self.argv, self.cwd)

    async def _drain_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        while True:
            data = await self._proc.stderr.read(READ_CHUNK)
            if not data:
                return
            self.stderr.add(data)
            for line in data.decode("utf-8", "replace").splitlines():
                log.debug("agent stderr: %s", line[:2000])

    async def write_line(self, line: bytes) -> None:
        """Write one framed message; raises ConnectionError when the agent's stdin is gone."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing():
            raise ConnectionError("agent stdin is closed")
        async with self._write_lock:
            try:
                proc.stdin.write(line + b"\n")
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as error:
                raise ConnectionError("agent stdin is closed") from error

    async def lines(self, before_wait: Callable[[], None] | None = None) -> AsyncIterator[bytes]:
        """Yield stdout lines (without the newline) until EOF, yielding the loop every few ms.

        `before_wait` runs each time before the loop may run something else (a read, a yield): what
        the lines routed so far must have done by then (be journaled) is done there.
        """
        assert self._proc and self._proc.stdout
        stdout = self._proc.stdout
        buffer = bytearray()
        scan_from = 0
        slice_start = time.monotonic()
        while True:
            if before_wait is not None:
                before_wait()
            data = await stdout.read(READ_CHUNK)
            if not data:
                if buffer.strip():
                    yield bytes(buffer)
                return
            buffer += data
            start = 0
            while True:
                end = buffer.find(b"\n", scan_from)
                if end < 0:
                    break
                line = bytes(buffer[start:end])
                start = scan_from = end + 1
                if line.strip():
                    yield line
                if time.monotonic() - slice_start > READ_SLICE_SECONDS:
                    if before_wait is not None:
                        before_wait()
                    await asyncio.sleep(0)
                    slice_start = time.monotonic()
            if start:
                del buffer[:start]
            scan_from = len(buffer)
            if time.monotonic() - slice_start > READ_SLICE_SECONDS:
                if before_wait is not None:
                    before_wait()
                await asyncio.sleep(0)
                slice_start = time.monotonic()

    async def wait(self) -> int:
        assert self._proc
        code = await self._proc.wait()
        if self._stderr_task:
            try:
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        return code

    async def close(self, grace: float = 2.0) -> int | None:
        """Stop the agent politely: close stdin, wait, then SIGTERM, then SIGKILL (whole group)."""
        proc = self._proc
        if proc is None:
            return None
        if proc.returncode is None and proc.stdin and not proc.stdin.is_closing():
            proc.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if proc.returncode is not None:
                break
            if sig is not None:
                self._signal_group(sig)
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except asyncio.TimeoutError:
                continue
        if self._stderr_task and not self._stderr_task.done():
            self._stderr_task.cancel()
        log.info("agent pid=%s stopped with code %s", proc.pid, proc.returncode)
        return proc.returncode

    def _signal_group(self, sig: signal.Signals) -> None:
        assert self._proc
        try:
            os.killpg(self._proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                self._proc.send_signal(sig)
            except ProcessLookupError:
                pass
