"""An answer that streams steadily, a line every few ms, is drawn as it comes, not only when the agent pauses.

The transcript holds its drawing while the agent's lines keep coming (one came less than BURST_QUIET, 8 ms, ago)
and draws at least every MAX_FLUSH_GAP (0.1 s), counted from its last draw or from the start of the burst if
later. The burst's start was the first line since the reader last found the pipe drained: an agent writing a
line every few ms is drained after each, so the burst began anew at every line, the gap never came, and the
transcript stood still until the agent paused (1.5 s of a 1.7 s stream, headless). A burst now begins after a
pause of BURST_GAP (router).

Typed the way the app gets it: the prompt's Enter goes through the driver, and the test polls with plain sleeps
(Pilot's `press` and `pause` wait for the app to be idle, or draw a frame themselves).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import events

from rat_tui.app import RatApp

from .helpers.app import scripted, until, view

LINES = 700  # a line every 6 ms or so (two rows each): 4 s of streaming at least


async def test_a_steady_stream_is_drawn_while_it_streams(tmp_path: Path) -> None:
    release = tmp_path / "release"
    stream = [step for n in range(LINES) for step in ({"chunk": f"line {n:04}\n\n"}, {"sleep": 0.006})]
    app = RatApp(scripted({"turns": [[*stream, {"wait_file": str(release)}, {"chunk": "END"}]]}, tmp_path), tmp_path)
    last = f"line {LINES - 1:04}"
    heights: set[int] = set()  # the transcript's heights in the frames drawn before the stream's last line came

    async with app.run_test(size=(100, 30)) as pilot:
        tab = view(app)
        await until(pilot, lambda: tab.session.state.status == "ready", "ready")

        def streamed() -> str:
            return "".join(getattr(entry, "text", "") or "" for entry in tab.session.state.entries)

        display = app._display

        def recording(screen, renderable) -> None:
            if renderable is not None and last not in streamed():
                heights.add(tab.transcript.virtual_size.height)
            display(screen, renderable)

        app._display = recording  # type: ignore[method-assign]
        tab.composer.insert("stream please")
        enter = events.Key("enter", "\r")
        enter.set_sender(app)
        app._driver.send_message(enter)
        for _ in range(3000):  # (30 s at most)
            if last in streamed():
                break
            await asyncio.sleep(0.01)
        assert last in streamed()
        # Drawn anew as it came, at least every MAX_FLUSH_GAP (about 50 rows of it): never a quarter of the stream
        # (500 rows, a second) at once. Before, the first rows were drawn, then nothing until the stream paused.
        drawn = sorted(heights)
        assert max(b - a for a, b in zip(drawn, drawn[1:])) < LINES // 2, drawn
        release.touch()
        await until(pilot, lambda: tab.session.state.status == "ready", "the turn's end")
