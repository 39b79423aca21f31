"""Provides FlushPacer: when the transcript cuts the text streamed into it, sizes itself and draws.

Text appended to the transcript is only recorded (O(chunk)); a flush later cuts a slice of it into blocks,
sets the heights and draws the viewport. This module decides when each flush comes and whether it draws:

- paced by what the last flush cost: in a flood each flush renders a screenful of new Markdown, and flushing
  at every turn of the loop left less time to read the agent than to draw what scrolls past unread. A cheap
  flush (normal streaming) comes at once;
- while the agent's lines keep coming (a burst), drawn at most every MAX_FLUSH_GAP, counted from the last draw
  or the burst's start; the end of a burst read to its end is drawn by its delivery (`reader_idle`);
- input first: a key on its way to the screen goes before a flush (rat_tui/priority.py);
- a tab in the background cuts at most every HIDDEN_FLUSH_GAP and draws nothing until shown.

Pure Python (no Textual): the transcript is its `FlushTarget`, which also lends it its timers; the reader's
timing comes from the session's `ReaderActivity` (`follow`). tests/test_flush_pacer.py drives it with a fake
clock and target.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

from .. import priority
from ..protocol.router import BURST_GAP

# A flush waits FLUSH_SPACING times what the last one cost after it (at most MAX_FLUSH_GAP seconds): the
# transcript takes about a quarter of the UI thread in a flood, and reading the agent the rest.
FLUSH_SPACING = 3
MAX_FLUSH_GAP = 0.1
BURST_QUIET = BURST_GAP  # the agent has written nothing for this long: a burst of lines paused (or ended)
PARK_POLL = 0.02  # what a flood left to cut is looked at again this often, until it is read
PACED_FLUSH = 0.005  # ... once a flush costs more than this (a flood); cheaper ones come at once
HIDDEN_FLUSH_GAP = 0.25  # a tab in the background cuts its streamed text into blocks this often at most


class Timer(Protocol):
    def stop(self) -> None: ...


class FlushTarget(Protocol):
    """What the pacer drives (the transcript): a slice cut, the heights set, a draw; and its timers."""

    @property
    def is_mounted(self) -> bool: ...  # (flushes are scheduled from then on)
    @property
    def is_attached(self) -> bool: ...  # (a flush woken after its removal does nothing)
    @property
    def in_background(self) -> bool: ...  # a tab not shown: nothing to draw
    @property
    def following(self) -> bool: ...  # the view sticks to the end
    @property
    def warming(self) -> bool: ...  # markdown not imported yet: nothing is cut
    @property
    def has_dirty(self) -> bool: ...  # text arrived that no cycle has taken yet
    @property
    def cutting(self) -> bool: ...  # a cycle is still being cut, a slice per flush

    def sync_slice(self, parking: bool) -> bool:
        """Cut a slice of the cycle into blocks (taking the dirty entries if no cycle is on) and estimate the
        heights of what changed; `parking`: leave what a flood has yet to cut for later, showing its end.
        True if it parked an entry."""
        ...

    def set_heights(self) -> None:
        """Give the widget the heights of what was cut (its virtual size, its scrollbar)."""
        ...

    def draw(self, yielding: bool) -> bool:
        """Render the viewport and pin it; `yielding`: give up (False) as soon as a key arrives."""
        ...

    def wait_warm(self) -> None:
        """Flush again once the warm-up has imported markdown."""
        ...

    def drawn_to_end(self) -> None:
        """Everything the agent sent so far is drawn: the screen may show it at once."""
        ...

    def call_later(self, callback: Callable[[], object]) -> object: ...
    def set_timer(self, delay: float, callback: Callable[[], object]) -> Timer: ...
    def call_after_refresh(self, callback: Callable[[], object]) -> object: ...


class ReaderTiming(Protocol):
    """The reader's timing the pacer follows (session.reader_activity.ReaderActivity)."""

    def burst_last(self) -> float: ...
    def flooding(self) -> bool: ...
    def burst_began(self) -> float: ...
    def end_due(self) -> bool: ...


