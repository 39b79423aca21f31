"""Provides AgentProcess: an agent subprocess with newline-framed stdio and a drained stderr."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .. import priority
from . import prespawn
from .aside import HUGE_LINE, AsideParser
from .sanitize import clean

log = logging.getLogger("rat.agent")

READ_CHUNK = 256 * 1024
# How long the readers together may hold the event loop before it goes on (keystrokes must echo
# meanwhile). One slice per turn of the loop, shared: the first reader to run in a turn reads until it
# is used up and the others wait for the next turn, so twenty tabs streaming at once hold the loop no
# longer than one does (a keystroke has several hops to make, each a turn of the loop).
READ_SLICE_SECONDS = 0.002
# The slice's clock is read every TURN_CHECK_LINES lines (a power of two), and after any line longer than
# LONG_LINE bytes: short lines take 10-15 µs each to route, so a slice ends at most about 0.1 ms late.
TURN_CHECK_LINES = 8
LONG_LINE = 4096
_turn_started: float | None = None  # when the readers began reading in this turn of the loop
_next_turn_loop: asyncio.AbstractEventLoop | None = None  # the loop a new turn is scheduled on


def turn_used(now: float) -> bool:
    """Whether this turn's reading slice is used up (then a new one begins next turn of the loop)."""
    global _turn_started, _next_turn_loop
    if _turn_started is None:
        _turn_started = now
        return False
    if now - _turn_started <= READ_SLICE_SECONDS:
        return False
    loop = asyncio.get_running_loop()
    if _next_turn_loop is not loop:  # none scheduled yet (or on a loop since closed: tests run many)
        _next_turn_loop = loop
        loop.call_soon(_next_turn)  # after everything ready now: keystrokes, redraws, other readers
    return True


def _reading(pipe: asyncio.ReadTransport) -> bool:
    """Whether the pipe is being read (not paused, not closed). Python 3.11.2's pipe transport does not
    implement `is_reading` (later 3.11 releases do); its `_paused` flag says the same."""
    try:
        return pipe.is_reading()
    except NotImplementedError:
        return not getattr(pipe, "_paused", True) and not pipe.is_closing()


async def pass_turn(before_wait: Callable[[], None] | None, pipe: asyncio.ReadTransport | None = None) -> bool:
    """Give the loop its turns while this one's reading slice is used up, and wait while a key the user
    typed is on its way to the screen (`priority`); `before_wait` (the lines routed since the last turn
    must be journaled first) runs once before. Whether a turn was given.

    While it waits for a key, the agent's stdout `pipe` is not read either: asyncio's pipe reader went on
    filling the stream's buffer (128 KiB an agent), and the agent went on writing. With 20 agents flooding
    on 2 cores, a key reached the app 66 ms after it arrived, the loop's pipe reads taking 5-20 ms of wall
    time each in between (the CPUs shared with 20 busy agents). Paused, an agent blocks once the
    pipe is full (64 KiB) until the key is drawn."""
    passed = False
    paused = False
    try:
        while True:
            wait = priority.input_wait()
            if not wait and not turn_used(time.monotonic()):
                return passed
            if before_wait is not None:
                before_wait()
                before_wait = None
            passed = True
            if wait and pipe is not None and not paused and _reading(pipe):  # (not if the stream paused it)
                pipe.pause_reading()
                paused = True
            await priority.give_turn()  # with a key on its way, until it is drawn, not the whole window
    finally:
        if paused and not pipe.is_closing():
            pipe.resume_reading()


async def _drained(reader: asyncio.StreamReader) -> bool:
    """Whether the agent's output is drained: nothing is buffered, and nothing more is after the loop has
    polled the pipe (two turns: in the first the loop runs what was ready before its poll, this reader
    among them, then the pipe's own reader; the second sees what that one read). The reader's buffer is
    private to asyncio; a reader without it is never taken as drained (drawing keeps its flood pace)."""
    for turn in range(3):
        if getattr(reader, "_buffer", b"?"):
            return False
        if turn < 2:
            await asyncio.sleep(0)
    return True


def _next_turn() -> None:
    global _turn_started, _next_turn_loop
    _turn_started = None
    _next_turn_loop = None


