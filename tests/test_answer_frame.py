"""What the agent sent goes to the screen once it is all read (RatApp.draw_now), not at the screen timer's next
tick: resumed after a pause, Textual's timer ticked 17-33 ms after the frame before, and an instant answer
showed 35 ms after Enter.

The screen's timer is stopped for good once the prompt is sent (its `resume` does nothing): whatever is drawn
after that is drawn by draw_now. The test waits on the frames themselves (no Pilot pause, which draws one).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rat_tui.app import RatApp
from rat_tui.ui.textual_ext import frames as frame_scheduler
from rat_tui.ui.widgets.transcript import Transcript

from .helpers.app import scripted, send, until, view


async def frames_until(condition, what: str, timeout: float = 30.0) -> None:
    """Wait, giving the loop its turns and drawing nothing itself, until `condition()`."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.005)


async def test_an_answer_is_drawn_once_read_without_the_screen_s_timer(tmp_path: Path, monkeypatch) -> None:
    release = tmp_path / "release"
    # An answer in 40 pieces a few ms apart: each is all the agent has sent when it is read.
    pieces = [step for n in range(40) for step in ({"chunk": f"piece {n} "}, {"sleep": 0.003})]
    script = {"turns": [[{"wait_file": str(release)}, *pieces, {"chunk": "THE-END"}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    shown: list[str] = []  # the transcript's lines as each frame rendered them
    frames: list[float] = []  # when each frame went to the terminal
    render_lines, display = Transcript.render_lines, RatApp._display

    def rendering(self, crop):
        strips = render_lines(self, crop)
        shown.extend(strip.text for strip in strips)
        return strips

    def displaying(self, screen, renderable) -> None:
        if renderable is not None:
            frames.append(time.monotonic())
        display(self, screen, renderable)

    monkeypatch.setattr(Transcript, "render_lines", rendering)
    monkeypatch.setattr(RatApp, "_display", displaying)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        await send(pilot, "answer me")
        await until(pilot, lambda: view(app).session.state.status == "working", "the turn to start")
        timer = app.screen._update_timer
        timer.pause()
        timer.resume = lambda: None  # the screen's timer never ticks again
        frames.clear()
        release.touch()
        await frames_until(lambda: any("THE-END" in line for line in shown), "the answer's end on screen")
        assert any("piece 20" in line for line in shown)
        # Asked for again and again right after a frame, the next comes once, DRAW_NOW_GAP after that frame.
        transcript = view(app).transcript
        await frames_until(lambda: time.monotonic() - frames[-1] > 0.05, "the screen to be still")
        drawn = len(frames)
        transcript.refresh()
        app.draw_now(transcript)
        await frames_until(lambda: len(frames) > drawn, "the frame asked for")
        for _ in range(5):
            transcript.refresh()
            app.draw_now(transcript)
        await frames_until(lambda: len(frames) > drawn + 1, "the frame asked for after it")
        await frames_until(lambda: app.frames.end_due is None, "nothing more to draw")
        assert len(frames) == drawn + 2
        assert frames[-1] - frames[-2] >= frame_scheduler.DRAW_NOW_GAP - 0.001
        # The gap counts from the last frame draw_now asked for, not from any: asked for right after a frame
        # of the screen's own (the prompt's, before an instant answer), the frame is not put off.
        await frames_until(lambda: time.monotonic() - frames[-1] > 2 * frame_scheduler.DRAW_NOW_GAP, "the gap to pass")
        transcript.refresh()
        app.screen._dirty_widgets.add(transcript)
        app.screen._on_timer_update()  # a frame of the screen's own, as its timer draws
        assert len(frames) == drawn + 3
        transcript.refresh()
        app.draw_now(transcript)
        assert app.frames.end_due is None, "the frame was put off"
        await frames_until(lambda: len(frames) > drawn + 3, "the frame asked for after the screen's own")
