"""Provides DiffCache: each file diff computed once and shared (tool-call card, diff viewer, permission
preview), big ones in a worker thread so the UI thread never pays for the size of a file.

`diff(path, old, new, on_ready)` returns the `FileDiff` when it is cached or small enough to build at once
(SYNC_CHARS); otherwise it returns None, starts the work in the background (once per input, however many
callers ask) and calls each `on_ready` from the worker thread when the diff is cached. A UI caller shows a
placeholder meanwhile and hops back to its own loop in `on_ready` (`loop.call_soon_threadsafe`).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
import queue
from typing import TYPE_CHECKING, Callable

from .. import priority

if TYPE_CHECKING:  # imported at the first diff (or by the warm-up's dialogs): not needed for the first frame
    from .diffing import FileDiff

log = logging.getLogger("rat.diff")

SYNC_CHARS = 64 * 1024  # old + new text up to this size is diffed in place: about a millisecond
CAPACITY = 16  # diffs kept, least recently used dropped first

Key = tuple[str, str | None, str]


class DiffCache:
    """FileDiffs by (path, old text, new text); thread-safe."""

    def __init__(self, capacity: int = CAPACITY, sync_chars: int = SYNC_CHARS) -> None:
        self.capacity = capacity
        self.sync_chars = sync_chars
        self._done: OrderedDict[Key, FileDiff] = OrderedDict()
        self._waiting: dict[Key, list[Callable[[], None]]] = {}
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Key] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self.built = 0
        """FileDiffs built so far (tests check a diff is computed once, not once per render)."""
        self.built_in_background = 0

    def get(self, path: str, old: str | None, new: str) -> FileDiff | None:
        """The cached diff, or None; never computes."""
        key = (path, old, new)
        with self._lock:
            diff = self._done.get(key)
            if diff is not None:
                self._done.move_to_end(key)
            return diff

    def diff(self, path: str, old: str | None, new: str,
             on_ready: Callable[[], None] | None = None) -> FileDiff | None:
        """The diff now if cached or small; else None, and `on_ready()` (from a worker thread) once it is."""
        cached = self.get(path, old, new)
        if cached is not None:
            return cached
        key = (path, old, new)
        if len(old or "") + len(new) <= self.sync_chars:
            return self._store(key, self._build(key))
        with self._lock:
            if key in self._done:  # finished between the two looks
                return self._done[key]
            callbacks = self._waiting.get(key)
            first = callbacks is None
            if first:
                callbacks = self._waiting[key] = []
            if on_ready is not None:
                callbacks.append(on_ready)
            if first and self._worker is None:
                # A daemon thread, not a ThreadPoolExecutor (whose workers are joined at exit): quitting
                # while a huge diff is being computed must not wait for it.
                self._worker = threading.Thread(target=self._work, name="diff", daemon=True)
                self._worker.start()
        if first:
            self._jobs.put(key)
        return None

    def pending(self, path: str, old: str | None, new: str) -> bool:
        with self._lock:
            return (path, old, new) in self._waiting

    def _build(self, key: Key, pause: Callable[[], object] | None = None) -> FileDiff:
        from .diffing import FileDiff

        diff = FileDiff(*key, pause=pause)
        # What the widgets read first, built here too: the unified rows and the widest line.
        diff.unified_starts  # noqa: B018
        diff.widest("unified")
        diff.pause = None  # (what is built later is built where it is asked for: never pausing the loop)
        with self._lock:
            self.built += 1
        return diff

    def _store(self, key: Key, diff: FileDiff) -> FileDiff:
        with self._lock:
            self._done[key] = diff
            self._done.move_to_end(key)
            while len(self._done) > self.capacity:
                self._done.popitem(last=False)
        return diff

    def _work(self) -> None:
        while True:
            self._background(self._jobs.get())

    def _background(self, key: Key) -> None:
        try:
            # Giving way to keys: on two cores this thread and the loop share the GIL, and a key typed as
            # a 20,000-line diff was being built echoed after 110 ms (two frames at half speed).
            diff = self._build(key, priority.give_way)
        except Exception:  # a bug here must not leave callers waiting forever
            log.exception("diff of %s failed", key[0])
            from .diffing import FileDiff

            diff = FileDiff(key[0], "", "")
        with self._lock:
            self.built_in_background += 1
        self._store(key, diff)
        with self._lock:
            callbacks = self._waiting.pop(key, [])
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("diff-ready callback failed")


shared = DiffCache()
"""The process-wide cache the widgets share."""
