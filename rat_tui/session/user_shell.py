"""Provides UserShell: the user's own persistent shell of one tab, for `!command` (no Textual).

One shell process per tab (the user's `$SHELL` when it speaks POSIX sh, else /bin/sh), started on the
first command in the session's directory and kept, so `cd`, `export` and shell variables persist from one
command to the next. It is the user's alone: nothing the agent sends reaches it (no ACP method names it),
and what it printed goes to the agent only when the user attaches a card (session/shell_context.py).

How a command runs, and why this way:

- The shell reads the *path* of a file holding the command from a pipe on its stdin, and sources it
  (`command . FILE`: `command` keeps a syntax error from ending a POSIX shell). The command's text never
  crosses a line-based channel, so any character, quote or newline in it is safe.
- The command's stdout and stderr are a pseudo-terminal (programs keep their colours and line buffering);
  its stdin is /dev/null, so a program that reads input ends at once instead of waiting on a card nobody
  can type into.
- Its end and exit code come back on a pipe of their own (the shell's stderr), never in the output:
  output that prints anything at all, sentinel look-alikes included, cannot fake or hide an end.
- Interrupt: SIGINT to the processes the command started (the shell's process group minus the shell, so
  the shell and its state survive); a second interrupt SIGKILLs them, and kills the shell too when the
  command is the shell's own (a builtin loop), after which the next command starts a new shell in the
  last directory.
- A program that switches to the terminal's alternate screen (an editor, `less`, `top`) is stopped with
  a message: a card shows lines, not a screen.
- Closing the tab or quitting kills the shell's whole session and process tree (`terminals.kill_tree`);
  its group is in `transport.LIVE_GROUPS` for a SIGHUP/SIGTERM of rat itself.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import errno
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import priority
from ..protocol import terminals
from ..protocol.transport import LIVE_GROUPS

log = logging.getLogger("rat.shell")

# Shells whose syntax the loop below (and a user's command line) is written in.
POSIX_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ksh93", "ash", "yash", "posh"}
FALLBACK_SHELL = "/bin/sh"
STATUS_MARK = "\x1erat "
# Read by the shell from its stdin, one command file path a line; the status line goes to its stderr.
LOOP = ("while IFS= read -r __rat_file; do "
        "command . \"$__rat_file\" </dev/null 2>&1; __rat_status=$?; "
        "printf '\\036rat %s %s\\n' \"$__rat_status\" \"$PWD\" >&2; done")
# Escapes that switch to the alternate screen (xterm's 1049 and 1047, the older 47).
ALTERNATE_SCREEN = (b"\x1b[?1049h", b"\x1b[?1047h", b"\x1b[?47h")
ALT_TAIL = max(len(seq) for seq in ALTERNATE_SCREEN) - 1
# After the end arrives, what the command wrote is already in the PTY; this much more is waited for at most.
DRAIN_SECONDS = 0.05
# Output read per wake-up of the reader: less than the agent terminals' budget, so that a flood leaves keys
# and frames more turns of the loop.
READ_BUDGET = 256 * 1024
INTERRUPT_WAIT = 1.0
STOP_POLL = 0.05  # how often a stopped full-screen command's processes are killed again until it ends  # after a SIGKILL, how long the shell has to report the end before it is killed too


@dataclass
class ShellResult:
    """How one command ended."""

    exit_code: int | None
    cwd: str
    bytes_out: int
    interrupted: bool = False
    killed: bool = False
    stopped_note: str | None = None  # why rat stopped it (a full-screen program)
    shell_exited: bool = False  # the command ended the shell itself (`exit`, or it was killed)
    duration: float = 0.0


def unavailable_reason() -> str | None:
    """Why `!` cannot run here, or None: it needs a POSIX system with pseudo-terminals."""
    if os.name != "posix":
        return "`!` runs commands in your own shell, which needs a POSIX system (no pseudo-terminals here)."
    try:
        master, slave = os.openpty()
    except OSError as error:
        return f"`!` needs a pseudo-terminal and none can be opened here ({error.strerror or error})."
    os.close(master)
    os.close(slave)
    return None


def pick_shell(environ: dict[str, str] | None = None) -> tuple[str, str | None]:
    """The shell to run and, when the user's $SHELL is not a POSIX one, a note saying what runs instead."""
    environ = dict(os.environ) if environ is None else environ
    wanted = environ.get("SHELL") or ""
    if wanted and os.path.basename(wanted) in POSIX_SHELLS and os.access(wanted, os.X_OK):
        return wanted, None
    if wanted:
        return FALLBACK_SHELL, (f"Your shell {wanted} does not speak POSIX sh: `!` commands run in "
                                f"{FALLBACK_SHELL} instead.")
    return FALLBACK_SHELL, None


