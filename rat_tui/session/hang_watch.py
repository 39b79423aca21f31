"""Provides HangWatch: requests the agent leaves unanswered, and turns in which it says nothing, reported once.

A request unanswered past `request_timeout` gets a notice offering Esc (`$/cancel_request`) and Alt+R
(restart). A prompt is only reported when the agent sends nothing at all for that long: a long turn that
streams is no hang. The handshake's requests are bounded by its own timeout and not watched here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from ..protocol.router import Connection

log = logging.getLogger("rat.lifecycle")

# Requests the handshake already bounds with its own timeout (a failure there is an error, not a hang).
HANDSHAKE_METHODS = frozenset({"initialize", "session/new", "session/load", "session/resume"})


class HangWatch:
    """One per session; `run()` is its task while the agent process lives."""

    def __init__(self, connection: Callable[[], Connection | None], request_timeout: float,
                 notice: Callable[[str, str], None], agent_name: Callable[[], str]) -> None:
        self.connection = connection
        self.request_timeout = request_timeout
        self.notice = notice
        self.agent_name = agent_name
        self._stalled: dict[int, str] = {}
        self._silent_reported = False

    def reset(self) -> None:
        """A new agent process: nothing of the old one is pending."""
        self._stalled.clear()
        self._silent_reported = False

    async def run(self) -> None:
        """Check every quarter of the timeout (between 50 ms and 1 s) until cancelled."""
        tick = max(0.05, min(1.0, self.request_timeout / 4))
        while True:
            await asyncio.sleep(tick)
            try:
                self.check(time.monotonic())
            except Exception:  # the watch is a convenience: never let it kill the session
                log.exception("request watch failed")

    def check(self, now: float) -> None:
        connection = self.connection()
        if connection is None:
            return
        timeout = self.request_timeout
        pending = connection.pending_requests()
        live = {request_id for request_id, _, _ in pending}
        for request_id in [r for r in self._stalled if r not in live]:
            del self._stalled[request_id]  # answered (or cancelled) after all
        for request_id, method, started in pending:
            if method == "session/prompt":
                silent = now - max(started, connection.last_inbound)
                if silent < timeout:
                    self._silent_reported = False
                elif not self._silent_reported:
                    self._silent_reported = True
                    self.notice(f"The agent has sent nothing for {timeout:g} s during this turn. "
                                "Esc cancels the turn; Alt+R restarts the agent.", "warning")
                continue
            if method in HANDSHAKE_METHODS or request_id in self._stalled or now - started < timeout:
                continue
            self._stalled[request_id] = method
            log.warning("%s: no answer to %s (id %s) after %g s", self.agent_name(), method, request_id, timeout)
            self.notice(f"The agent has not answered {method} for {timeout:g} s. "
                        "Esc cancels the request; Alt+R restarts the agent.", "warning")

    @property
    def stalled(self) -> dict[int, str]:
        """Requests reported as unanswered: id -> method."""
        return dict(self._stalled)

    async def cancel_stalled(self) -> int:
        """Give up on every reported request (`$/cancel_request`); returns how many were cancelled."""
        connection = self.connection()
        if connection is None:
            return 0
        count = 0
        for request_id, method in list(self._stalled.items()):
            del self._stalled[request_id]
            if await connection.cancel_request(request_id):
                count += 1
                self.notice(f"Cancelled the unanswered {method} request.", "info")
        return count
