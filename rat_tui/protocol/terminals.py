"""Provides TerminalManager: the client side of ACP's terminal/* methods, running real processes."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import errno
import fcntl
import logging
import os
import pty
import signal
import struct
import subprocess
import termios
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .fs import ACCESS_DENIED
from .router import INTERNAL_ERROR, INVALID_PARAMS, RequestHandler, RpcError
from .transport import LIVE_GROUPS

log = logging.getLogger("rat.terminal")

READ_CHUNK = 64 * 1024
# Per reader wake-up, so a flood of output (`yes`) cannot hold the event loop.
READ_BUDGET = 1024 * 1024
# Without an outputByteLimit a runaway command would grow memory without bound; keep this much.
DEFAULT_BYTE_LIMIT = 16 * 1024 * 1024
# After the command exits, how long to wait for the rest of its output (a background job it
# started may keep the terminal open for ever, so this is bounded).
DRAIN_GRACE_SECONDS = 0.25
KILL_WAIT_SECONDS = 3.0
PTY_COLUMNS, PTY_ROWS = 120, 40
# A PTY has no end of input; programs that read stdin would wait for ever. An EOF (^D) queued on
# an empty line makes the first read see end-of-file, as with /dev/null.
PTY_EOF = b"\x04"
# Terminals one session may hold at once (created and not yet released); past it terminal/create is refused.
MAX_TERMINALS = 64
TERMINAL_LIMIT = -32000  # JSON-RPC's implementation-defined server error range, as fs.ACCESS_DENIED
# Set in every command's environment: how kill finds a process that left the command's session and process
# group (setsid, a daemon's double fork) but kept the environment it was started with.
MARK_VARIABLE = "RAT_TERMINAL_ID"


def _unknown(terminal_id: Any) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Unknown terminal: {terminal_id}")


class _Terminal:
    """One command: its process, the retained output and its exit status."""

    def __init__(self, terminal_id: str, process: Child, fd: int, byte_limit: int) -> None:
        self.id = terminal_id
        self.process = process
        self.fd = fd  # PTY master or pipe read end, non-blocking
        self.byte_limit = byte_limit
        self.buffer = bytearray()
        self.truncated = False
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.eof = asyncio.Event()
        self.exited = asyncio.Event()  # set once the status is final and the output drained
        self.exit_code: int | None = None
        self.signal: str | None = None
        self.watcher: asyncio.Task[None] | None = None

    def keep(self, data: bytes) -> None:
        """Append output, dropping from the front to stay within the limit, on a character boundary."""
        self.buffer += data
        excess = len(self.buffer) - self.byte_limit
        if excess > 0:
            while excess < len(self.buffer) and self.buffer[excess] & 0xC0 == 0x80:
                excess += 1  # never start inside a multi-byte character
            del self.buffer[:excess]
            self.truncated = True

    def text(self) -> str:
        data = self.buffer if self.exited.is_set() else self.buffer[: _complete_length(self.buffer)]
        return bytes(data).decode("utf-8", "replace")

    def exit_status(self) -> dict[str, Any]:
        return {"exitCode": self.exit_code, "signal": self.signal}


def _complete_length(data: bytearray) -> int:
    """Length of `data` without a UTF-8 character still being written at its end."""
    size = len(data)
    for back in range(1, min(4, size) + 1):
        byte = data[size - back]
        if byte & 0xC0 == 0x80:
            continue  # continuation byte: look further back for the lead
        if byte < 0xC0:
            return size
        needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
        return size - back if back < needed else size
    return size


class TerminalManager:
    """Runs the commands an agent asks for, one terminal id each, for one session.

    Commands run in a pseudo-terminal when one can be opened (so tools keep their colours and
    line buffering; the ANSI codes are kept for the UI), else on pipes. The PTY translates no
    "\\n" to "\\r\\n" and echoes nothing, so the output reads as it would through a pipe. Each command
    gets its own session and process group, so kill/release reach the children a shell line starts.
    Output is collected as it arrives (and passed to `on_output` for live display); `on_exit` hears
    the exit. `close_all` ends every command when the session ends.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        on_output: Callable[[str, str], None] | None = None,
        on_exit: Callable[[str, int | None, str | None], None] | None = None,
    ) -> None:
        self.cwd = Path(cwd)
        self.on_output = on_output
        self.on_exit = on_exit
        self._terminals: dict[str, _Terminal] = {}
        self._starting = 0  # creations under way (counted against MAX_TERMINALS)

    def handlers(self) -> dict[str, RequestHandler]:
        return {
            "terminal/create": self.create,
            "terminal/output": self.output,
            "terminal/wait_for_exit": self.wait_for_exit,
            "terminal/kill": self.kill,
            "terminal/release": self.release,
        }

    # -- requests -----------------------------------------------------------------------------

    async def create(self, params: dict[str, Any]) -> dict[str, Any]:
        command = params.get("command")
        if not isinstance(command, str) or not command.strip():
            raise RpcError(INVALID_PARAMS, "command must be a non-empty string")
        args = [arg for arg in params.get("args") or [] if isinstance(arg, str)]
        # Real agents send a whole shell line ("echo a && ls") with no args: only a shell runs that.
        argv = [command, *args] if args else ["/bin/sh", "-c", command]
        _no_nul("command", command)
        for arg in args:
            _no_nul("args", arg)
        if isinstance(params.get("cwd"), str):
            _no_nul("cwd", params["cwd"])
        cwd = self._cwd(params.get("cwd"))
        limit = params.get("outputByteLimit")
        if limit is None:
            limit = DEFAULT_BYTE_LIMIT
        elif isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise RpcError(INVALID_PARAMS, "outputByteLimit must be a non-negative integer")
        terminal_id = f"term_{uuid.uuid4().hex[:16]}"
        env = _environment(params.get("env"))
        env[MARK_VARIABLE] = terminal_id
        if len(self._terminals) + self._starting >= MAX_TERMINALS:
            raise RpcError(TERMINAL_LIMIT, f"Too many terminals: {MAX_TERMINALS} are open in this session "
                                           "(release one with terminal/release first)")
        self._starting += 1
        try:
            # The fork runs in a worker thread (a big process forks slowly; a thousand of them froze the UI),
            # and the exit is watched without a thread per child (Child).
            process, fd = await asyncio.to_thread(_spawn, argv, cwd, env)
        finally:
            self._starting -= 1
        LIVE_GROUPS.add(process.pid)  # its own session: a SIGHUP handler can stop it (transport.py)
        terminal = _Terminal(terminal_id, process, fd, limit)
        self._terminals[terminal_id] = terminal
        asyncio.get_running_loop().add_reader(fd, self._on_readable, terminal)
        terminal.watcher = asyncio.create_task(self._watch(terminal), name=f"terminal {terminal_id}")
        log.info("terminal %s started: %r in %s", terminal_id, argv, cwd)
        return {"terminalId": terminal_id}

    async def output(self, params: dict[str, Any]) -> dict[str, Any]:
        terminal = self._get(params)
        result: dict[str, Any] = {"output": terminal.text(), "truncated": terminal.truncated}
        if terminal.exited.is_set():
            result["exitStatus"] = terminal.exit_status()
        return result

    async def wait_for_exit(self, params: dict[str, Any]) -> dict[str, Any]:
        terminal = self._get(params)
        # Waiting on an Event (not a shared future): cancelling this request cancels only the wait.
        await terminal.exited.wait()
        return terminal.exit_status()

    async def kill(self, params: dict[str, Any]) -> dict[str, Any]:
        """Kill the command's process group; the terminal stays, its output still readable."""
        await self._kill(self._get(params))
        return {}  # the schema's KillTerminalResponse is an (empty) object

    async def release(self, params: dict[str, Any]) -> dict[str, Any]:
        """Kill the command if it still runs and forget the terminal id."""
        terminal = self._get(params)
        self._terminals.pop(terminal.id, None)
        await self._kill(terminal)
        self._close(terminal)
        return {}

    def running(self, terminal_id: str) -> bool:
        """Whether this session runs `terminal_id` and its command has not exited."""
        terminal = self._terminals.get(terminal_id)
        return terminal is not None and not terminal.exited.is_set()

    def running_ids(self) -> list[str]:
        return [tid for tid, terminal in self._terminals.items() if not terminal.exited.is_set()]

    async def stop(self, terminal_id: str) -> bool:
        """The user stops a command: kill it as `terminal/kill` does (the terminal stays, its output readable,
        and the agent's `terminal/wait_for_exit` returns). False when it is not running here."""
        terminal = self._terminals.get(terminal_id)
        if terminal is None or terminal.exited.is_set():
            return False
        log.info("terminal %s stopped by the user", terminal_id)
        await self._kill(terminal)
        return True

    async def close_all(self) -> None:
        """The session ended: kill every command and forget every terminal."""
        terminals = list(self._terminals.values())
        self._terminals.clear()
        await asyncio.gather(*(self._kill(terminal) for terminal in terminals), return_exceptions=True)
        for terminal in terminals:
            self._close(terminal)

    # -- internals ----------------------------------------------------------------------------

    def _get(self, params: dict[str, Any]) -> _Terminal:
        terminal_id = params.get("terminalId")
        terminal = self._terminals.get(terminal_id) if isinstance(terminal_id, str) else None
        if terminal is None:
            raise _unknown(terminal_id)
        return terminal

    def _cwd(self, raw: Any) -> Path:
        if raw is None:
            cwd = self.cwd
        elif not isinstance(raw, str) or not os.path.isabs(raw):
            raise RpcError(INVALID_PARAMS, f"cwd must be an absolute path: {raw}")
        else:
            cwd = Path(raw)
        if not cwd.is_dir():
            raise RpcError(INVALID_PARAMS, f"cwd is not a directory: {cwd}")
        root = os.path.realpath(self.cwd)
        if not Path(os.path.realpath(cwd)).is_relative_to(root):
            raise RpcError(ACCESS_DENIED, f"Access denied: {cwd} is outside the session's directory ({root})")
        return cwd

    def _on_readable(self, terminal: _Terminal) -> int:
        """Read what is there (up to a budget, then yield to the loop) and keep it; returns the bytes read."""
        received = bytearray()
        at_end = False
        while len(received) < READ_BUDGET:
            try:
                data = os.read(terminal.fd, READ_CHUNK)
            except BlockingIOError:
                break
            except OSError as error:
                # EIO: a PTY's slave side was closed by the last process holding it.
                if error.errno != errno.EIO:
                    log.warning("terminal %s: read failed: %s", terminal.id, error)
                at_end = True
                break
            if not data:
                at_end = True
                break
            received += data
        if received:
            terminal.keep(received)
            text = terminal.decoder.decode(bytes(received))
            if text and self.on_output is not None:
                try:
                    self.on_output(terminal.id, text)
                except Exception:
                    log.exception("on_output observer failed for terminal %s", terminal.id)
        if at_end:
            self._stop_reading(terminal)
            terminal.eof.set()
        return len(received)

    def _stop_reading(self, terminal: _Terminal) -> None:
        if terminal.fd >= 0:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(terminal.fd)

    async def _watch(self, terminal: _Terminal) -> None:
        """Record the exit once the process ends and its output has been read."""
        returncode = await terminal.process.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(terminal.eof.wait(), DRAIN_GRACE_SECONDS)
        # Whatever is already buffered (a slow reader under load, or a lingering background job).
        while not terminal.eof.is_set() and terminal.fd >= 0 and self._on_readable(terminal):
            pass
        if returncode < 0:
            terminal.signal = _signal_name(-returncode)
        else:
            terminal.exit_code = returncode
        terminal.exited.set()
        if terminal.eof.is_set():
            LIVE_GROUPS.discard(terminal.process.pid)  # nothing holds its output: the group is gone
        log.info("terminal %s exited: %s", terminal.id, terminal.exit_status())
        if self.on_exit is not None:
            try:
                self.on_exit(terminal.id, terminal.exit_code, terminal.signal)
            except Exception:
                log.exception("on_exit observer failed for terminal %s", terminal.id)

    async def _kill(self, terminal: _Terminal) -> None:
        # After the leader exited, its group may still hold background jobs it started; once the
        # output reached its end nothing holds the terminal and the group id may be gone.
        if not (terminal.exited.is_set() and terminal.eof.is_set()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(terminal.process.pid, signal.SIGKILL)
            LIVE_GROUPS.discard(terminal.process.pid)
        # What left the group (setsid, a daemon) is found by the command's session id, its ancestry and the
        # mark in its environment, and killed too: nothing a command started outlives it.
        await asyncio.to_thread(kill_tree, terminal.process.pid, terminal.id)
        if terminal.watcher is not None and not terminal.exited.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(terminal.exited.wait(), KILL_WAIT_SECONDS)

    def _close(self, terminal: _Terminal) -> None:
        self._stop_reading(terminal)
        if terminal.watcher is not None and not terminal.watcher.done():
            terminal.watcher.cancel()
        if terminal.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(terminal.fd)
            terminal.fd = -1


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


def _environment(raw: Any) -> dict[str, str]:
    """os.environ plus the request's variables, with pagers off: a pager would wait on the PTY."""
    env = dict(os.environ)
    env["PAGER"] = env["GIT_PAGER"] = "cat"
    env.setdefault("TERM", "xterm-256color")
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("value"), str):
            env[item["name"]] = item["value"]
    return env


