"""A key's frame comes before the work that waits for it (rat_tui/priority.py): RatApp ends a key's window
(`input_done`) once the key is handled and the frame showing it is drawn, not before.

Typed while an agent floods the transcript, a character, then Backspace (a binding: the key bubbles back up
to the app before its action runs), then more characters. At each `input_done` the composer as last drawn
must be the composer as it is: the window used to end when the screen went idle with the composer's repaint
not yet posted to it (and, for Backspace, before the binding had run), the flood went on, and the echo came
a frame or more later.
"""

from __future__ import annotations

from pathlib import Path

from textual.screen import Screen

from rat_tui import priority
from rat_tui.ui.textual_ext.frames import FramesMixin

from .helpers.app import flood_app, start_flood, until, view


async def test_a_keys_window_ends_after_the_frame_that_shows_it(tmp_path: Path, monkeypatch) -> None:
    app, release = flood_app(tmp_path)
    drawn: list[str] = []  # the composer's text in each frame that drew it
    ends: list[tuple[int, str, str]] = []  # at each input_done: (key, its text now, its text as last drawn)

    def composer_text() -> str:
        return view(app).composer.text

    compositor_refresh, refresh_layout, input_done = Screen._compositor_refresh, Screen._refresh_layout, \
        priority.input_done

    def recording_refresh(self: Screen) -> None:
        if self is app.screen and (self in self._dirty_widgets or view(app).composer in self._dirty_widgets):
            drawn.append(composer_text())
        compositor_refresh(self)

    def recording_layout(self: Screen, *args, **kwargs) -> None:
        refresh_layout(self, *args, **kwargs)
        if self is app.screen:
            drawn.append(composer_text())

    def recording_done(seen: int) -> None:
        ends.append((seen, composer_text(), drawn[-1] if drawn else ""))
        input_done(seen)

    monkeypatch.setattr(Screen, "_compositor_refresh", recording_refresh)
    monkeypatch.setattr(Screen, "_refresh_layout", recording_layout)
    monkeypatch.setattr(priority, "input_done", recording_done)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            composer = (await start_flood(pilot, app)).composer
            typed = ["a", "b", "backspace", "c", "backspace", "backspace", "d", "e"]
            ours: list[int] = []
            for key in typed:
                priority.input_arrived()  # as the app's driver does, in its thread, as the key arrives
                serial = priority.serial()
                ours.append(serial)
                await pilot.press(key)
                await until(pilot, lambda serial=serial: any(end[0] == serial for end in ends),
                            f"the window of {key!r} to end")
            assert composer.text == "de"
            assert view(app).session.state.status != "ready", "the flood ended before the typing did"
            release.write_text("")
    finally:
        priority.reset()
    ends = [end for end in ends if end[0] in ours]  # (not an input event of another test's)
    for seen, now, shown in ends:
        assert shown == now, f"key {seen}: the work waiting went on with {now!r} typed but {shown!r} drawn"
    assert [end[0] for end in ends] == ours, "one end per key"


async def test_a_keys_frame_leaves_the_transcripts_new_lines_to_the_next_frame(tmp_path: Path, monkeypatch) -> None:
    """A key's frame draws what the key changed. The transcript's new lines (a flood's, a replay's) wait for the
    screen's next frame (17 ms at most), unless the transcript has the focus, where a key may be what changed
    them: drawn in the key's frame, they came before the key did (a key's frame took 31-38 ms in a stall log
    of load50000's replay). The user types during a flood first; then the transcript is made dirty as a key's
    frame comes: it is left to the next frame, which draws it; focused, it is drawn in the key's frame."""
    from rat_tui.ui.widgets.transcript import Transcript

    app, release = flood_app(tmp_path)
    in_key_frame = [False]
    drawn: list[bool] = []  # each time the transcript is drawn: inside a key's frame?
    draw_key, render_lines = FramesMixin.draw_key, Transcript.render_lines

    def recording_draw_key(screen: Screen, seen: int) -> None:
        in_key_frame[0] = True
        try:
            draw_key(screen, seen)
        finally:
            in_key_frame[0] = False

    def recording_render_lines(self: Transcript, crop):
        drawn.append(in_key_frame[0])
        return render_lines(self, crop)

    monkeypatch.setattr(FramesMixin, "draw_key", staticmethod(recording_draw_key))
    monkeypatch.setattr(Transcript, "render_lines", recording_render_lines)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            tab = await start_flood(pilot, app)
            composer, transcript = tab.composer, tab.transcript
            for key in "typed during the flood":
                priority.input_arrived()  # as the app's driver does, in its thread, as the key arrives
                await pilot.press(key if key != " " else "space")
            assert composer.text == "typed during the flood"
            assert view(app).session.state.status != "ready", "the flood ended before the typing did"
            # The transcript dirty as a key's frame comes (while keys arrive its flushes give way, so it is set
            # here): left to the next frame, which draws it.
            release.write_text("")
            await until(pilot, lambda: view(app).session.state.status == "ready", "the turn's end")
            await pilot.pause()
            screen = app.screen
            before = len(drawn)
            transcript.refresh()
            screen._dirty_widgets.add(transcript)  # (what the screen does once it hears: Screen._on_update)
            FramesMixin.draw_key(screen, priority.serial())
            assert drawn[before:] == [], "the key's frame drew the transcript"
            await until(pilot, lambda: len(drawn) > before, "the transcript drawn at the next frame")
            # Its scrollbar moved too (it follows the end): drawn over the transcript's region, the bar would
            # have the compositor render the transcript's rows under it. Left to the next frame as well.
            await pilot.pause()
            before = len(drawn)
            bar = transcript.vertical_scrollbar
            transcript.refresh()
            bar.refresh()
            screen._dirty_widgets.update((transcript, bar))
            FramesMixin.draw_key(screen, priority.serial())
            assert drawn[before:] == [], "the key's frame drew the transcript under its scrollbar"
            await until(pilot, lambda: len(drawn) > before, "the transcript and its bar drawn at the next frame")
            # Focused, the transcript is drawn in the key's frame.
            transcript.focus()
            await pilot.pause()
            before = len(drawn)
            transcript.refresh()
            screen._dirty_widgets.add(transcript)
            FramesMixin.draw_key(screen, priority.serial())
            assert drawn[before:] == [True]
    finally:
        priority.reset()