class UserShell:
    """One persistent shell; one command at a time. Output streams to `on_output(text)` as it comes."""

    def __init__(self, cwd: Path, on_output: Callable[[str], None] | None = None,
                 environ: dict[str, str] | None = None) -> None:
        self.cwd = str(cwd)
        self.on_output = on_output
        self.shell, self.note = pick_shell(environ)
        self._environ = environ
        self.mark = f"shell_{uuid.uuid4().hex[:16]}"  # in its environment: kill_tree finds what left its session
        self._process: subprocess.Popen[bytes] | None = None
        self._master = -1
        self._status = -1
        self._dir: str | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._status_buffer = b""
        self._alt_tail = b""
        self._ended: asyncio.Future[tuple[int | None, str]] | None = None
        self._running = False
        self._interrupts = 0
        self._bytes = 0
        self._stopped_note: str | None = None
        self._exited: asyncio.Event | None = None
        self._closed = False
        self._held = False  # the PTY's reader is off while a key is on its way (_hold_for_input)

    @property
    def running(self) -> bool:
        return self._running

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and self._process.poll() is None else None

    # -- process ---------------------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ if self._environ is None else self._environ)
        # Pagers and editors would wait on a screen nobody sees: the output goes to the card instead.
        env["PAGER"] = env["GIT_PAGER"] = env["MANPAGER"] = "cat"
        env.setdefault("TERM", "xterm-256color")
        env["RAT_SHELL"] = "1"
        env[terminals.MARK_VARIABLE] = self.mark
        return env

    async def _start(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="rat-shell-")
        cwd = self.cwd if os.path.isdir(self.cwd) else os.path.expanduser("~")
        master, slave = terminals.open_pty()
        status_read, status_write = os.pipe()
        try:
            self._process = await asyncio.to_thread(
                subprocess.Popen, [self.shell, "-c", LOOP], stdin=subprocess.PIPE, stdout=slave,
                stderr=status_write, cwd=cwd, env=self._environment(), start_new_session=True, close_fds=True)
        except BaseException:
            os.close(master)
            os.close(status_read)
            raise
        finally:
            os.close(slave)
            os.close(status_write)
        LIVE_GROUPS.add(self._process.pid)
        self._master, self._status = master, status_read
        os.set_blocking(master, False)
        os.set_blocking(status_read, False)
        loop = asyncio.get_running_loop()
        loop.add_reader(master, self._on_output)
        loop.add_reader(status_read, self._on_status)
        self._exited = asyncio.Event()
        asyncio.create_task(self._watch(self._process, self._exited), name="user shell")
        log.info("shell %s started (pid %d) in %s", self.shell, self._process.pid, cwd)

    async def _watch(self, process: subprocess.Popen[bytes], exited: asyncio.Event) -> None:
        # On a pidfd where Linux has one: a thread waiting per tab's shell would take the loop's default executor.
        code = await terminals.Child(process).wait()
        exited.set()
        log.info("shell %d exited with %s", process.pid, code)
        if process is self._process:
            self._on_output(force=True)  # what it printed last
            if self._ended is not None and not self._ended.done():
                self._ended.set_result((code if code >= 0 else 128 - code, ""))
            self._forget()

    def _forget(self) -> None:
        """The shell is gone: stop reading it and close our ends (the next command starts another)."""
        loop = asyncio.get_running_loop()
        for fd in (self._master, self._status):
            if fd >= 0:
                with contextlib.suppress(Exception):
                    loop.remove_reader(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._status = -1
        if self._process is not None:
            LIVE_GROUPS.discard(self._process.pid)
        self._process = None

    # -- reading ---------------------------------------------------------------------------------

    def _on_output(self, force: bool = False) -> None:
        if not force and self._master >= 0 and self._hold_for_input():
            return
        received = bytearray()
        while self._master >= 0 and len(received) < READ_BUDGET:
            try:
                data = os.read(self._master, terminals.READ_CHUNK)
            except BlockingIOError:
                break
            except OSError as error:
                if error.errno != errno.EIO:
                    log.warning("shell output: %s", error)
                break
            if not data:
                break
            received += data
        if not received:
            return
        if not self._running:
            return  # a background job's output after its command ended: not part of any card
        self._bytes += len(received)
        self._check_alternate_screen(bytes(received))
        text = self._decoder.decode(bytes(received))
        if text and self.on_output is not None:
            try:
                self.on_output(text)
            except Exception:
                log.exception("shell output observer failed")

    def _hold_for_input(self) -> bool:
        """While a key the user typed is on its way to the screen, the output waits (input first,
        `priority`): the command only blocks on a full PTY meanwhile, and the key is drawn first."""
        wait = priority.input_wait()
        if not wait or self._held:
            return bool(wait) and self._held
        self._held = True
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._master)
        master = self._master

        def resume() -> None:
            self._held = False
            if self._master == master:
                loop.add_reader(master, self._on_output)

        priority.call_after_input(loop, wait, resume)
        return True

    def _check_alternate_screen(self, data: bytes) -> None:
        window = self._alt_tail + data
        self._alt_tail = window[-ALT_TAIL:]
        if self._stopped_note is None and any(seq in window for seq in ALTERNATE_SCREEN):
            self._stopped_note = ("This program wants the whole screen (an editor, a pager, `top`…), which a "
                                  "shell card cannot show: it was stopped. Run it in a terminal of your own.")
            log.info("shell command switched to the alternate screen: stopped")
            self._keep_stopping(self._ended)

    def _keep_stopping(self, ended: asyncio.Future | None) -> None:
        """SIGKILL what the command runs until it ends: the escape may come from the shell itself (`printf`)
        before the program it starts next."""
        if ended is None or ended.done() or ended is not self._ended:
            return
        self._signal_children(signal.SIGKILL)
        asyncio.get_running_loop().call_later(STOP_POLL, self._keep_stopping, ended)

    def _on_status(self) -> None:
        while self._status >= 0:
            try:
                data = os.read(self._status, 4096)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                with contextlib.suppress(Exception):
                    asyncio.get_running_loop().remove_reader(self._status)
                break
            self._status_buffer += data
        while b"\n" in self._status_buffer:
            line, _, self._status_buffer = self._status_buffer.partition(b"\n")
            text = line.decode("utf-8", "replace")
            if not text.startswith(STATUS_MARK):
                log.info("shell said: %s", text)
                continue
            code, _, cwd = text[len(STATUS_MARK):].partition(" ")
            if self._ended is not None and not self._ended.done():
                self._ended.set_result((int(code) if code.isdigit() else None, cwd))

    # -- commands --------------------------------------------------------------------------------

    async def run(self, command: str) -> ShellResult:
        """Run `command` to its end (or interruption) and say how it ended."""
        if self._running:
            raise RuntimeError("a command is already running in this shell")
        if self._closed:
            raise RuntimeError("the shell is closed")
        self._running = True
        self._interrupts = 0
        self._bytes = 0
        self._stopped_note = None
        self._alt_tail = b""
        self._decoder.reset()
        started = time.monotonic()
        try:
            if self._process is None or self._process.poll() is not None:
                self._forget_if_dead()
                await self._start()
            assert self._process is not None and self._process.stdin is not None and self._dir is not None
            path = os.path.join(self._dir, f"cmd-{uuid.uuid4().hex[:8]}")
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as file:
                file.write(command + "\n")
            loop = asyncio.get_running_loop()
            self._ended = loop.create_future()
            try:
                self._process.stdin.write(path.encode("utf-8", "surrogateescape") + b"\n")
                self._process.stdin.flush()
            except (BrokenPipeError, OSError):
                self._ended.set_result((None, ""))
            code, cwd = await self._ended
            shell_exited = self._process is None
            await asyncio.sleep(0)
            self._drain(started)
            with contextlib.suppress(OSError):
                os.unlink(path)
            if cwd:
                self.cwd = cwd
            tail = self._decoder.decode(b"", final=True)
            if tail and self.on_output is not None:
                self.on_output(tail)
            return ShellResult(code, self.cwd, self._bytes, interrupted=self._interrupts > 0,
                               killed=self._interrupts > 1, stopped_note=self._stopped_note,
                               shell_exited=shell_exited, duration=time.monotonic() - started)
        finally:
            self._running = False
            self._ended = None

    def _drain(self, started: float) -> None:
        """The output the command wrote before its end, still in the PTY (read until none comes)."""
        deadline = time.monotonic() + DRAIN_SECONDS
        while self._master >= 0 and time.monotonic() < deadline:
            before = self._bytes
            self._on_output(force=True)
            if self._bytes == before:
                break

    def _forget_if_dead(self) -> None:
        if self._process is not None:
            self._forget()

    def interrupt(self) -> str | None:
        """Esc: SIGINT to what the command started; a second time SIGKILL (and the shell itself when the command
        is its own). Returns what was done ("interrupt", "kill"), None when nothing runs."""
        if not self._running or self._process is None:
            return None
        self._interrupts += 1
        if self._interrupts == 1:
            if not self._signal_children(signal.SIGINT):
                # Nothing but the shell runs (a builtin loop): interrupting it ends the shell, and its state.
                self._signal_shell(signal.SIGINT)
            return "interrupt"
        if not self._signal_children(signal.SIGKILL):
            self._signal_shell(signal.SIGKILL)
        else:
            asyncio.get_running_loop().call_later(INTERRUPT_WAIT, self._kill_if_still, self._ended)
        return "kill"

    def _kill_if_still(self, ended: asyncio.Future | None) -> None:
        if ended is not None and not ended.done() and ended is self._ended:
            self._signal_shell(signal.SIGKILL)

    def _signal_shell(self, sig: int) -> None:
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, sig)

    def _signal_children(self, sig: int) -> int:
        """`sig` to every process of the shell's group but the shell; how many were signalled."""
        if self._process is None:
            return 0
        shell = self._process.pid
        count = 0
        for pid in _group_members(shell):
            if pid != shell:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
                    count += 1
        return count

    async def close(self) -> None:
        """The tab closed or rat quits: the shell and everything it started are killed, its files removed."""
        self._closed = True
        process = self._process
        if process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await asyncio.to_thread(terminals.kill_tree, process.pid, self.mark)
            if self._exited is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._exited.wait(), terminals.KILL_WAIT_SECONDS)
            if self._process is process:
                self._forget()
        if self._ended is not None and not self._ended.done():
            self._ended.set_result((None, ""))
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def _group_members(pgid: int) -> list[int]:
    """The processes of process group `pgid` (from /proc on Linux; elsewhere the group leader only)."""
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return [pgid]
    members = []
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            members.append(int(name))
    return members
