"""Input first: while a key (or a click, a scroll) the user just typed makes its way to the screen, the work
that competes with it on the event loop waits for it: reading agents (`transport`), delivering updates
(`SessionStore`), cutting and drawing the transcript.

A key travels through several turns of the loop before it is drawn (the driver's thread hands it to the
loop, the app to the screen, the screen to the focused widget, then a frame is composed and written).
In a flood every turn also read the agent for 2 ms, delivered a batch, cut a slice of the transcript and
drew it: a key typed meanwhile echoed after 60-130 ms, though no single callback ran over 40 ms. Now
the driver's thread marks the moment an input event arrives (`input_arrived`, any thread), and for
INPUT_WINDOW after it that work asks `input_wait()` and waits as long as it says; the window closes sooner
once a key has been handled and the frame after it drawn (`input_done`, RatApp.on_event).

Below the UI (no Textual here): the app calls `input_arrived` from its driver; protocol, state and UI
code ask `input_wait`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

# Seconds the competing work waits after an input event: enough for its hops and a frame (10-20 ms
# when the loop runs nothing else), short enough that typing through a flood only slows the flood.
INPUT_WINDOW = 0.04

clock = time.perf_counter  # (tests set their own)
_input_at: float | None = None
_serial = 0  # input events so far


def input_arrived() -> None:
    """An input event has just arrived (called from the driver's thread: two attribute writes)."""
    global _input_at, _serial
    _serial += 1
    _input_at = clock()


def serial() -> int:
    """Which input event arrived last (for `input_done`)."""
    return _serial


def input_done(seen: int) -> None:
    """The input event `seen` was handled and drawn: the work waiting for it goes on before the window
    is over, unless another one arrived since."""
    global _input_at
    if seen == _serial:
        _input_at = None


def input_wait() -> float:
    """Seconds the work competing with input should wait before it goes on (0: go on)."""
    if _input_at is None:
        return 0.0
    left = _input_at + INPUT_WINDOW - clock()
    return left if left > 0 else 0.0


class Later:
    """`loop.call_later(delay, callback)`, put off while an input event is on its way (`input_wait`):
    for work that may wait (a timed delivery, a timed commit). `cancel()` as a handle's."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delay: float, callback: Callable[[], object]) -> None:
        self._loop = loop
        self._callback = callback
        self._handle = loop.call_later(delay, self._run)

    def _run(self) -> None:
        wait = input_wait()
        if wait:
            self._handle = self._loop.call_later(wait, self._run)
            return
        self._callback()

    def cancel(self) -> None:
        self._handle.cancel()


def reset() -> None:
    """Forget the last input event (tests)."""
    global _input_at
    _input_at = None
