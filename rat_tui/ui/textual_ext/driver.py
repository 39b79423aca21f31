"""The input-first driver: the terminal's driver wrapped so that `rat_tui.priority` learns when an input event
arrives (in the driver's thread, before the event is on the loop) and when what the app wrote is on the terminal.

Textual internals: `Driver._app` (the app a driver serves: told of a key as it arrives) and `Driver._file`
(the terminal's file, replaced by an `OutputWatch` that sees each write and flush), Textual 8.2.8.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from functools import lru_cache
from typing import Any, Callable

from textual import events
from textual.driver import Driver
from textual.message import Message

from ... import priority

# Input events that make the work competing with them on the loop wait (rat_tui/priority.py). Not a mouse
# moving: a pointer resting over the window sends those all the time.
INPUT_EVENTS = (events.Key, events.Paste, events.MouseDown, events.MouseUp, events.MouseScrollDown,
                events.MouseScrollUp)


class OutputWatch:
    """The terminal's file, as the driver writes to it (Textual's writer thread, or the loop): knows when
    what was handed to the driver so far has been written and flushed (`when_written`, for `priority`). The
    driver counts what it is handed (`queued`, on the loop); each write here is one of those, in order."""

    def __init__(self, file, loop: asyncio.AbstractEventLoop) -> None:
        self._file = file
        self._loop = loop
        self.queued = 0  # texts handed to the driver (the loop's thread)
        self._written = 0  # texts written (the writer's thread)
        self._flushed = 0  # of those, flushed to the terminal
        self._waiting: list[tuple[int, Callable[[], None], contextvars.Context]] = []
        self._lock = threading.Lock()

    def __getattr__(self, name: str):
        return getattr(self._file, name)  # fileno, isatty, encoding...

    def write(self, text: str) -> int:
        written = self._file.write(text)
        self._written += 1
        return written

    def flush(self) -> None:
        self._file.flush()
        with self._lock:
            self._flushed = self._written
            ready = [(callback, context) for count, callback, context in self._waiting if count <= self._flushed]
            if ready:
                self._waiting = [waiting for waiting in self._waiting if waiting[0] > self._flushed]
        for callback, context in ready:
            try:
                self._loop.call_soon_threadsafe(callback, context=context)
            except RuntimeError:
                pass  # the loop is closed (the app is ending): nothing waits any more

    def when_written(self, callback: Callable[[], None]) -> None:
        """Call `callback` on the loop once everything handed to the driver so far is on the terminal, in the
        context it was asked in (the app's: `active_app`, which a Textual timer set from it needs; the writer's
        thread has none, and a timer set in a callback run in its context died at its first tick)."""
        with self._lock:
            if self._flushed < self.queued:
                self._waiting.append((self.queued, callback, contextvars.copy_context()))
                return
        self._loop.call_soon(callback)


@lru_cache(maxsize=None)
def input_first(driver_class: type[Driver]) -> type[Driver]:
    """The terminal's driver, telling `priority` when an input event arrives, in its own thread, before
    the event makes its way to the loop (a key's hops to the screen then run before anything that waits),
    and when what it was handed is on the terminal (`OutputWatch`: a key's frame written, what waited for
    the key goes on). A driver without a terminal file (headless) tells only the first."""

    class InputFirst(driver_class):  # type: ignore[valid-type, misc]
        _output: OutputWatch | None = None
        _key_loop: asyncio.AbstractEventLoop | None = None  # the app's, once it runs

        def process_message(self, message: Message) -> None:
            if isinstance(message, INPUT_EVENTS):
                if isinstance(message, events.Key):
                    priority.input_arrived(priority.KEY_WINDOW, key=True)
                    if self._key_loop is not None:  # (a dialog not drawn yet withdraws: KeyGuard.key_arrived)
                        try:
                            self._key_loop.call_soon_threadsafe(self._app.key_arrived)
                        except RuntimeError:
                            pass  # the loop is closed: the app is ending
                else:
                    priority.input_arrived()
            super().process_message(message)

        def start_application_mode(self) -> None:
            # (before the writer thread starts: it takes the file's write and flush as it does; again after
            # App.suspend, an external editor, when the watch is the file already and is told to priority again)
            self._key_loop = loop = asyncio.get_running_loop()
            file = getattr(self, "_file", None)
            if file is not None:
                if self._output is None:
                    self._file = self._output = OutputWatch(file, loop)
                priority.when_written = self._output.when_written
            super().start_application_mode()

        def write(self, data: str) -> None:
            if self._output is not None:
                self._output.queued += 1
            super().write(data)

        def stop_application_mode(self) -> None:
            if self._output is not None and priority.when_written == self._output.when_written:
                priority.when_written = None
            super().stop_application_mode()

    InputFirst.__name__ = InputFirst.__qualname__ = f"InputFirst{driver_class.__name__}"
    return InputFirst


def driver_of(app: Any) -> Driver | None:
    """The app's driver while it runs (None headless before it starts, or after it ends)."""
    return getattr(app, "_driver", None)
