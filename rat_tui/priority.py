"""Input first: while a key (or a click, a scroll) the user just typed makes its way to the screen, the work
that competes with it on the event loop waits for it: reading agents (`transport`), serving their requests
(`router`), delivering updates (`SessionStore`), cutting and drawing the transcript.

A key travels through several turns of the loop before it is drawn (the driver's thread hands it to the
loop, the app to the screen, the screen to the focused widget, then a frame is composed and written).
In a flood every turn also read the agent, delivered a batch, cut a slice of the transcript and drew it:
a key typed meanwhile echoed late, though no single callback ran long. Now the driver's thread marks the moment an input event arrives (`input_arrived`, any thread), and for
INPUT_WINDOW after it that work asks `input_wait()` and waits; the window closes sooner once a key has
been handled and the frame after it drawn (`input_done`, RatApp.on_event), and what waits goes on then
(`input_passed`, `call_after_input`), not at the window's end: a key echoed quickly would otherwise hold a
flood for the whole window, and typing through a long answer made it end visibly later.

The bottom layer, below `protocol` (no Textual, nothing of rat's imported here): the app calls
`input_arrived` from its driver; protocol, state, session and UI code ask `input_wait`.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from types import FrameType

# Seconds the competing work waits after an input event: enough for its hops and a frame when the loop
# runs nothing else, short enough that typing through a flood only slows the flood.
INPUT_WINDOW = 0.04
# ... after a key, at most: a key's window ends once it is handled and drawn (`input_done`), and a key that
# arrives while a frame is being composed (a long code block's is slow) waits for that frame before the
# app even sees it. With INPUT_WINDOW alone the flood went on before the key had reached the app, and the
# key waited behind it. The cap is for a key never drawn (stopped on its way up).
KEY_WINDOW = 0.15
# Seconds the waiting work still waits once the key's frame is composed (`input_done`): the frame is
# written by Textual's writer thread, which needs the GIL, and gets it within a switch interval. (Longer
# while `input_done` could come before the key's frame was drawn; with the frame drawn first, this short
# grace ended toolcalls sooner with the same worst echo: docs/architecture.md.)
DRAWN_GRACE = 0.005
# Set by the app while it knows when its output reaches the terminal (ui: `OutputWatch.when_written`): calls
# its argument on the loop once everything handed to the terminal so far is written and flushed. The work
# held for a key then goes on as the key's frame is written, DRAWN_GRACE after `input_done` at the latest:
# with the grace alone, a key typed into a flood held it for the whole grace after its frame was out (the
# writer thread needs the GIL only briefly), with the loop idle meanwhile.
when_written: Callable[[Callable[[], None]], None] | None = None

# While an input event is on its way, the cyclic garbage collector waits as well: under a flood a
# collection is slow (a middle one more so), and one that fell in a key's window added that much to its
# echo. Its young threshold is raised as the event arrives and put back once it is drawn or the
# window is over (`_restore_gc`): the collection comes after the key's frame instead. (Raised, not
# disabled: a key never drawn still leaves the collector on.)
GC_DEFERRED = 500_000

clock = time.perf_counter  # (tests set their own)
_input_at: float | None = None
_until = 0.0  # when the window of the input on its way is over (`input_wait`)
_serial = 0  # input events so far
_keys = 0  # keys so far (`keys_arrived`)
_key_last = False  # the input event on its way is a key (`key_on_its_way`)
_key_times: deque[float] = deque(maxlen=8)  # when the last keys arrived (`keys_within`)
_gc_saved: tuple[int, int, int] | None = None  # the thresholds to put back (`_defer_gc`)
_gc_lock = threading.Lock()  # (raised from the driver's thread, put back from the loop's)


def input_arrived(window: float | None = None, key: bool = False) -> None:
    """An input event has just arrived (called from the driver's thread); the work competing with it waits
    `window` seconds at most (INPUT_WINDOW; KEY_WINDOW for a key), or until it is drawn (`input_done`).
    `key`: it is a key (counted for `keys_arrived`)."""
    global _input_at, _serial, _until, _keys, _key_last
    now = clock()
    end = now + (INPUT_WINDOW if window is None else window)
    _until = max(_until, end) if _input_at is not None else end  # (a click after a key: the key's window holds)
    _serial += 1
    _keys += key
    _key_last = key
    if key:
        _key_times.append(now)
    _input_at = now
    _defer_gc()


def _defer_gc() -> None:
    global _gc_saved
    with _gc_lock:
        if _gc_saved is None and gc.isenabled():
            _gc_saved = gc.get_threshold()
            gc.set_threshold(max(_gc_saved[0], GC_DEFERRED), *_gc_saved[1:])


def _restore_gc() -> None:
    global _gc_saved
    if _gc_saved is None:
        return
    with _gc_lock:
        if _gc_saved is not None:
            gc.set_threshold(*_gc_saved)
            _gc_saved = None


def keys_arrived() -> int:
    """How many keys have arrived so far, counted as they reach the driver's thread: a dialog on its way to the
    screen asks whether the user typed meanwhile (ui/screens/dialog.py), before the key itself is handled."""
    return _keys


def keys_within(seconds: float) -> int:
    """How many keys arrived in the last `seconds` (up to 8): whether the user was typing as a dialog came."""
    since = clock() - seconds
    return sum(1 for at in _key_times if at >= since)


def key_on_its_way(hold: float) -> bool:
    """Whether the input event on its way is a key that arrived less than `hold` seconds ago and is not drawn
    yet (`input_done`): the screen's next frame waits for it (ui/tabs/main_screen.py)."""
    at = _input_at
    return at is not None and _key_last and clock() - at < hold


def serial() -> int:
    """Which input event arrived last (for `input_done`)."""
    return _serial


def input_done(seen: int) -> None:
    """The input event `seen` was handled and drawn: the work waiting for it goes on before the window
    is over, unless another one arrived since."""
    global _input_at
    if seen == _serial:
        _input_at = None
        _restore_gc()
        if _waiters:
            waiting = _waiters[:]
            _waiters.clear()
            for wake in waiting:
                wake()


# What waits for the window (on the loop), woken by `input_done`: each entry schedules its own going on.
_waiters: list[Callable[[], None]] = []


def call_after_input(loop: asyncio.AbstractEventLoop, wait: float, callback: Callable[[], object]) -> Callable[[], None]:
    """Call `callback` on `loop` once the input window is over: `wait` seconds from now (`input_wait()`),
    sooner if the input is drawn first (`input_done`). Returns the function that cancels it."""
    done = False

    def cancel() -> None:
        nonlocal done
        done = True
        handle.cancel()
        _forget(early)

    def go() -> None:
        if not done:
            cancel()
            callback()

    def early() -> None:
        if not loop.is_closed():  # (a waiter left by an app since closed: tests run many loops)
            loop.call_later(DRAWN_GRACE, go)
            if when_written is not None:
                when_written(go)  # (sooner, once the key's frame is out)

    handle = loop.call_later(wait, go)
    _waiters.append(early)
    return cancel


async def input_passed(wait: float) -> None:
    """Sleep while input is on its way: `wait` seconds at most (`input_wait()`), less once it is drawn."""
    loop = asyncio.get_running_loop()
    woken = loop.create_future()
    cancel = call_after_input(loop, wait, lambda: woken.done() or woken.set_result(None))
    try:
        await woken
    finally:
        cancel()


async def give_turn() -> None:
    """Let the loop run what is ready: a turn of it, or, while input is on its way, until it is drawn (the
    readers and a release of held updates, between their slices)."""
    wait = input_wait()
    await (input_passed(wait) if wait else asyncio.sleep(0))


def _forget(wake: Callable[[], None]) -> None:
    try:
        _waiters.remove(wake)
    except ValueError:
        pass  # woken already (input_done empties the list)


def input_wait() -> float:
    """Seconds the work competing with input should wait before it goes on (0: go on)."""
    if _input_at is None:
        return 0.0
    left = _until - clock()
    if left > 0:
        return left
    _restore_gc()
    return 0.0


# How long after an input event a worker thread giving way (`give_way`) waits at most for it to be drawn:
# longer than INPUT_WINDOW, as what waits is work in the background with a placeholder shown meanwhile.
GIVE_WAY_WINDOW = 0.25


def input_pending(window: float = GIVE_WAY_WINDOW) -> float:
    """Seconds a worker thread should still give way (0: go on): while the last input event is not drawn,
    `window` seconds after its arrival at most."""
    at = _input_at
    if at is None:
        return 0.0
    left = at + window - clock()
    return left if left > 0 else 0.0


def give_way(step: float = 0.002) -> float:
    """From a worker thread doing long work in Python (a big diff): sleep while an input event is on its way
    to the screen (`input_pending`), so that the loop has the GIL to itself meanwhile. Returns the seconds
    slept."""
    slept = 0.0
    while (left := input_pending()) > 0:
        pause = min(left, step)
        time.sleep(pause)
        slept += pause
    return slept


def imports_give_way(limit: float) -> Callable[[], None]:
    """From a thread importing modules in the background (the app's warm-up): until the function returned is
    called, each module this thread imports first waits while an input event is on its way to the screen
    (`input_wait`: until it is drawn), `limit` seconds in all at most. Returns what puts imports back.

    The warm-up imports a lot after the first frame (markdown-it, Rich's markdown, Pygments, pydantic, the ACP
    models, the dialogs) and holds the GIL between statements: on two cores the loop shared it, and a key typed
    as the first prompt's answer came in echoed markedly later with the warm-up under way than once it was
    over (bench/stress.py diff, the prompt typed slower so that it ended first).

    Never while the main thread is importing: it may be waiting on the lock of a module this thread is
    importing, and must not wait for the pause as well (`_importing`).
    """
    me = threading.get_ident()
    main = threading.main_thread().ident
    spent = [0.0]

    class GiveWay:
        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> None:
            if threading.get_ident() == me and spent[0] < limit:
                spent[0] += _pause_for_input(main, limit - spent[0])
            return None  # (the next finder finds the module)

    finder = GiveWay()
    sys.meta_path.insert(0, finder)

    def put_back() -> None:
        try:
            sys.meta_path.remove(finder)
        except ValueError:
            pass

    return put_back


def _pause_for_input(main: int | None, most: float, step: float = 0.002) -> float:
    slept = 0.0
    while slept < most and (wait := input_wait()) > 0 and not _importing(main):
        pause = min(wait, step, most - slept)
        time.sleep(pause)
        slept += pause
    return slept


# Every thread's current frame. `sys._current_frames` is documented in the `sys` module's reference (for
# "internal and specialized purposes"), and CPython has no other way to read another thread's stack: named
# once here, the one place rat reads it.
thread_frames: Callable[[], dict[int, FrameType]] = sys._current_frames  # noqa: SLF001


def _importing(ident: int | None) -> bool:
    """Whether that thread is inside an import (importlib's own frames on its stack)."""
    frame = thread_frames().get(ident) if ident is not None else None
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


class Later:
    """`loop.call_later(delay, callback)`, put off while an input event is on its way (`input_wait`):
    for work that may wait (a timed delivery, a timed commit). `cancel()` as a handle's."""

    def __init__(self, loop: asyncio.AbstractEventLoop, delay: float, callback: Callable[[], object]) -> None:
        self._loop = loop
        self._callback = callback
        handle = loop.call_later(delay, self._run)
        self._cancel: Callable[[], object] = handle.cancel

    def _run(self) -> None:
        wait = input_wait()
        if wait:
            self._cancel = call_after_input(self._loop, wait, self._run)
            return
        self._callback()

    def cancel(self) -> None:
        self._cancel()


def reset() -> None:
    """Forget the last input event (tests)."""
    global _input_at, when_written
    _input_at = None
    when_written = None
    _waiters.clear()
    _restore_gc()
