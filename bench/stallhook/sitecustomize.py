"""Stall logger for the app under bench/stress.py --stalls FILE (put on the app's PYTHONPATH by it).

Every event-loop callback of the app that runs longer than STALL_MS (25, or $RAT_STALL_MS; `stress.py --env
RAT_STALL_MS=8` to see what a key waited behind when no single callback is long) is appended to $RAT_STALL_LOG: when it
started (seconds after launch), how long it ran, the callback, and the commonest of the loop thread's stacks
sampled every 3 ms while it ran (frames of rat, Textual, Rich, markdown-it, json, sqlite3, pydantic only; the 4
commonest, or $RAT_STALL_STACKS).
A callback with few or no samples held the GIL in C code the whole time (the sampler could not run).
Not loaded for the agent (a script named *agent.py).
"""

import collections
import os
import sys
import threading
import time

STALL_MS = int(os.environ.get("RAT_STALL_MS", "25"))
SAMPLE_EVERY = 0.003
KEEP = ("rat_tui", "textual", "rich", "markdown_it", "json", "sqlite3", "pydantic")

if os.environ.get("RAT_STALL_LOG") and not sys.argv[0].endswith("agent.py"):
    import asyncio.events

    _out = os.environ["RAT_STALL_LOG"]
    _t0 = time.perf_counter()
    _running: list = [None, 0.0, None]  # handle, started, samples
    _run = asyncio.events.Handle._run

    def _timed_run(self):
        samples: list[str] = []
        _running[:] = [self, time.perf_counter(), samples]
        try:
            return _run(self)
        finally:
            started = _running[1]
            _running[0] = None
            took = time.perf_counter() - started
            if took * 1000 > STALL_MS:
                callback = getattr(self, "_callback", None)
                with open(_out, "a") as log:
                    log.write(f"{os.getpid()} {started - _t0:.3f}s {took * 1000:.1f}ms {callback!r:.150} "
                              f"samples={len(samples)}\n")
                    for stack, count in collections.Counter(samples).most_common(int(os.environ.get("RAT_STALL_STACKS", "4"))):
                        log.write(f"  [{count}] {stack}\n")

    asyncio.events.Handle._run = _timed_run
    _main = threading.main_thread().ident

    def _where(frame) -> str:
        names = []
        while frame is not None and len(names) < 6:
            code = frame.f_code
            path = code.co_filename
            if any(part in path for part in KEEP) and "message_pump" not in path and "_callback" not in path:
                names.append(f"{path.split('site-packages/')[-1]}:{frame.f_lineno}:{code.co_name}")
            frame = frame.f_back
        return " < ".join(names)

    def _sample() -> None:
        while True:
            time.sleep(SAMPLE_EVERY)
            handle, started, samples = _running
            if handle is not None and time.perf_counter() - started > 0.01:
                frame = sys._current_frames().get(_main)
                if frame is not None and _running[0] is handle:
                    samples.append(_where(frame))

    threading.Thread(target=_sample, name="stall-sampler", daemon=True).start()