# A line longer than this is skipped (its bytes are read and dropped up to its newline): a message
# of this size is not one an agent means to send, and holding it would cost the memory.
MAX_LINE_BYTES = 256 * 1024 * 1024
# Messages for the agent waiting in our buffers; past this, new ones are refused (the agent has
# stopped reading its stdin) instead of growing memory without bound.
MAX_QUEUED_BYTES = 16 * 1024 * 1024
# A write still waiting on the agent after this long means it has stopped reading its input.
WRITE_STALL_SECONDS = 10.0

# Process groups of every agent (and terminal command) this process started and that still run:
# a SIGHUP or SIGTERM handler stops them all without needing the app (see __main__.py).
LIVE_GROUPS: set[int] = set()


def signal_live_groups(sig: int) -> int:
    """Send `sig` to every live process group we started; returns how many were still there."""
    reached = 0
    for pgid in list(LIVE_GROUPS):
        try:
            os.killpg(pgid, sig)
            reached += 1
        except ProcessLookupError:
            LIVE_GROUPS.discard(pgid)
        except PermissionError:
            pass
    return reached


class WriteBackedUp(ConnectionError):
    """The agent is not reading its stdin and our queue for it is full: the message was not sent."""


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


class _Adopted:
    """A `subprocess.Popen` started before the loop ran (prespawn.py), with the asyncio streams and
    the parts of `asyncio.subprocess.Process` AgentProcess uses."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self._popen = proc
        self.pid = proc.pid
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        self._exited: asyncio.Future[int] | None = None

    @classmethod
    async def create(cls, proc: subprocess.Popen) -> _Adopted:
        adopted = cls(proc)
        loop = asyncio.get_running_loop()
        for name in ("stdout", "stderr"):
            reader = asyncio.StreamReader(limit=2**16, loop=loop)
            await loop.connect_read_pipe(lambda reader=reader: asyncio.StreamReaderProtocol(reader, loop=loop),
                                         getattr(proc, name))
            setattr(adopted, name, reader)
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop), proc.stdin)
        adopted.stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        exited = adopted._exited = loop.create_future()

        def wait() -> None:  # its own thread: a blocking waitpid, as asyncio's child watcher does
            code = proc.wait()
            with contextlib.suppress(RuntimeError):  # the loop is gone
                loop.call_soon_threadsafe(lambda: exited.done() or exited.set_result(code))

        threading.Thread(target=wait, name=f"agent-{proc.pid}-wait", daemon=True).start()
        return adopted

    @property
    def returncode(self) -> int | None:
        exited = self._exited
        return exited.result() if exited is not None and exited.done() else None

    async def wait(self) -> int:
        assert self._exited is not None
        return await asyncio.shield(self._exited)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            self._popen.send_signal(sig)


def autogroup_nice(pid: int | str) -> int | None:
    """The nice value of the autogroup of process `pid` ("self": this one): `/proc/PID/autogroup` reads
    `/autogroup-N nice V`. None where the kernel has none, or gives something else (a sandboxed kernel may give
    an empty file)."""
    try:
        words = Path(f"/proc/{pid}/autogroup").read_text().split()
    except OSError:
        return None
    if len(words) != 3 or words[1] != "nice" or not words[2].lstrip("-").isdigit():
        return None
    return int(words[2])


def lower_priority(pid: int, steps: int) -> list[str]:
    """Lower the CPU priority of process `pid` (an agent, just started in a session of its own) and of what
    it starts `steps` nice steps below this process's own; what was lowered, for the log.

    Two knobs, as the kernel schedules: the process's own nice value (what its children inherit), which is
    what counts where Linux's autogroup scheduling is off; and its autogroup's (`/proc/PID/autogroup`; a new
    session is a new autogroup), which is what counts where it is on, as it is by default on most desktops:
    there the agent's session is weighed against rat's as a whole, whatever the nice value of each process
    inside. Raising a nice value needs no privilege. Each is best effort: a kernel without autogroups, a
    /proc mounted read-only, an agent already gone leave that knob as it was."""
    lowered: list[str] = []
    if steps <= 0:
        return lowered
    try:
        nice = min(19, os.getpriority(os.PRIO_PROCESS, 0) + steps)
        os.setpriority(os.PRIO_PROCESS, pid, nice)
        lowered.append(f"nice {nice}")
    except OSError as error:
        log.info("could not lower the priority of pid %s: %s", pid, error)
    try:
        own = autogroup_nice("self")
        group = min(19, own + steps) if own is not None else steps
        Path(f"/proc/{pid}/autogroup").write_text(str(group))
        lowered.append(f"autogroup nice {group}")
    except OSError as error:
        log.debug("no autogroup priority for pid %s: %s", pid, error)
    return lowered


class Outbox:
    """The queue of messages for an agent and its back-pressure, the same for a local agent's pipe and a remote
    link: a sender only enqueues (nothing, a key's handler above all, waits on the agent), and a queue over
    `max_queued_bytes` refuses new messages and says once that the agent stopped taking them."""

    def _init_outbox(self) -> None:
        # Bytes handed to write_line and not yet taken by the agent.
        self.queued_bytes = 0
        self.max_queued_bytes = MAX_QUEUED_BYTES
        self.max_line_bytes = MAX_LINE_BYTES
        self.write_stall_seconds = WRITE_STALL_SECONDS
        # Told (once per episode) that the agent stopped reading: (seconds waiting, bytes queued).
        self.on_stalled: Callable[[float, int], None] | None = None
        # Told of each line skipped for its size (bytes).
        self.on_oversized: Callable[[int], None] | None = None
        self.stalled = False

    def _not_reading(self) -> str:
        """Who stopped taking our messages, for the user and the log."""
        return "the agent is not reading its input"

    @property
    def backed_up(self) -> bool:
        """Whether the queue for the agent is full: it stopped reading (new messages would be refused)."""
        return self.queued_bytes >= self.max_queued_bytes

    def refuse_if_backed_up(self, size: int) -> None:
        """Raise WriteBackedUp when a message of `size` bytes would not fit in the queue (and say so once)."""
        if self.queued_bytes and self.queued_bytes + size > self.max_queued_bytes:
            self._report_stall(None)
            raise WriteBackedUp(f"{self._not_reading()} ({self.queued_bytes // 1024} KiB waiting)")

    def _report_stall(self, waited: float | None) -> None:
        if self.stalled:
            return
        self.stalled = True
        log.warning("%s: %d bytes waiting", self._not_reading(), self.queued_bytes)
        if self.on_stalled is not None:
            try:
                self.on_stalled(waited or self.write_stall_seconds, self.queued_bytes)
            except Exception:
                log.exception("stall listener failed")


class AgentProcess(Outbox):
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
        nice: int = 0,
    ) -> None:
        if not argv:
            raise AgentSpawnError("No agent command given")
        self.argv = list(argv)
        self.cwd = Path(cwd)
        self.extra_env = dict(env or {})
        self.stderr = StderrRing(stderr_limit)
        self.nice = nice  # nice steps below ours for the agent and what it starts (lower_priority)
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        # Messages for the agent, written by its own writer task (`_write_out`): a sender only enqueues and
        # returns, so nothing (a key's handler above all) ever waits on the agent's pipe.
        self._outbox: deque[bytes] = deque()
        self._outbox_ready = asyncio.Event()
        self._writer_task: asyncio.Task[None] | None = None
        self._write_failed = False  # the agent's stdin broke: later messages are refused at once
        self._init_outbox()  # queued_bytes counts ours and the pipe transport's
        self.aside = AsideParser()  # its child starts with the first huge line

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    async def start(self) -> None:
        problem = prespawn.why_not(self.argv, self.cwd)
        if problem is not None:
            raise AgentSpawnError(problem)
        program = self.argv[0]
        early = prespawn.take(self.argv, self.cwd, self.extra_env)  # the agent `rat` started first, if this one
        try:
            self._proc = await _Adopted.create(early) if early is not None else await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(self.cwd),
                env=prespawn.environment(self.extra_env),
                start_new_session=True,
            )
        except OSError as error:
            raise AgentSpawnError(f"Cannot start agent {program!r}: {error.strerror or error}") from error
        if early is not None:
            log.info("agent adopted: started before the app was imported")
        LIVE_GROUPS.add(self._proc.pid)  # start_new_session: its pid is its group id
        lowered = lower_priority(self._proc.pid, self.nice)
        self._stderr_task = asyncio.create_task(self._drain_stderr(), name="agent-stderr")
        log.info("agent started pid=%s argv=%s cwd=%s%s", self._proc.pid, self.argv, self.cwd,
                 f" ({', '.join(lowered)})" if lowered else "")

    async def _drain_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        while True:
            data = await self._proc.stderr.read(READ_CHUNK)
            if not data:
                return
            self.stderr.add(data)
            if log.isEnabledFor(logging.DEBUG):
                for line in data.decode("utf-8", "replace").splitlines():
                    log.debug("agent stderr: %s", clean(line[:2000]))

    def _not_reading(self) -> str:
        return f"agent pid={self.pid} is not reading its input"

    def send_line(self, line: bytes) -> None:
        """Queue one framed message for the agent and return at once (the writer task writes it); raises
        ConnectionError when the agent's stdin is gone, and WriteBackedUp (a ConnectionError) when the agent
        stopped reading and the queue is full."""
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdin.is_closing() or self._write_failed:
            raise ConnectionError("agent stdin is closed")
        size = len(line) + 1
        self.refuse_if_backed_up(size)
        self.queued_bytes += size
        self._outbox.append(line + b"\n")
        self._outbox_ready.set()
        if self._writer_task is None:
            self._writer_task = asyncio.get_running_loop().create_task(self._write_out(proc.stdin),
                                                                       name="agent-writer")

    async def write_line(self, line: bytes) -> None:
        """send_line for callers that await: it never waits on the agent either."""
        self.send_line(line)

    async def _write_out(self, stdin: asyncio.StreamWriter) -> None:
        """The writer task: hands the queued messages to the pipe in order, waiting for the agent to take them."""
        outbox = self._outbox
        try:
            while True:
                if not outbox:
                    self._outbox_ready.clear()
                    await self._outbox_ready.wait()
                    continue
                size = 0
                while outbox:  # everything queued so far in one go, then one wait for the agent
                    data = outbox.popleft()
                    stdin.write(data)
                    size += len(data)
                try:
                    await self._drain(stdin)
                finally:
                    self.queued_bytes -= size
        except (BrokenPipeError, ConnectionResetError) as error:
            log.info("agent pid=%s closed its input: %s", self.pid, error)
        finally:
            self._write_failed = True
            self.queued_bytes = 0
            outbox.clear()

    async def flushed(self, timeout: float) -> bool:
        """Wait up to `timeout` for the agent to take everything queued for it; whether it did."""
        deadline = time.monotonic() + timeout
        while self.queued_bytes and not self._write_failed and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return not self.queued_bytes

    async def _drain(self, stdin: asyncio.StreamWriter) -> None:
        """drain(), noticing when the agent has not taken our bytes for `write_stall_seconds`."""
        drain = asyncio.ensure_future(stdin.drain())
        started = time.monotonic()
        try:
            done, _ = await asyncio.wait({drain}, timeout=self.write_stall_seconds)
            if not done:
                self._report_stall(time.monotonic() - started)
                await drain
            else:
                drain.result()
            self.stalled = False
        finally:
            if not drain.done():
                drain.cancel()

    async def read_lines(self, route: Callable[..., None], before_wait: Callable[[], None] | None = None,
                         on_idle: Callable[[], None] | None = None) -> None:
        """Hand `route` each stdout line (without the newline) until EOF, giving the loop its turn every few ms.

        Reading costs about 0.5 µs a line in a flood (bench: 20,000 chunk lines fed to a stream), against
        1.0 when each line was found and copied out of the buffer on its own and the slice's clock read
        after each; a call per line rather than an async generator saves 0.1 of that.

        `before_wait` runs each time before the loop may run something else (a read, a yield): what
        the lines routed so far must have done by then (be journaled) is done there. A line of HUGE_LINE
        bytes or more is parsed in a child process (`aside`), and handed to `route` with its value (or
        NOT_PARSED). `on_idle` runs
        when every line the agent has written so far was handed out and the next read would wait: the
        end of a burst (what paces its drawing during a flood can draw it now).
        """
        assert self._proc and self._proc.stdout
        stdout = self._proc.stdout
        # The stream's pipe (asyncio keeps it private), paused while a key is on its way (pass_turn).
        pipe = getattr(stdout, "_transport", None)
        pipe = pipe if hasattr(pipe, "pause_reading") and hasattr(pipe, "resume_reading") else None
        buffer = bytearray()  # the line begun and not ended yet
        skipping, skipped = False, 0  # inside a line longer than max_line_bytes, dropped as it comes
        routed = False  # lines handed out since the last yield (then `before_wait` has work to do)
        fresh = False  # lines handed out since the last `on_idle`
        while True:
            if before_wait is not None:
                before_wait()
            if fresh and on_idle is not None and await _drained(stdout):
                fresh = False
                on_idle()
            routed = False
            data = await stdout.read(READ_CHUNK)
            if not data:
                if buffer.strip():
                    route(bytes(buffer))
                return
            if skipping:
                end = data.find(b"\n")
                if end < 0:
                    skipped += len(data)
                    continue
                self._oversized(skipped + end)
                data, skipping, skipped = data[end + 1 :], False, 0
            # The lines this read ends, split in one go.
            end = data.rfind(b"\n")
            if end < 0:
                buffer += data
                whole = None
            elif buffer:
                buffer += data[:end]
                whole = bytes(buffer)
                buffer[:] = data[end + 1 :]
            else:
                whole = data[:end]
                buffer += data[end + 1 :]
            if whole is not None:
                count = 0
                for line in whole.split(b"\n"):
                    if len(line) >= HUGE_LINE and line.strip():
                        if routed and before_wait is not None:
                            before_wait()  # the loop runs on while the line is parsed aside
                        routed = fresh = True
                        route(line, await self.aside.parse(line))
                    elif line.strip():
                        routed = fresh = True
                        route(line)
                    # Whether to give the loop its turn: at once for a key on its way; for the slice, after
                    # every few lines or a long one (a megabyte's line may take milliseconds to route).
                    # Checked here first, as a coroutine per line cost more than the check, in a flood.
                    count += 1
                    if (priority.input_wait() or (((count & (TURN_CHECK_LINES - 1)) == 0 or len(line) > LONG_LINE)
                                                  and turn_used(time.monotonic()))) \
                            and await pass_turn(before_wait if routed else None, pipe):
                        routed = False
            if len(buffer) > self.max_line_bytes:
                skipping, skipped = True, len(buffer)
                buffer.clear()
            if await pass_turn(before_wait if routed else None, pipe):
                routed = False

    def _oversized(self, size: int) -> None:
        log.warning("skipped a line of %d bytes from the agent (limit %d)", size, self.max_line_bytes)
        if self.on_oversized is not None:
            try:
                self.on_oversized(size)
            except Exception:
                log.exception("oversized-line listener failed")

    async def wait(self) -> int:
        assert self._proc
        code = await self._proc.wait()
        LIVE_GROUPS.discard(self._proc.pid)
        if self._stderr_task:
            try:
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                pass
        return code

    async def close(self, grace: float = 2.0) -> int | None:
        """Stop the agent: close stdin, wait, then SIGTERM, then SIGKILL (whole group), `grace` each.

        Bytes still queued for an agent that stopped reading are dropped (the pipe is aborted, not
        flushed), so a writer waiting on it cannot hold the shutdown up.
        """
        proc = self._proc
        if proc is None:
            return None
        await self.aside.close()
        if self.queued_bytes and not self.stalled and proc.returncode is None:
            await self.flushed(min(grace, 0.2))  # the last messages of an agent that reads (session/close)
        writer = self._writer_task
        if writer is not None and not writer.done():
            writer.cancel()
        if proc.stdin is not None and not proc.stdin.is_closing():
            if self.queued_bytes or proc.returncode is not None:
                proc.stdin.transport.abort()
            else:
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
        if proc.returncode is not None:
            # The leader is gone; anything it left in its group goes too.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            LIVE_GROUPS.discard(proc.pid)
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