async def test_the_screens_frames_wait_for_a_key_on_its_way(tmp_path: Path, monkeypatch) -> None:
    """A tick of the screen's timer that comes as a key arrives, before the app has seen it, draws nothing
    (FramedScreen._on_timer_update, as FrameScheduler.draws_now says): the key's own frame comes first, the agent's new lines at a tick after it
    (in traces of load50000's replay, the tick's frame took 20-29 ms and the key waited for it). A key never
    drawn holds the screen's frames KEY_FRAME_HOLD at most; a click does not hold them."""
    from rat_tui.ui.tabs import main_screen
    from rat_tui.ui.textual_ext import frames as frame_scheduler

    app, release = flood_app(tmp_path)
    frames: list[tuple[float, str]] = []  # each frame of the screen shown: (when, the composer's text then)
    compositor_refresh = Screen._compositor_refresh

    def recording_refresh(self: Screen) -> None:
        if self is app.screen:
            frames.append((priority.clock(), view(app).composer.text))
        compositor_refresh(self)

    monkeypatch.setattr(Screen, "_compositor_refresh", recording_refresh)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            transcript = (await start_flood(pilot, app)).transcript
            screen = app.screen
            assert isinstance(screen, main_screen.MainScreen)

            # A key arrives; the screen's timer ticks with the transcript's new lines before the app sees the key.
            # (The hold made long: only the key's own frame may end it, however slow this machine.)
            monkeypatch.setattr(frame_scheduler, "KEY_FRAME_HOLD", 600.0)
            priority.input_arrived(priority.KEY_WINDOW, key=True)  # as the app's driver does, as the key arrives
            before = len(frames)
            transcript.refresh()
            screen._dirty_widgets.add(transcript)
            screen._on_timer_update()
            assert len(frames) == before, "the timer's tick drew before the key"
            await pilot.press("x")
            await until(pilot, lambda: len(frames) > before, "the key's frame")
            assert frames[before][1] == "x", "the first frame after the key arrived does not show it"
            await until(pilot, lambda: priority.input_wait() == 0, "the key's window to end")
            monkeypatch.setattr(frame_scheduler, "KEY_FRAME_HOLD", 0.05)

            # A key that never reaches the screen (nothing calls input_done): the ticks draw once the hold is over.
            arrived = priority.clock()
            priority.input_arrived(priority.KEY_WINDOW, key=True)
            before = len(frames)
            transcript.refresh()
            await until(pilot, lambda: len(frames) > before, "a frame once the hold is over")
            assert frames[before][0] - arrived >= frame_scheduler.KEY_FRAME_HOLD
            priority.input_done(priority.serial())

            # A click on its way does not hold the timer's frames.
            priority.input_arrived()
            before = len(frames)
            transcript.refresh()
            screen._dirty_widgets.add(transcript)
            screen._on_timer_update()
            assert len(frames) == before + 1, "a click held the timer's frame"
            priority.input_done(priority.serial())
            assert view(app).session.state.status != "ready", "the flood ended before the test did"
            release.write_text("")
    finally:
        priority.reset()
