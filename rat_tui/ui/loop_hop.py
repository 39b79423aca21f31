"""Provides `from_any_thread`: a callback a worker thread may call, run on the loop in the caller's context.

`loop.call_soon_threadsafe(callback)` runs `callback` in the context of the thread that calls it, where
Textual's context variables (`active_app`, the active message pump) are not set. A timer started there
(the transcript's paced flush, once the warm-up thread called it back) failed with LookupError when it
ticked: as the app closed after SIGTERM, that crashed rat before it had killed its agents, and an agent
that ignores SIGTERM outlived it (tests/test_hostile_agent.py, seen once in a clean-clone CI run).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any


def from_any_thread(callback: Callable[..., object]) -> Callable[..., None]:
    """A function any thread may call (with `callback`'s arguments) to run `callback` on the running loop, in
    the context current now (call it from the loop, in the app's context). Raises RuntimeError once that
    loop is closed."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()

    def hop(*args: Any) -> None:
        loop.call_soon_threadsafe(callback, *args, context=context)

    return hop
