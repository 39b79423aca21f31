"""Provides ShellRuns: a tab's `!commands` — its UserShell, their cards in the store, their journal records.

The shell's output reaches the store at most every OUTPUT_EVERY (and only its last TERMINAL_DISPLAY_LIMIT
characters per batch): a command printing 50 MB costs the screen a bounded amount per frame, and keys typed
meanwhile keep their share of the loop. A finished command is journaled as one `_rat/shell` record
(state/shell.py) as it starts and again as it ends, written to the session's recorders only — never to the
agent's connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..history.records import OUT
from ..state import reducer, shell
from ..state.models import TERMINAL_DISPLAY_LIMIT
from ..state.store import SessionStore
from .user_shell import UserShell, unavailable_reason

log = logging.getLogger("rat.shell")

OUTPUT_EVERY = 0.05  # seconds between two batches of a command's output into the store
MAX_QUEUED = 20  # commands typed ahead while one runs


class ShellRuns:
    """One per session (tab); the shell starts with the first command."""

    def __init__(self, store: SessionStore, cwd: Path, recorders: Callable[[], Sequence[Any]] = tuple) -> None:
        self.store = store
        self.cwd = Path(cwd)
        self.recorders = recorders
        self.shell: UserShell | None = None
        # Why `!` cannot run in this tab (set by the app: `rat serve`, a remote agent), else None.
        self.refusal: str | None = None
        self.count = 0
        self.task: asyncio.Task[None] | None = None
        self._pending: list[str] = []
        self._pending_chars = 0
        self._flush_handle: asyncio.TimerHandle | None = None
        self._number = 0
        self._noted = False
        self._closed = False
        self._queue: list[tuple[int, str]] = []  # (number, command) typed while one runs

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    @property
    def shell_cwd(self) -> Path:
        """Where the shell is now (after its `cd`s): where Tab completes paths."""
        return Path(self.shell.cwd) if self.shell is not None else self.cwd

    def why_not(self) -> str | None:
        """Why no command can run in this tab, or None."""
        if self.refusal is not None:
            return self.refusal
        return unavailable_reason()

    def run(self, command: str) -> str | None:
        """Start `command` in the background, or queue it behind the one running (typed ahead, it runs next,
        as in a terminal); returns why it cannot run (said nowhere else), or None."""
        command = command.strip()
        if not command:
            return "Type a command after `!` (for example `!git status`)."
        why = self.why_not()
        if why is not None:
            return why
        if len(self._queue) >= MAX_QUEUED:
            return f"{MAX_QUEUED} shell commands are waiting already: let them run (Esc stops them) first."
        if self.shell is None:
            self.shell = UserShell(self.cwd, on_output=self._on_output)
        if self.shell.note and not self._noted:
            self._noted = True
            self.store.dispatch(reducer.add_notice, self.shell.note, "info")
        self.count += 1
        queued = self.running or bool(self._queue)
        self.store.dispatch(shell.start, self.count, command, _short(self.shell.cwd), queued=queued)
        if queued:
            self._queue.append((self.count, command))
        else:
            self._launch(self.count, command)
        return None

    def _launch(self, number: int, command: str) -> None:
        self._number = number
        self._journal(number, running=True)  # the command is journaled before it shows any output
        self.task = asyncio.get_running_loop().create_task(self._run(number, command), name=f"shell !{number}")
        self.task.add_done_callback(self._next)

    def _next(self, _task: asyncio.Task[None]) -> None:
        if self._queue and not self._closed and self.shell is not None:
            number, command = self._queue.pop(0)
            self.store.dispatch(shell.begin, number, _short(self.shell.cwd))
            self._launch(number, command)

    def _drop_queue(self, why: str) -> None:
        for number, _ in self._queue:
            self.store.dispatch(shell.drop, number, why)
        self._queue.clear()

    async def _run(self, number: int, command: str) -> None:
        assert self.shell is not None
        try:
            result = await self.shell.run(command)
        except Exception as error:  # the shell cannot start (no /bin/sh, no PTY left): said on the card
            log.exception("shell command failed to run")
            self._flush()
            self.store.dispatch(shell.finish, number, None, 0.0, note=f"The shell could not run it: {error}")
            self._journal(number)
            return
        self._flush()
        note = result.stopped_note
        if result.shell_exited and note is None:
            note = ("The shell exited; the next `!` command starts a new one (in the same directory, without "
                    "the variables set before).")
        self.store.dispatch(shell.finish, number, result.exit_code, result.duration, note=note,
                            interrupted=result.interrupted, total_bytes=result.bytes_out)
        self._journal(number)

    def _journal(self, number: int, running: bool = False) -> None:
        entry = shell.find(self.store.state, number)
        if entry is None:
            return
        message = shell.record(self.store.state, entry, running=running)
        size = len(json.dumps(message, ensure_ascii=False))
        for recorder in self.recorders():
            try:
                recorder.record(OUT, message, size)
            except Exception:
                log.exception("journaling a shell command failed")

    def _on_output(self, text: str) -> None:
        self._pending.append(text)
        self._pending_chars += len(text)
        if self._pending_chars > 4 * TERMINAL_DISPLAY_LIMIT:
            self._trim()
        if self._flush_handle is None:
            self._flush_handle = asyncio.get_running_loop().call_later(OUTPUT_EVERY, self._flush)

    def _trim(self) -> None:
        """Only the end of a batch can be shown: keep its last TERMINAL_DISPLAY_LIMIT characters, from a line start."""
        text = "".join(self._pending)[-TERMINAL_DISPLAY_LIMIT:]
        newline = text.find("\n")
        if 0 <= newline < len(text) - 1:
            text = text[newline + 1:]
        self._pending, self._pending_chars = [text], len(text)

    def _flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._pending:
            return
        if self._pending_chars > TERMINAL_DISPLAY_LIMIT:
            self._trim()
        text = "".join(self._pending)
        self._pending, self._pending_chars = [], 0
        self.store.dispatch(shell.output, self._number, text)

    def interrupt(self) -> str | None:
        """Esc while a command runs: "interrupt" the first time, "kill" the next; None when none runs."""
        if not self.running or self.shell is None:
            return None
        self._drop_queue(f"Not run: !{self._number} before it was interrupted.")
        return self.shell.interrupt()

    async def close(self) -> None:
        """The tab closes or rat quits: the shell and all it started are killed."""
        self._closed = True
        self._drop_queue("Not run: the tab was closed.")
        if self.shell is not None:
            await self.shell.close()
        if self.task is not None and not self.task.done():  # it ends as the shell is killed: its card says how
            done, _ = await asyncio.wait({self.task}, timeout=1.0)
            if not done:
                self.task.cancel()


def _short(path: str) -> str:
    """The directory as the user reads it: `~/…` under the home directory."""
    home = str(Path.home())
    return "~" + path[len(home):] if path == home or path.startswith(home + "/") else path