class FlushPacer:
    """When a transcript flushes and whether a flush draws (see the module's docstring)."""

    def __init__(self, target: FlushTarget, clock: Callable[[], float] = time.monotonic) -> None:
        self._target = target
        self.clock = clock  # (the reader's times are time.monotonic: the same clock)
        self.flush_pending = False
        self._flushed_at = 0.0  # when the last flush ended, and what it cost (for `schedule`'s pacing)
        self._flush_cost = 0.0
        self._chain_cost = 0.0  # what the flushes of a cycle still being cut cost so far
        self._paced: Timer | None = None  # the timer of a flush paced in a flood (`schedule`)
        self.unsettled = False  # a flush's drawing gave way (to a key, to a burst): drawn at the next flush
        self.drawn_at = 0.0  # when a flush last sized and drew the transcript
        # When the agent's reader last routed a line of the burst going on (0.0: none): while lines keep coming
        # (a burst), a flush draws at most every MAX_FLUSH_GAP (see `_held`).
        self.activity: Callable[[], float] | None = None
        # Whether lines the agent wrote still wait to be read: a flood, even while this thread is too busy to
        # read them (the last one then came more than BURST_QUIET ago).
        self.flooding: Callable[[], bool] | None = None
        # When the burst of lines being read began: a flood's first draw waits for it to pause, or MAX_FLUSH_GAP
        # from its start, as every later draw does from the one before (`_paced_since`).
        self.burst_began: Callable[[], float] | None = None
        # Whether the store has yet to deliver the end of a burst the reader has read to its end: a flush does
        # not draw then, the delivery's ReaderIdle does (`reader_idle`).
        self.end_due: Callable[[], bool] | None = None
        self._awaiting_end = False  # a flush held its draw for that (`_held`): reader_idle flushes
        self.held_timer: Timer | None = None  # `_held_over`'s, due at `_held_due`
        self._held_due = 0.0
        self.parked = False  # the last slice left an entry behind, to be cut once the flood is read
        self._holding = False  # the last slice's drawing waits for the burst to pause or its end's delivery
        self.preview_fresh = False  # a flood's preview has lines not drawn yet: the next flush draws
        self.background_stale = False  # cut while in the background: sized and drawn once shown

    def follow(self, reader: ReaderTiming) -> None:
        """Pace the drawing by this reader's timing."""
        self.activity = reader.burst_last
        self.flooding = reader.flooding
        self.burst_began = reader.burst_began
        self.end_due = reader.end_due

    def schedule(self) -> None:
        """A flush is due (text arrived, a redraw is wanted): now, or paced by what the last one cost."""
        target = self._target
        if not self.flush_pending and target.is_mounted:
            self.flush_pending = True
            hidden = target.in_background
            gap = HIDDEN_FLUSH_GAP if hidden else min(FLUSH_SPACING * self._flush_cost, MAX_FLUSH_GAP)
            wait = self._flushed_at + gap - self.clock()
            if (hidden or self._flush_cost > PACED_FLUSH) and wait > 0.002:
                self._paced = target.set_timer(wait, self.flush)
            else:
                target.call_later(self.flush)

    def flush_soon(self) -> None:
        """A flush at the next turn, unpaced (a height found wrong mid-frame)."""
        if not self.flush_pending:
            self.flush_pending = True
            self._target.call_later(self.flush)

    def streaming(self) -> bool:
        """A stream is coming in: a flush is due or one ended less than MAX_FLUSH_GAP ago."""
        return self.flush_pending or self.clock() - self._flushed_at < MAX_FLUSH_GAP

    def reader_idle(self) -> None:
        """The agent's output is drained: a flush paced to leave the loop time to read the agent, or a look at a
        flood waiting for its pause, comes now, as there is nothing left to read (not in the background)."""
        paced, self._paced = self._paced, None
        awaiting, self._awaiting_end = self._awaiting_end, False
        target = self._target
        if target.in_background:
            return
        if paced is not None and self.flush_pending:
            paced.stop()
            target.call_later(self.flush)
        elif awaiting and not self.flush_pending:
            self.flush_pending = True
            target.call_later(self.flush)
        elif self.held_timer is not None:
            # A flood parked or held until it pauses, and the pause's delivery carried no text (the store
            # delivered the burst's last lines before the reader found the pipe drained): looked at now, not
            # at the timer (PARK_POLL later, the end of a long answer with it).
            self.held_timer.stop()
            self._held_over()

    def flush(self, force: bool = False) -> None:
        """A flush: a slice cut, and drawn if it is time (`force`: never give way to a key, and the caller
        flushes again while a cycle is being cut, as `Transcript.visible_text` does)."""
        self._paced = None
        target = self._target
        if not self.flush_pending or not target.is_attached:  # (woken after its removal: nothing to draw)
            return
        wait = 0.0 if force else priority.input_wait()
        if wait:  # a key the user typed is on its way to the screen: it goes first (until it is drawn)
            priority.call_after_input(asyncio.get_running_loop(), wait, self.flush)
            return
        started = self.clock()
        try:
            self.flush_now(yielding=not force)
        finally:
            self._flushed_at = self.clock()
            self._chain_cost += self._flushed_at - started
            if target.cutting:
                # A cycle still being cut: its next slice after a turn of the loop (not call_later alone:
                # a widget's own queue never yields, keys would wait).
                self.flush_pending = True
                if not force:
                    asyncio.get_running_loop().call_soon(target.call_later, self.flush)
            else:
                # The cycle is cut and drawn: what arrived meanwhile is the next one, paced by what
                # this one cost (`schedule`), as one flush was before cycles were cut in slices.
                self._flush_cost, self._chain_cost = self._chain_cost, 0.0
                self.flush_pending = False
                if target.has_dirty and target.warming:
                    target.wait_warm()  # cut once markdown is imported, not looked at again meanwhile
                elif self.parked and self.reader_flooding():
                    self._park_timer()  # looked at again then, or as more text comes
                elif self.parked:
                    # The flood paused: its preview now if not drawn yet (`_held_over`), then the cut goes on once
                    # the screen shows it (the cut's slices back to back kept the frame from coming).
                    target.call_after_refresh(self._held_over)
                elif self._holding and not target.has_dirty:
                    pass  # drawn when the burst pauses or the gap is up (`_held`'s timer), not flushed again at once
                elif target.has_dirty or self.unsettled:
                    self.schedule()

    def flush_now(self, yielding: bool = False) -> None:
        """A slice of a cycle cut, then the transcript sized and drawn when the cycle is done, or every
        MAX_FLUSH_GAP while it goes on (`yielding`: unless a key arrives meanwhile, see Transcript.draw)."""
        target = self._target
        self.flush_pending = False
        self._holding = False
        # Following the end while the agent's lines keep coming: what is behind is cut once they are read, and
        # its end shows meanwhile (MarkdownStream.preview); cut first, it was shown after the time of reading
        # the agent plus that of parsing all of it.
        # When the flood pauses with a preview not drawn yet, that preview is drawn at once (not at the flood's
        # pace), parked once more, and the cut catches up after it is on screen (`ending`).
        shown_end = yielding and target.following and not target.in_background  # (hidden: nothing drawn)
        flooding = shown_end and self.reader_flooding()
        ending = shown_end and not flooding and self.preview_fresh
        self.parked = target.sync_slice(parking=flooding or ending)
        # While a cycle is cut, what is cut is drawn as often as a flood's flushes come; an open tail
        # not cut yet shows nothing until it is.
        if self.parked:
            if not ending and self.clock() - self._paced_since() < MAX_FLUSH_GAP:
                return  # a flood's preview: drawn at the flood's pace (`_park_timer` looks again)
        elif target.cutting and not self.preview_fresh and self.clock() - self.drawn_at < MAX_FLUSH_GAP:
            return
        self.unsettled = False
        if target.in_background:
            # Hidden (a tab in the background): a new virtual size would re-lay out the whole screen
            # on every batch and slow typing in the tab shown. Sized and drawn when shown again.
            self.background_stale = True
            return
        if yielding and priority.input_wait():
            self.unsettled = True
            return
        if yielding and not ending and self._held():
            self.unsettled = self._holding = True
            return
        target.set_heights()
        if target.draw(yielding):
            self.drawn_at = self.clock()
            self.preview_fresh = False
            if shown_end and not target.cutting and self.flooding is not None and not self.flooding():
                target.drawn_to_end()  # the end of what the agent sent so far, all of it read
        else:
            self.unsettled = True

    def reading(self) -> bool:
        """The reader has lines left to read (the reader's `flooding` alone)."""
        return self.flooding is not None and self.flooding()

    def reader_flooding(self) -> bool:
        """A flood: lines left to read, or a burst still being written."""
        return self.reading() or self.bursting()

    def bursting(self) -> bool:
        """The agent's lines are still coming: one came less than BURST_QUIET ago."""
        return self.activity is not None and self.clock() - self.activity() < BURST_QUIET

    def _park_timer(self) -> None:
        """Look at a parked flood again in PARK_POLL, or once the agent pauses (BURST_QUIET after its last line)
        if it is writing: its preview is then drawn at once (`_held_over`)."""
        if self.bursting():
            self._burst_timer(PARK_POLL)
        else:
            self._look_again(PARK_POLL)

    def _look_again(self, wait: float) -> None:
        """`_held_over` in `wait` seconds, unless it comes sooner already."""
        due = self.clock() + wait
        if self.held_timer is not None:
            if self._held_due <= due:
                return
            self.held_timer.stop()
        self._held_due = due
        self.held_timer = self._target.set_timer(max(wait, 0.001), self._held_over)

    def _held(self) -> bool:
        """Whether this flush's drawing waits: the store's delivery of the end of a burst read to its end is due
        (`end_due`: drawn now, the end came a frame and a flush later, as a cut's last slice drew in between; the
        delivery's ReaderIdle draws it, `reader_idle`), or the agent's lines are still coming (one came
        BURST_QUIET ago at most) and the transcript was drawn less than MAX_FLUSH_GAP ago. The flush due when
        the burst pauses (or the gap is up) is set here."""
        if self.end_due is not None and self.end_due():
            self._awaiting_end = True
            return True
        if not self.bursting():
            return False
        now = self.clock()
        since = self._paced_since()
        if now - since >= MAX_FLUSH_GAP:
            return False
        self._burst_timer(since + MAX_FLUSH_GAP - now)
        return True

    def _paced_since(self) -> float:
        """When a flood's pace (a draw every MAX_FLUSH_GAP at most) counts from: the last draw, or the start of
        the burst still being read if that is later. So a flood's first draw waits for it to pause too: drawn as
        the first lines came, a long answer spent the loop on a frame nobody could read, and its end came that
        much later. The burst counts while its lines keep coming (`reader_flooding`), though the reader found
        the pipe drained a moment ago (`reading` alone): from the last draw only, a flood's first draw came as
        the reader caught up with the agent for a moment (tests/test_reader_idle.py)."""
        since = self.drawn_at
        if self.burst_began is not None and self.reader_flooding():
            since = max(since, self.burst_began())
        return since

    def _burst_timer(self, within: float) -> None:
        """A flush once the burst pauses, or `within` seconds, whichever is first."""
        if self.activity is not None:
            self._look_again(min(BURST_QUIET - (self.clock() - self.activity()), within))

    def _held_over(self) -> None:
        self.held_timer = None
        target = self._target
        if (self.unsettled or target.has_dirty) and not self.flush_pending:
            if self.reader_flooding():
                self.schedule()
            else:
                # The agent paused and its lines are read: nothing to leave the loop time for, so not paced
                # by what the last flush cost; a preview not drawn yet is drawn now, before the cut catches up
                # (`flush_now`'s `ending`).
                self.flush_pending = True
                target.call_later(self.flush)
