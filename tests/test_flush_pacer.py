"""FlushPacer (ui/flush_pacer.py) on its own: when the transcript's flushes come and whether they draw, driven
with a fake clock and a fake transcript (the pacer's collaborator through its FlushTarget protocol: the real
one is covered by test_transcript_widget, test_reader_idle, test_steady_stream and the others)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from rat_tui import priority
from rat_tui.ui.flush_pacer import (
    BURST_QUIET,
    FLUSH_SPACING,
    HIDDEN_FLUSH_GAP,
    MAX_FLUSH_GAP,
    PARK_POLL,
    FlushPacer,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeTimer:
    def __init__(self, due: float, callback: Callable[[], object]) -> None:
        self.due = due
        self.callback = callback
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


class Target:
    """A transcript as the pacer sees it: text arrives (`dirty`), a slice cuts it, a draw costs `draw_cost`."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.is_mounted = True
        self.is_attached = True
        self.in_background = False
        self.following = True
        self.warming = False
        self.dirty = False
        self.slices_left = 0  # slices a cycle still needs after the one being cut
        self.park = False  # a slice asked to park leaves what it has to cut (a flood's preview)
        self.draw_cost = 0.0
        self.slices: list[bool] = []  # each slice's `parking`
        self.draws: list[float] = []  # when each draw happened
        self.soon: list[Callable[[], object]] = []
        self.timers: list[FakeTimer] = []
        self.after_refresh: list[Callable[[], object]] = []
        self.to_end = 0

    @property
    def has_dirty(self) -> bool:
        return self.dirty

    @property
    def cutting(self) -> bool:
        return self.slices_left > 0

    def sync_slice(self, parking: bool) -> bool:
        self.slices.append(parking)
        if parking and self.park:
            return True
        if self.slices_left:
            self.slices_left -= 1
        self.dirty = False
        return False

    def set_heights(self) -> None:
        pass

    def draw(self, yielding: bool) -> bool:
        self.clock.now += self.draw_cost
        self.draws.append(self.clock.now)
        return True

    def wait_warm(self) -> None:
        pass

    def drawn_to_end(self) -> None:
        self.to_end += 1

    def call_later(self, callback: Callable[[], object]) -> bool:
        self.soon.append(callback)
        return True

    def set_timer(self, delay: float, callback: Callable[[], object]) -> FakeTimer:
        timer = FakeTimer(self.clock.now + delay, callback)
        self.timers.append(timer)
        return timer

    def call_after_refresh(self, callback: Callable[[], object]) -> bool:
        self.after_refresh.append(callback)
        return True

    # -- driving it --------------------------------------------------------------------------

    def run_soon(self) -> int:
        """Run what was queued for the next turn (and what that queues), as the loop would."""
        ran = 0
        while self.soon:
            callback = self.soon.pop(0)
            callback()
            ran += 1
        return ran

    def live_timers(self) -> list[FakeTimer]:
        return [timer for timer in self.timers if not timer.stopped]

    def fire_next_timer(self) -> FakeTimer:
        timer = min(self.live_timers(), key=lambda t: t.due)
        timer.stopped = True
        self.clock.now = max(self.clock.now, timer.due)
        timer.callback()
        return timer


