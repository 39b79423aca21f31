"""Provides SessionStore: holds one session's state and notifies subscribers at most once per frame."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import priority
from ..protocol.wire import parse_update, plain_text
from . import children, reducer
from ..protocol.sanitize import clean_update
from .models import Change, ReaderIdle, SessionState, TextAppended

if TYPE_CHECKING:  # protocol/v2.py: imported once a session speaks v2 (a v1 agent never needs it)
    from ..protocol.v2 import UpdateMapper

log = logging.getLogger("rat.store")

Subscriber = Callable[[list[Change]], None]
FRAME_SECONDS = 1 / 60
# Under a flood (a big batch last frame) deliver less often: every delivery costs the UI a repaint,
# and keystrokes must still get their share of the loop.
FLOOD_SECONDS = 1 / 20
FLOOD_BATCH = 64


class SessionStore:
    """Applies updates through the reducer and batches the resulting changes.

    An agent may send thousands of chunks a second; subscribers (widgets) hear about them once per
    frame, with adjacent appends to the same entry merged into one.
    """

    def __init__(self, state: SessionState | None = None, frame_seconds: float = FRAME_SECONDS) -> None:
        self.state = state or SessionState()
        self.frame_seconds = frame_seconds
        self._subscribers: list[Subscriber] = []
        self._pending: list[Change] = []
        self._flush_handle: priority.Later | None = None
        self._due = 0.0  # when the scheduled delivery comes (the loop's clock)
        self._delivered_at = float("-inf")  # when the last delivery was (the loop's clock)
        self._last_batch = 0
        self._v2: UpdateMapper | None = None  # the v2 mapping, once the state says the agent speaks v2
        # Plain-text chunks of one message held by `apply_streamed`, applied joined (see there).
        self._run: list[str] = []
        self._run_key: tuple[str, str | None] = ("", None)
        self._run_handle: asyncio.Handle | None = None
        self._joined = 0  # chunks folded into others since the last delivery (a flood's size counts them)
        self._idle = False  # the agent's output was drained since the last delivery (reader_idle)
        self._since_idle = False  # changes emitted since the agent's output was last drained
        # Runs before each delivery: what is about to be shown must be journaled first (AgentSession sets it).
        self.before_delivery: Callable[[], None] | None = None

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

        return unsubscribe

    def apply_streamed(self, raw_update: Any) -> None:
        """`apply_update` for updates as the agent streams them: plain-text chunks of the same message in a
        row are applied as one, at the next turn of the loop (before the store delivers, and before
        anything else changes the state, so the order holds). Under a flood that is one reducer pass
        for a slice's hundreds of chunks instead of one each; the state is the same (`wire.plain_text`
        says which chunks join). Anything else is applied at once, after the chunks held."""
        plain = plain_text(raw_update) if type(raw_update) is dict and self.state.protocol_version == 1 else None
        if plain is None:
            self.apply_update(raw_update)
            return
        kind, message_id, text = plain
        if self._run and self._run_key != (kind, message_id):
            self._apply_run()
        if not self._run:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.apply_update(raw_update)  # no loop (a script, a replay): at once
                return
            self._run_key = (kind, message_id)
            if self._run_handle is None:
                self._run_handle = loop.call_soon(self._apply_run)
        self._run.append(text)

    def _apply_run(self) -> None:
        if self._run_handle is not None:
            self._run_handle.cancel()
            self._run_handle = None
        if not self._run:
            return
        texts, self._run = self._run, []
        self._joined += len(texts) - 1
        kind, message_id = self._run_key
        update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": "".join(texts)}}
        if message_id is not None:
            update["messageId"] = message_id
        self.apply_update(update)

    def apply_update(self, raw_update: Any) -> None:
        """One `session/update` `update` object off the wire, in the protocol version the session speaks;
        every string in it is sanitised first (terminal bytes, base64 in v2, once decoded)."""
        if self._run:
            self._apply_run()
        raw_update = clean_update(raw_update)
        if self.state.protocol_version == 1:
            self._emit(reducer.apply_update(self.state, parse_update(raw_update)))
            return
        if self._v2 is None:
            from ..protocol.v2 import UpdateMapper

            self._v2 = UpdateMapper()
        for update in self._v2.map(raw_update):
            self._emit(reducer.apply_update(self.state, update))

    def apply_notification(self, params: Any) -> bool:
        """One `session/update` `params`: a child session's update (its sessionId is one of this
        state's children, state/children.py) goes to that child; any other to this session.
        Returns whether it went to a child."""
        if self._run:
            self._apply_run()
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        update = params.get("update") if isinstance(params, dict) else None
        if session_id is not None and session_id != self.state.session_id and children.find(self.state, session_id):
            self._emit(reducer.apply_child_update(self.state, session_id, parse_update(clean_update(update))))
            return True
        self.apply_update(update)
        return False

    def dispatch(self, action: Callable[..., list[Change]], *args: Any, **kwargs: Any) -> None:
        """Run a local reducer action (e.g. `reducer.add_notice`) against this store's state."""
        if self._run:
            self._apply_run()
        self._emit(action(self.state, *args, **kwargs))

    def _emit(self, changes: list[Change]) -> None:
        if not changes:
            return
        self._pending.extend(changes)
        self._since_idle = True
        if self._flush_handle is None:
            self._schedule(FLOOD_SECONDS if self._last_batch >= FLOOD_BATCH else self.frame_seconds)

    def _schedule(self, delay: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._due = loop.time() + delay
        # (put off while a key the user typed is on its way to the screen: `priority`)
        self._flush_handle = priority.Later(loop, delay, self.flush)

    @property
    def burst_end_due(self) -> bool:
        """Whether the reader has read a burst to its end and the delivery of what it brought (which ends with
        `ReaderIdle`) has not come yet."""
        return self._idle

    def reader_idle(self) -> None:
        """The agent's output is drained (everything it wrote so far is routed: the end of a burst).
        What it brought is delivered now, or a frame after the last delivery when that was less than a
        frame ago, not at a flood's pace, and the delivery ends with `ReaderIdle`: at the end of a
        2,000-chunk answer its last lines waited 50 ms for the store and 90 ms more for the transcript's
        flood pacing, with nothing left to read meanwhile; then still a frame (17 ms) for the store."""
        if not (self._since_idle or self._run):
            return  # nothing came since the last time (an agent writing a line at a time)
        self._since_idle = False
        self._idle = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        delay = max(0.0, self._delivered_at + self.frame_seconds - loop.time())
        if self._flush_handle is not None:
            if self._due <= loop.time() + delay:
                return  # it comes soon enough
            self._flush_handle.cancel()
            self._flush_handle = None
        self._schedule(delay)

    def deliver_soon(self) -> None:
        """Deliver what is pending at the loop's next turn (after a key on its way to the screen: `priority`), not
        at the frame's or a flood's pace: the turn is over, nothing more comes to batch with it. The end of a
        2,000-chunk answer, read and routed, waited up to a frame (17 ms after the delivery before) for its
        delivery (bench/breakdown.py chunks2000 --timeline, 10 ms in one run of three)."""
        if not self._pending and not self._idle and not self._run:
            return
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        self._schedule(0.0)

    def flush(self) -> None:
        """Deliver the pending batch now."""
        if self._run:
            self._apply_run()
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if not self._pending and not self._idle:
            return
        try:
            self._delivered_at = asyncio.get_running_loop().time()
        except RuntimeError:
            pass
        if self.before_delivery is not None:
            try:
                self.before_delivery()
            except Exception:
                log.exception("before a store delivery")
        self._last_batch = len(self._pending) + self._joined
        self._joined = 0
        batch = merge_appends(self._pending)
        self._pending = []
        if self._idle:
            self._idle = False
            batch.append(ReaderIdle())
        for subscriber in list(self._subscribers):
            try:
                subscriber(batch)
            except Exception:
                log.exception("store subscriber failed")


def merge_appends(changes: list[Change]) -> list[Change]:
    """Fold runs of TextAppended for the same entry into one, keeping order."""
    merged: list[Change] = []
    run: list[str] = []
    run_key: str | None = None
    for change in changes:
        if isinstance(change, TextAppended) and change.key == run_key:
            run.append(change.text)
            continue
        if run_key is not None:
            merged.append(TextAppended(run_key, "".join(run)))
            run_key, run = None, []
        if isinstance(change, TextAppended):
            run_key, run = change.key, [change.text]
        else:
            merged.append(change)
    if run_key is not None:
        merged.append(TextAppended(run_key, "".join(run)))
    return merged
