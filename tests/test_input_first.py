"""Input first (protocol/priority.py): while a key the user typed makes its way to the screen, reading the
agents, delivering updates and cutting the transcript wait for it. The priority clock is frozen in these
tests: a key's window lasts until the test moves the clock on, so what waits has to wait however slow
the machine is, and what must happen after it happens once the clock moves."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Input

from rat_tui.app import input_first
from rat_tui.protocol import priority
from rat_tui.protocol.transport import AgentProcess
from rat_tui.state.reducer import add_notice
from rat_tui.state.store import SessionStore
from rat_tui.ui.widgets.transcript import Transcript

LINES = 20000
FLOOD = f"import sys\nfor i in range({LINES}): sys.stdout.write('{{\"n\": %d}}\\n' % i)\n"


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(priority, "clock", lambda: now[0])
    priority.reset()
    yield now
    priority.reset()


class TypingApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()
        yield Input()


async def test_an_agent_flooding_is_not_read_while_a_key_is_on_its_way(tmp_path, clock) -> None:
    """A real agent floods 20,000 lines; a key arrives (as the driver's thread says): the reader reads
    nothing more until the key has been handled, then, the window over, reads every line."""
    app = TypingApp()
    async with app.run_test(size=(80, 24)) as pilot:
        field = app.query_one(Input)
        field.focus()
        proc = AgentProcess([sys.executable, "-c", FLOOD], cwd=tmp_path)
        await proc.start()
        lines: list[bytes] = []

        async def read() -> None:
            async for line in proc.lines():
                lines.append(line)

        reader = asyncio.create_task(read())
        while len(lines) < 100:  # the flood is on
            assert not reader.done(), "the agent wrote nothing"
            await asyncio.sleep(0)
        priority.input_arrived()
        at_key = len(lines)
        read_when_handled: list[int] = []
        field.watch_value = lambda value: read_when_handled.append(len(lines))  # type: ignore[method-assign]
        await pilot.press("x")
        assert field.value == "x"
        # At most the line a read in progress had already handed out when the key came.
        assert read_when_handled[0] <= at_key + 1, (at_key, read_when_handled)
        clock[0] += priority.INPUT_WINDOW  # the key is drawn, the window over
        await reader
        assert len(lines) == LINES
        await proc.wait()


async def test_a_delivery_and_a_transcript_flush_wait_for_a_key(clock) -> None:
    """An update arrives just after a key: the store delivers it, and the transcript cuts and draws it,
    only once the key's window is over (the key is handled first)."""
    app = TypingApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        field = app.query_one(Input)
        field.focus()
        store = SessionStore()
        delivered: list[int] = []
        store.subscribe(lambda batch: delivered.append(len(batch)))
        await pilot.pause()
        priority.input_arrived()
        store.dispatch(add_notice, "info", "after the key")
        transcript.add_entry("a1", "agent")
        transcript.append_text("a1", "## Title\n\nA paragraph.\n\n")
        seen: list[tuple[bool, bool]] = []
        field.watch_value = lambda value: seen.append(  # type: ignore[method-assign]
            (bool(delivered), transcript._flush_pending))
        await pilot.press("x")
        assert seen == [(False, True)], "the delivery or the flush went before the key"
        clock[0] += priority.INPUT_WINDOW
        while not delivered or transcript._flush_pending:
            await pilot.pause()
        assert "A paragraph." in transcript.visible_text()


async def test_the_app_driver_marks_input_events_in_its_thread(clock) -> None:
    """The app's driver (any of Textual's, wrapped by `input_first`) marks a key or a click as it arrives,
    from its own thread; a mouse moving is not input to wait for."""
    from textual.drivers.headless_driver import HeadlessDriver

    driver_class = input_first(HeadlessDriver)
    assert input_first(HeadlessDriver) is driver_class and issubclass(driver_class, HeadlessDriver)
    app = TypingApp()
    async with app.run_test(size=(80, 24)) as pilot:
        driver = driver_class(app, debug=False, mouse=False, size=(80, 24))

        async def from_thread(event: events.Event) -> None:
            thread = threading.Thread(target=driver.process_message, args=(event,))
            thread.start()
            thread.join()
            await pilot.pause()  # (the event goes on to the app)

        await from_thread(events.MouseMove(None, 1, 1, 0, 0, 0, False, False, False))
        assert priority.input_wait() == 0
        await from_thread(events.Key("x", "x"))
        assert priority.input_wait() == pytest.approx(priority.INPUT_WINDOW)
        clock[0] += priority.INPUT_WINDOW
        assert priority.input_wait() == 0
        await from_thread(events.MouseDown(None, 1, 1, 0, 0, 1, False, False, False))
        assert priority.input_wait() == pytest.approx(priority.INPUT_WINDOW)