class Reader:
    """The reader's timing as ReaderActivity gives it."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.last = 0.0
        self.began = 0.0
        self.reading = False
        self.due = False

    def line(self) -> None:
        if self.clock.now - self.last >= BURST_QUIET:
            self.began = self.clock.now
        self.last = self.clock.now

    def burst_last(self) -> float:
        return self.last

    def flooding(self) -> bool:
        return self.reading or self.due

    def burst_began(self) -> float:
        return self.began

    def end_due(self) -> bool:
        return self.due


@pytest.fixture
def setup() -> tuple[Clock, Target, FlushPacer, Reader]:
    priority.reset()
    clock = Clock()
    target = Target(clock)
    pacer = FlushPacer(target, clock=clock)
    reader = Reader(clock)
    pacer.follow(reader)
    return clock, target, pacer, reader


def test_a_cheap_flush_comes_at_once_and_a_costly_one_is_paced_by_its_cost(setup) -> None:
    clock, target, pacer, _ = setup
    target.dirty = True
    pacer.schedule()
    assert len(target.soon) == 1 and not target.timers  # nothing drawn yet: the flush is on its way
    pacer.schedule()
    assert len(target.soon) == 1  # one flush pending at a time
    target.draw_cost = 0.001
    assert target.run_soon() == 1 and len(target.draws) == 1 and not pacer.flush_pending
    target.dirty = True
    pacer.schedule()
    assert len(target.soon) == 1 and not target.timers  # cheap: at once again
    target.draw_cost = 0.02  # a flood's screenful of new markdown
    target.run_soon()
    target.dirty = True
    pacer.schedule()
    assert not target.soon and len(target.timers) == 1
    assert target.timers[0].due == pytest.approx(clock.now + FLUSH_SPACING * 0.02)
    target.draw_cost = 0.05  # spaced by its cost, MAX_FLUSH_GAP at most
    target.fire_next_timer()
    assert len(target.draws) == 3
    target.dirty = True
    pacer.schedule()
    assert target.live_timers()[0].due == pytest.approx(clock.now + MAX_FLUSH_GAP)


def test_the_reader_draining_the_agent_cuts_a_paced_flush_short(setup) -> None:
    clock, target, pacer, _ = setup
    target.draw_cost = 0.05
    target.dirty = True
    pacer.schedule()
    target.run_soon()
    target.dirty = True
    pacer.schedule()
    timer = target.live_timers()[0]
    pacer.reader_idle()  # nothing left to read: the loop has time to draw now
    assert timer.stopped and len(target.soon) == 1
    target.run_soon()
    assert len(target.draws) == 2 and clock.now < timer.due


def test_a_burst_is_drawn_at_most_every_max_flush_gap_from_its_start_until_it_pauses(setup) -> None:
    clock, target, pacer, reader = setup
    step = BURST_QUIET / 4  # the agent writes a line this often: one burst
    target.dirty = True
    reader.line()
    pacer.schedule()
    target.run_soon()
    assert not target.draws and pacer.unsettled  # its first draw waits for the burst too
    start = reader.began
    while clock.now < start + 3 * MAX_FLUSH_GAP:
        # The pacer's next look: its timer, or a flush the text arriving asked for.
        due = min((timer.due for timer in target.live_timers()), default=clock.now + step)
        clock.now = min(clock.now + step, due)
        reader.line()
        target.dirty = True
        pacer.schedule()
        target.run_soon()
        for timer in target.live_timers():
            if timer.due <= clock.now:
                timer.stopped = True
                timer.callback()
                target.run_soon()
    assert target.draws, "drawn while the burst went on"
    assert target.draws[0] >= start + MAX_FLUSH_GAP
    gaps = [b - a for a, b in zip(target.draws, target.draws[1:])]
    assert all(gap >= MAX_FLUSH_GAP - 1e-9 for gap in gaps), gaps
    drawn = len(target.draws)
    # The agent pauses: the flush its pause is due at draws what came last, without waiting for the gap.
    target.dirty = True
    pacer.schedule()
    target.run_soon()
    timer = target.fire_next_timer()
    target.run_soon()
    assert timer.due <= reader.last + BURST_QUIET + 1e-9
    assert len(target.draws) == drawn + 1 and target.draws[-1] - target.draws[-2] < MAX_FLUSH_GAP


def test_the_end_of_a_burst_read_to_its_end_is_drawn_by_its_delivery(setup) -> None:
    clock, target, pacer, reader = setup
    reader.due = True  # the store has yet to deliver the burst's end
    target.dirty = True
    pacer.schedule()
    target.run_soon()
    assert not target.draws and pacer.unsettled and not target.live_timers()  # no timer: the delivery draws
    reader.due = False
    pacer.reader_idle()  # the delivery's ReaderIdle
    target.run_soon()
    assert len(target.draws) == 1 and target.to_end == 1  # all the agent sent is read and drawn


def test_a_flood_parks_what_it_has_to_cut_and_draws_its_preview_once_it_pauses(setup) -> None:
    clock, target, pacer, reader = setup
    reader.reading = True  # lines the agent wrote wait to be read
    target.park = True
    pacer.drawn_at = clock.now  # drawn just now: the flood's next draw waits for its pace
    target.dirty = True
    pacer.schedule()
    target.run_soon()
    assert target.slices == [True] and pacer.parked and not target.draws
    assert [timer.due for timer in target.live_timers()] == [pytest.approx(clock.now + PARK_POLL)]
    reader.reading = False
    pacer.preview_fresh = True  # the slice showed the flood's end as its preview
    pacer.reader_idle()  # drained: looked at now, not at the poll
    assert not target.live_timers()
    target.run_soon()
    assert len(target.draws) == 1  # the preview drawn at once, not at the flood's pace


def test_a_tab_in_the_background_is_cut_seldom_and_drawn_once_shown(setup) -> None:
    clock, target, pacer, _ = setup
    target.in_background = True
    target.dirty = True
    pacer.schedule()
    target.run_soon()
    assert target.slices and not target.draws and pacer.background_stale
    clock.now += 0.01
    target.dirty = True
    pacer.schedule()
    assert not target.soon and target.live_timers()[0].due == pytest.approx(clock.now - 0.01 + HIDDEN_FLUSH_GAP)
    pacer.reader_idle()  # the reader's pauses do not hurry a tab nobody sees
    assert target.live_timers() and not target.soon


async def test_a_key_on_its_way_to_the_screen_goes_before_a_flush(setup) -> None:
    clock, target, pacer, _ = setup
    try:
        priority.input_arrived(key=True)
        target.dirty = True
        pacer.schedule()
        target.run_soon()
        assert not target.slices and pacer.flush_pending  # waits for the key
        priority.input_done(priority.serial())  # the key's frame is drawn
        for _ in range(200):
            if target.soon or target.draws:
                break
            await asyncio.sleep(0.005)
        target.run_soon()
        assert target.slices and len(target.draws) == 1
    finally:
        priority.reset()


async def test_a_cycle_cut_in_slices_draws_every_max_flush_gap_while_it_goes_on(setup) -> None:
    clock, target, pacer, _ = setup
    pacer.drawn_at = clock.now
    target.slices_left = 4
    target.dirty = True
    pacer.flush_pending = True
    pacer.flush()
    assert len(target.slices) == 1 and not target.draws and pacer.flush_pending  # drawn just now: cut on
    await asyncio.sleep(0)  # the next slice after a turn of the loop (keys go between)
    clock.now += MAX_FLUSH_GAP
    assert target.run_soon() == 1
    assert len(target.slices) == 2 and len(target.draws) == 1  # the gap is up: what is cut so far is drawn
    await asyncio.sleep(0)
    target.run_soon()
    assert len(target.slices) == 3 and len(target.draws) == 1  # drawn just now again
    await asyncio.sleep(0)
    target.run_soon()
    assert not target.cutting and len(target.draws) == 2 and not pacer.flush_pending  # the cycle's end