def open_pty() -> tuple[int, int]:
    """A PTY pair set up for capture: no echo, no LF→CRLF, a fixed size, an EOF queued for stdin."""
    master, slave = pty.openpty()
    try:
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.ONLCR  # oflag
        attrs[3] &= ~(termios.ECHO | termios.ECHONL)  # lflag
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", PTY_ROWS, PTY_COLUMNS, 0, 0))
        os.write(master, PTY_EOF)
    except BaseException:
        os.close(master)
        os.close(slave)
        raise
    return master, slave


def _no_nul(what: str, value: str) -> None:
    if "\0" in value:
        raise RpcError(INVALID_PARAMS, f"{what} contains a NUL byte")


class Child:
    """A command's process (subprocess.Popen, started in a worker thread), its exit awaited on a pidfd
    where Linux has one: no watcher thread per child, as asyncio's own child watcher starts on 3.11."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    async def wait(self) -> int:
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfd (not Linux, an old kernel): a thread waits
            return await asyncio.to_thread(self.popen.wait)
        loop = asyncio.get_running_loop()
        ended = loop.create_future()
        loop.add_reader(pidfd, lambda: ended.done() or ended.set_result(None))
        try:
            await ended
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        return self.popen.wait()


def _spawn(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[Child, int]:
    """Start the command in its own session on a PTY (pipes if none can be had); returns its reader fd.
    Runs in a worker thread. Both ends of the PTY (or pipe) are closed on every failure."""
    for name, value in env.items():
        if "\0" in name or "\0" in value or "=" in name:
            raise RpcError(INVALID_PARAMS, f"env variable {name!r} contains a NUL byte or '='")
    try:
        read_fd, write_fd = open_pty()
        stdin: int = write_fd
    except OSError as error:
        log.info("no PTY (%s); running the command on pipes", error)
        read_fd, write_fd = os.pipe()
        stdin = subprocess.DEVNULL
    try:
        popen = subprocess.Popen(argv, stdin=stdin, stdout=write_fd, stderr=write_fd, cwd=cwd, env=env,
                                 start_new_session=True, close_fds=True)
    except (OSError, ValueError, subprocess.SubprocessError) as error:
        os.close(read_fd)
        detail = error.strerror if isinstance(error, OSError) and error.strerror else error
        code = INVALID_PARAMS if isinstance(error, ValueError) else INTERNAL_ERROR
        raise RpcError(code, f"Cannot start {argv[0]!r}: {detail}") from None
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)  # the child holds its copy; ours would keep the output open for ever
    os.set_blocking(read_fd, False)
    return Child(popen), read_fd


def kill_tree(pid: int, terminal_id: str) -> int:
    """SIGKILL every process (of ours) that belongs to the command `pid` started as terminal `terminal_id`:
    its session (`pid` is the session id: start_new_session), its descendants, and any process whose
    environment carries the terminal's mark (one that called setsid and was orphaned). Reads /proc (Linux);
    elsewhere only the process group is reached. Returns how many were signalled.

    Unprivileged, a cgroup per command would need a delegated cgroup tree, which a desktop session has
    only under systemd and a container rarely: /proc works for any user."""
    try:
        entries = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return 0
    mark = f"{MARK_VARIABLE}={terminal_id}".encode()
    me, uid = os.getpid(), os.getuid()
    parents: dict[int, int] = {}
    chosen: set[int] = set()
    for other in entries:
        if other == me:
            continue
        try:
            with open(f"/proc/{other}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
            if os.stat(f"/proc/{other}").st_uid != uid or fields[0] == b"Z":
                continue
            parents[other] = int(fields[1])
            if int(fields[3]) == pid or int(fields[2]) == pid:  # its session or process group
                chosen.add(other)
                continue
            with open(f"/proc/{other}/environ", "rb") as file:
                if mark in file.read().split(b"\0"):
                    chosen.add(other)
        except (OSError, IndexError, ValueError):
            continue
    changed = True
    while changed:  # descendants of anything chosen
        changed = False
        for other, parent in parents.items():
            if parent in chosen and other not in chosen:
                chosen.add(other)
                changed = True
    killed = 0
    for other in chosen:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(other, signal.SIGKILL)
            killed += 1
    if killed:
        log.info("terminal %s: %d process(es) of its tree killed", terminal_id, killed)
    return killed
