"""The end of a burst is drawn at once: when the agent's output is drained (everything it wrote so far is
routed and the next read would wait), the reader says so (AgentProcess.lines' `on_idle`), the store delivers
within a frame instead of at a flood's pace and ends the batch with ReaderIdle, and the transcript draws
instead of waiting out its flood pacing (SessionStore.reader_idle, Transcript.reader_idle)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.protocol.transport import AgentProcess
from rat_tui.state import store as store_module
from rat_tui.state.models import EntryAdded, ReaderIdle
from rat_tui.state.store import SessionStore
from rat_tui.ui.widgets import transcript as transcript_module

from .helpers.app import delivered, scripted, screen_text, send, transcript_flushed, until, view
from .helpers.harness import wait_for

BURST = 500
# A burst of BURST lines in one write, then one more line once a file exists (the test creates it).
AGENT = """import os, sys, time
sys.stdout.write("".join('{"n": %d}\\n' % i for i in range(BURST)))
sys.stdout.flush()
while not os.path.exists(GO):
    time.sleep(0.01)
sys.stdout.write('{"n": "last"}\\n')
sys.stdout.flush()
sys.stdin.read()
"""


async def test_the_reader_says_it_is_idle_once_per_burst_after_its_last_line(tmp_path: Path) -> None:
    go = tmp_path / "go"
    proc = AgentProcess([sys.executable, "-c", f"BURST = {BURST}\nGO = {str(go)!r}\n" + AGENT], cwd=tmp_path)
    await proc.start()
    lines: list[bytes] = []
    idle_after: list[int] = []  # how many lines had been handed out each time the reader said it was idle

    async def read() -> None:
        async for line in proc.lines(on_idle=lambda: idle_after.append(len(lines))):
            lines.append(line)

    reader = asyncio.create_task(read())
    try:
        await wait_for(lambda: idle_after != [], what="the reader idle after the burst")
        assert idle_after == [BURST]  # once, after the burst's last line
        go.touch()
        await wait_for(lambda: len(idle_after) == 2, what="the reader idle after the last line")
        assert idle_after == [BURST, BURST + 1]
        assert lines[-1] == b'{"n": "last"}'
    finally:
        reader.cancel()
        await proc.close()


async def test_the_store_delivers_a_flood_s_end_within_a_frame_marked_idle(monkeypatch) -> None:
    monkeypatch.setattr(store_module, "FLOOD_SECONDS", 3600.0)  # a flood's pace: never, in this test
    store = SessionStore()
    batches: list[list] = []
    store.subscribe(batches.append)
    store._last_batch = store_module.FLOOD_BATCH  # the last delivery was a flood's
    store.apply_update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "the end"}})
    assert batches == [] and store._pending  # (no turn of the loop yet)
    store.reader_idle()
    await wait_for(lambda: batches != [], what="the delivery after the reader went idle")
    (batch,) = batches
    assert [type(change) for change in batch] == [EntryAdded, ReaderIdle]
    assert batch[0].entry.text == "the end"
    store.reader_idle()  # nothing came since: no delivery, no second mark
    store.flush()
    assert len(batches) == 1


@pytest.mark.slow
async def test_a_flood_s_end_shows_without_waiting_for_the_flood_pacing(tmp_path: Path, monkeypatch) -> None:
    """A real agent floods 2,000 chunks and keeps its turn open. With the store's and the transcript's flood
    pacing made endless, the end still shows: the reader went idle, and that drew it."""
    monkeypatch.setattr(store_module, "FLOOD_SECONDS", 3600.0)
    monkeypatch.setattr(store_module, "FLOOD_BATCH", 0)  # every delivery paced as a flood's
    monkeypatch.setattr(transcript_module, "PACED_FLUSH", 0.0)  # every flush paced ...
    monkeypatch.setattr(transcript_module, "FLUSH_SPACING", 1e6)  # ... for ever
    monkeypatch.setattr(transcript_module, "MAX_FLUSH_GAP", 3600.0)
    release = tmp_path / "release"
    script = {"turns": [[{"chunk": "word ", "repeat": 1999}, {"chunk": "THE-END-OF-THE-FLOOD"},
                         {"wait_file": str(release)}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await send(pilot, "flood")
        transcript = view(app).transcript
        await until(pilot, lambda: "THE-END-OF-THE-FLOOD" in screen_text(app), "the flood's end on screen", timeout=30)
        assert delivered(session) and transcript_flushed(transcript)
        assert session.state.status == "working"  # the turn is still open: nothing but the idle reader drew it
        release.touch()


@pytest.mark.slow
async def test_a_burst_is_drawn_at_most_every_max_flush_gap_until_it_pauses(tmp_path: Path) -> None:
    """While the agent's lines keep coming, the transcript draws at most every MAX_FLUSH_GAP (each draw of a
    2,000-chunk answer renders a screenful that scrolls away unread, and composites the screen); once they
    pause for BURST_QUIET, what came is drawn. Each draw's time is checked against the times the lines
    arrived, whatever the machine's speed, while the user types."""
    script = {"turns": [[{"chunk": "word ", "repeat": 4000}, {"sleep": 0.3}, {"chunk": "THE-END"}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        connection = session.connection
        assert connection is not None
        arrived: list[float] = []
        route = connection._route_line

        def timed(line: bytes) -> None:
            route(line)
            arrived.append(connection.last_inbound)

        connection._route_line = timed  # type: ignore[method-assign]
        transcript = view(app).transcript
        draws: list[float] = []
        settle = transcript._settle

        def counted(*args, **kwargs) -> bool:
            drawn = settle(*args, **kwargs)
            if drawn and kwargs.get("yielding"):
                draws.append(time.monotonic())
            return drawn

        transcript._settle = counted  # type: ignore[method-assign]
        await send(pilot, "flood")
        await pilot.press(*"typed meanwhile")
        await until(pilot, lambda: "THE-END" in screen_text(app), "the end on screen", timeout=30)
        assert view(app).composer.text == "typed meanwhile"
        burst = [t for t in arrived if t < arrived[-1] - 0.2]  # the 4,000 chunks (not the end, 0.3 s later)
        during = [t for t in draws if burst[0] < t < burst[-1]]
        assert during, "nothing drawn while the burst came"
        previous = None
        for t in during:
            quiet = not [a for a in burst if t - transcript_module.BURST_QUIET < a <= t]
            assert quiet or previous is None or t - previous >= transcript_module.MAX_FLUSH_GAP - 0.002, \
                f"drawn {1000 * (t - previous):.0f} ms after the last draw while the lines kept coming"
            previous = t
        assert [t for t in draws if t > burst[-1]], "the burst's end was not drawn once it paused"
