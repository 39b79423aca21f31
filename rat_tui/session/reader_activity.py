"""Provides ReaderActivity: what the UI reads of the agent reader's timing, without reaching into the connection.

The router (`protocol.router.Connection`) stamps when it routed the agent's last line (`last_inbound`), when it
last found the agent's pipe drained (`idle_at`) and when the burst being read began (`burst_began`); the store
knows whether the end of a burst read to its end is still to be delivered (`SessionStore.burst_end_due`). The
transcript paces its drawing by these (ui/flush_pacer.py) and the tab bar puts off a relabel while the agent
writes. The connection is replaced on a restart, so it is looked up each time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..protocol.router import Connection
    from ..state.store import SessionStore

# A flood whose reader never reported its pipe drained (the agent exited mid-burst) is over this long after
# its last line.
FLOOD_STALE = 0.25


class ReaderActivity:
    """One session's reader timing, as the UI reads it (all times `time.monotonic`)."""

    def __init__(self, connection: Callable[[], Connection | None], store: SessionStore) -> None:
        self._connection = connection
        self._store = store
        # The agent's last line read when a turn was seen over: its burst is over then (`burst_last`).
        self._turn_over_inbound = -1.0

    def last_inbound(self) -> float:
        """When the agent's last line was read (0.0: no connection)."""
        connection = self._connection()
        return connection.last_inbound if connection is not None else 0.0

    def quiet_for(self, seconds: float) -> bool:
        """Whether the agent has written nothing for `seconds` (or has no connection)."""
        connection = self._connection()
        return connection is None or time.monotonic() - connection.last_inbound >= seconds

    def burst_last(self) -> float:
        """When the agent's last line of the burst still going on was read, or 0.0 once the turn is over with
        nothing read since: the agent answered the prompt, so nothing more of its burst is coming, and the
        transcript draws its end at once instead of waiting for a pause."""
        connection = self._connection()
        if connection is None:
            return 0.0
        last = connection.last_inbound
        return 0.0 if last <= self._turn_over_inbound else last

    def burst_began(self) -> float:
        """When the burst being read began (0.0: no connection)."""
        connection = self._connection()
        return connection.burst_began if connection is not None else 0.0

    def end_due(self) -> bool:
        """Whether the store has yet to deliver the end of a burst the reader has read to its end."""
        return self._store.burst_end_due

    def flooding(self) -> bool:
        """Lines the agent wrote may still wait to be read: the store has not delivered the end of a burst the
        reader has read (its delivery may come after the transcript's own timer: drawn in between, the end came
        a frame and a flush later; the delivery draws it, however late a key made it), or the reader has not
        found its pipe drained since the last line, which came less than FLOOD_STALE ago."""
        connection = self._connection()
        if connection is None:
            return False
        if self._store.burst_end_due:
            return True  # (its delivery is scheduled: however late a key made it, it comes and draws)
        last = connection.last_inbound
        return last > connection.idle_at and time.monotonic() - last < FLOOD_STALE

    def turn_over(self) -> None:
        """A turn ended (ready, cancelled, failed): the agent's burst ends with it (`burst_last`)."""
        connection = self._connection()
        if connection is not None:
            self._turn_over_inbound = connection.last_inbound
