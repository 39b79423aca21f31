"""Input first (rat_tui/priority.py): while a key the user typed makes its way to the screen, reading the
agents, delivering updates and cutting the transcript wait for it. The priority clock is frozen in these
tests: a key's window lasts until the test moves the clock on, so what waits has to wait however slow
the machine is, and what must happen after it happens once the clock moves."""

from __future__ import annotations

import asyncio
import builtins
import contextvars
import gc
import importlib
import io
import sys
import threading
import time

import pytest
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Input

from rat_tui.ui.textual_ext.driver import OutputWatch, input_first
from rat_tui import priority
from rat_tui.protocol.transport import AgentProcess, _reading
from rat_tui.state.reducer import add_notice
from rat_tui.state.store import SessionStore
from rat_tui.ui.widgets.transcript import Transcript

from .helpers.app import transcript_flushed, until

LINES = 20000
FLOOD = f"import sys\nfor i in range({LINES}): sys.stdout.write('{{\"n\": %d}}\\n' % i)\n"


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(priority, "clock", lambda: now[0])
    priority.reset()
    yield now
    priority.reset()


async def flooding(tmp_path, script: str = FLOOD) -> tuple[AgentProcess, list[bytes], asyncio.Task]:
    """A real agent writing lines (LINES of them), read by a task into a list: once the flood is on (100 lines
    in)."""
    proc = AgentProcess([sys.executable, "-c", script], cwd=tmp_path)
    await proc.start()
    lines: list[bytes] = []
    reader = asyncio.create_task(proc.read_lines(lines.append))
    while len(lines) < 100:
        assert not reader.done(), "the agent wrote nothing"
        await asyncio.sleep(0)
    return proc, lines, reader


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
        proc, lines, reader = await flooding(tmp_path)
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


# 5,000 lines (65 KB): less than the stream's own flow control lets it buffer (128 KiB), so only the
# reader's pause for a key can stop the pipe being read; then the agent waits for its stdin to close.
SMALL_LINES = 5000
# Half the lines, then (once a line comes on its stdin) the other half: that half comes while the key is on its
# way. (Written at once, all of it could be read before the key arrived, and then nothing came to be paused
# for: the reader waits for data outside the key's checks. One clean-clone run in four timed out so.)
SMALL_FLOOD = (f"import sys\nfor i in range({SMALL_LINES}):\n    sys.stdout.write('{{\"n\": %d}}\\n' % i)\n"
               f"    if i == {SMALL_LINES // 2 - 1}: sys.stdout.flush(); sys.stdin.readline()\n"
               "sys.stdout.flush()\nsys.stdin.read()\n")


async def test_an_agent_s_pipe_is_not_read_while_a_key_is_on_its_way(tmp_path, clock) -> None:
    """While the reader waits for a key, asyncio no longer reads the agent's pipe for it either (the agent
    blocks once the pipe is full, leaving the CPU to the key); once the key is drawn, reading goes on and
    every line arrives."""
    proc, lines, reader = await flooding(tmp_path, SMALL_FLOOD)
    pipe = proc._proc.stdout._transport
    priority.input_arrived(priority.KEY_WINDOW)
    await proc.write_line(b"the other half")  # (it comes while the key is on its way)
    await until_true(lambda: not _reading(pipe), "the pipe to be paused")
    # Paused for the key: not closed (the agent is still there), not by the stream (it cannot fill up).
    assert not pipe.is_closing() and not proc._proc.stdout._paused
    at_pause = len(lines)
    for _ in range(20):  # turns of the loop: nothing is read (the clock is frozen: the key stays on its way)
        await asyncio.sleep(0)
    assert not _reading(pipe) and len(lines) == at_pause
    priority.input_done(priority.serial())  # the key is drawn
    await until_true(lambda: len(lines) == SMALL_LINES, "every line once the key is drawn")
    assert _reading(pipe)
    proc._proc.stdin.close()
    await reader
    await proc.wait()


async def until_true(predicate, what: str, timeout: float = 45.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.005)


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
            (bool(delivered), transcript.pacer.flush_pending))
        await pilot.press("x")
        assert seen == [(False, True)], "the delivery or the flush went before the key"
        clock[0] += priority.INPUT_WINDOW
        while not delivered or transcript.pacer.flush_pending:
            await pilot.pause()
        assert "A paragraph." in transcript.visible_text()


async def test_the_app_driver_marks_input_events_in_its_thread(clock) -> None:
    """The app's driver (any of Textual's, wrapped by `input_first`) marks a key or a click as it arrives,
    from its own thread; a mouse moving is not input to wait for. A key's window is KEY_WINDOW (its frame
    ends it sooner: nothing does here), a click's INPUT_WINDOW; a click does not cut short a key's."""
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

        keys = priority.keys_arrived()
        await from_thread(events.MouseMove(None, 1, 1, 0, 0, 0, False, False, False))
        assert priority.input_wait() == 0
        await from_thread(events.Key("x", "x"))
        assert priority.keys_arrived() == keys + 1
        assert priority.input_wait() == pytest.approx(priority.KEY_WINDOW)
        clock[0] += priority.KEY_WINDOW
        assert priority.input_wait() == 0
        await from_thread(events.MouseDown(None, 1, 1, 0, 0, 1, False, False, False))
        assert priority.input_wait() == pytest.approx(priority.INPUT_WINDOW)
        clock[0] += priority.INPUT_WINDOW
        await from_thread(events.Key("y", "y"))
        await from_thread(events.MouseUp(None, 1, 1, 0, 0, 1, False, False, False))
        assert priority.input_wait() == pytest.approx(priority.KEY_WINDOW)
        assert priority.keys_arrived() == keys + 2  # keys only: not the clicks


async def test_what_waits_for_a_key_goes_on_once_the_key_is_drawn(clock, monkeypatch) -> None:
    """The work held for a key goes on DRAWN_GRACE after the key's frame (`input_done`), not at the end of
    the window: a key echoed in 10 ms held a flood 40 ms. Here the window is ten minutes long, so only
    the key being drawn can end the wait; a key drawn while a newer one is on its way ends nothing."""
    monkeypatch.setattr(priority, "INPUT_WINDOW", 600.0)
    loop = asyncio.get_running_loop()
    priority.input_arrived()
    first = priority.serial()
    sleeper = asyncio.create_task(priority.input_passed(priority.input_wait()))  # the agent's reader
    called = asyncio.Event()
    priority.call_after_input(loop, priority.input_wait(), called.set)  # the transcript's flush
    delivered = asyncio.Event()
    priority.Later(loop, 0, delivered.set)  # the store's timed delivery, due at once but for the key
    never: list[int] = []
    priority.call_after_input(loop, priority.input_wait(), lambda: never.append(1))()  # cancelled
    for _ in range(5):
        await asyncio.sleep(0)
    assert not sleeper.done() and not called.is_set() and not delivered.is_set()
    assert len(priority._waiters) == 3
    priority.input_arrived()  # a second key before the first is drawn
    priority.input_done(first)
    assert len(priority._waiters) == 3 and priority.input_wait() > 0
    priority.input_done(priority.serial())
    await asyncio.wait_for(asyncio.gather(sleeper, called.wait(), delivered.wait()), 30)
    assert never == [] and priority._waiters == []


async def test_a_request_from_the_agent_is_served_once_a_key_on_its_way_is_drawn(clock, monkeypatch) -> None:
    """Serving an agent's request (building a form of 1,000 fields: 9-19 ms on the loop) waits for a key on its
    way, as reading the agent does. The window is ten minutes: only the key being drawn ends the wait."""
    from rat_tui.protocol.router import Connection

    monkeypatch.setattr(priority, "INPUT_WINDOW", 600.0)

    class Pipe:
        def __init__(self) -> None:
            self.lines: list[bytes] = []

        async def write_line(self, line: bytes) -> None:
            self.lines.append(line)

    served: list[dict] = []

    async def read_file(params: dict) -> dict:
        served.append(params)
        return {"content": "text"}

    pipe = Pipe()
    connection = Connection(pipe, lambda method, params: None, {"fs/read_text_file": read_file})  # type: ignore[arg-type]
    priority.input_arrived()
    connection._route_line(b'{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"path":"/x"}}')
    for _ in range(5):
        await asyncio.sleep(0)
    assert served == [] and pipe.lines == []  # (only input_done can end the wait)
    priority.input_done(priority.serial())
    await until_true(lambda: bool(pipe.lines), "the answer")
    assert served == [{"path": "/x"}] and b'"id":7' in pipe.lines[0] and b'"content":"text"' in pipe.lines[0]


HELD_IN: contextvars.ContextVar[str] = contextvars.ContextVar("held_in", default="no context")


async def test_what_waits_for_a_key_goes_on_once_its_frame_is_written(clock, monkeypatch) -> None:
    """With the terminal's output watched (the app's driver, `OutputWatch`), the work held for a key goes on
    once Textual's writer thread has written and flushed the key's frame, not DRAWN_GRACE after the frame was
    composed (a flood typed into waited 5 ms more per key, the loop idle). Window and grace are ten minutes
    here, so only the write can end the wait: while the terminal has not taken the frame nothing goes on. A key
    whose frame wrote nothing has nothing to wait for."""
    from textual.drivers._writer_thread import WriterThread

    monkeypatch.setattr(priority, "INPUT_WINDOW", 600.0)
    monkeypatch.setattr(priority, "DRAWN_GRACE", 600.0)
    HELD_IN.set("the app's")

    class SlowTerminal(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.takes = threading.Event()

        def write(self, text: str) -> int:
            assert self.takes.wait(30)
            return super().write(text)

    terminal = SlowTerminal()
    output = OutputWatch(terminal, asyncio.get_running_loop())
    writer = WriterThread(output)
    writer.start()
    priority.when_written = output.when_written
    try:
        priority.input_arrived()
        reader = asyncio.create_task(priority.input_passed(priority.input_wait()))
        whose: list[str] = []  # a callback held for the key sees the context it was held in (the app's)
        priority.call_after_input(asyncio.get_running_loop(), priority.input_wait(), lambda: whose.append(HELD_IN.get()))
        await asyncio.sleep(0)  # (waiting)
        output.queued += 1  # the driver handed the key's frame (InputFirst.write)
        writer.write("the key's frame")
        priority.input_done(priority.serial())
        for _ in range(5):
            await asyncio.sleep(0)
        assert not reader.done() and terminal.getvalue() == ""
        terminal.takes.set()
        await asyncio.wait_for(reader, 30)
        await until_true(lambda: whose, "the held callback")
        assert terminal.getvalue() == "the key's frame" and whose == ["the app's"]

        priority.input_arrived()
        reader = asyncio.create_task(priority.input_passed(priority.input_wait()))
        await asyncio.sleep(0)  # (waiting)
        priority.input_done(priority.serial())  # nothing drawn for this key
        await asyncio.wait_for(reader, 30)
    finally:
        writer.stop()


async def test_the_driver_watches_its_output_again_after_a_suspend() -> None:
    """`input_first`'s driver tells priority when its output is written while it runs, and again after
    App.suspend (an external editor) stops and starts it: the same watch, the file not wrapped twice. (A driver
    of Textual's with a terminal file needs a terminal to start; this one has the file and no terminal.)"""
    from textual.driver import Driver

    class FileDriver(Driver):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self._file = io.StringIO()

        def write(self, data: str) -> None:
            self._file.write(data)

        def start_application_mode(self) -> None: ...

        def stop_application_mode(self) -> None: ...

        def disable_input(self) -> None: ...

    driver = input_first(FileDriver)(TypingApp(), debug=False, mouse=False, size=(80, 24))
    driver.start_application_mode()
    output = driver._file
    assert isinstance(output, OutputWatch) and priority.when_written == output.when_written
    driver.stop_application_mode()
    assert priority.when_written is None
    driver.start_application_mode()  # resumed
    assert driver._file is output and priority.when_written == output.when_written
    driver.write("a frame")
    assert output.queued == 1 and output._file.getvalue() == "a frame"
    driver.stop_application_mode()
    priority.reset()


async def test_a_transcript_flush_and_a_reader_go_on_once_the_key_is_drawn(tmp_path, clock, monkeypatch) -> None:
    """In an app: the flood's reader and the transcript, held by a key, go on when the key is drawn
    (RatApp calls `input_done` after its frame; this plain app calls it itself), though the window lasts
    ten minutes."""
    monkeypatch.setattr(priority, "INPUT_WINDOW", 600.0)
    app = TypingApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        field = app.query_one(Input)
        field.focus()
        proc, lines, reader = await flooding(tmp_path)
        priority.input_arrived()
        transcript.add_entry("a1", "agent")
        transcript.append_text("a1", "## Title\n\nA paragraph.\n\n")
        await pilot.press("x")
        assert field.value == "x" and transcript.pacer.flush_pending and len(lines) < LINES
        priority.input_done(priority.serial())  # the key's frame is drawn
        await asyncio.wait_for(reader, 60)
        assert len(lines) == LINES
        await until(pilot, lambda: transcript_flushed(transcript), "the held flush")
        assert "A paragraph." in transcript.visible_text()
        await proc.wait()


def test_a_waiter_left_by_a_closed_loop_is_dropped_when_a_key_is_drawn(clock) -> None:
    """A wait registered on a loop since closed (an app that ended meanwhile) does not make the next
    key's `input_done` fail."""
    loop = asyncio.new_event_loop()
    priority.input_arrived()
    priority.call_after_input(loop, 600.0, lambda: None)
    loop.close()
    priority.input_done(priority.serial())
    assert priority._waiters == []


def test_the_collector_waits_while_a_key_is_on_its_way(clock) -> None:
    """No cyclic collection runs in a key's window (a middle one stalled the loop 20-34 ms under a flood, all
    of it echo when it fell there): the young threshold is raised as the key arrives and put back, as it
    was, once the key is drawn (collections run again) or its window is over. A collector the app has off
    stays off."""
    priority.reset()  # (an input window another test left open would have the thresholds saved already)
    before, enabled = gc.get_threshold(), gc.isenabled()
    collections: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    def allocate() -> list:
        return [[n] for n in range(50_000)]  # five times the app's young threshold, far below the deferred one

    gc.enable()
    gc.set_threshold(10_000, 2, 146)
    gc.callbacks.append(seen)
    try:
        # Put off while a key is on its way: the young threshold raised (what collections run meanwhile is not
        # looked at: other threads an earlier test left, a diff being built, allocate towards the same counts).
        priority.input_arrived()
        priority.input_arrived()  # a second key before the first is drawn
        assert gc.get_threshold() == (priority.GC_DEFERRED, 2, 146)
        kept = allocate()
        priority.input_done(priority.serial())
        assert gc.get_threshold() == (10_000, 2, 146)
        kept += allocate()
        assert collections, "no collection once the key was drawn"

        priority.input_arrived()
        assert gc.get_threshold() == (priority.GC_DEFERRED, 2, 146)
        kept += allocate()
        clock[0] += priority.INPUT_WINDOW  # a key never drawn: its window is over
        assert priority.input_wait() == 0
        assert gc.get_threshold() == (10_000, 2, 146)

        gc.disable()
        priority.input_arrived()
        assert gc.get_threshold() == (10_000, 2, 146) and not gc.isenabled()
        assert len(kept) == 150_000
    finally:
        gc.callbacks.remove(seen)
        priority.reset()
        gc.set_threshold(*before)
        (gc.enable if enabled else gc.disable)()


async def test_a_flush_stops_drawing_when_a_key_arrives_and_draws_once_it_is_drawn(clock, monkeypatch) -> None:
    """A flood's flush renders the screenful of new blocks at the end (30-70 ms under load): a key that
    arrives meanwhile stops it before the next block, nothing of it is drawn (the key's frame comes
    first), and the next flush, once the key is drawn, draws it all, pinned to the end."""
    from rat_tui.ui.widgets import transcript_render as transcript_module

    app = TypingApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent")
        transcript.append_text("a1", "".join(f"Paragraph {i}.\n\n" for i in range(30)))
        await until(pilot, lambda: transcript_flushed(transcript), "the first screenful")
        top = transcript.scroll_offset.y
        assert top == transcript.max_scroll_y > 0
        rendered: list[str] = []
        real = transcript_module.render_block

        def render(console, block, *args, **kwargs):
            rendered.append(block.text)
            if len(rendered) == 3:
                priority.input_arrived(priority.KEY_WINDOW)  # as the driver's thread does while the flush runs
            return real(console, block, *args, **kwargs)

        monkeypatch.setattr(transcript_module, "render_block", render)
        transcript.append_text("a1", "".join(f"Paragraph {i}.\n\n" for i in range(30, 60)))
        await until(pilot, lambda: len(rendered) >= 3, "the flush to render")
        # The clock is frozen: the key's window cannot end by itself, whatever the time the flush waits.
        await until(pilot, lambda: transcript.pacer.unsettled and priority._waiters, "the next flush to wait for the key")
        assert "Paragraph 59." in rendered[0]  # from the end, the way the screen is filled
        # Nothing more from the end: only what the frame meanwhile shows where the view still is (the old
        # last paragraph, no longer last, and the first new one under it).
        later = [int(text.split()[1].rstrip(".")) for text in rendered[3:]]
        assert all(n < 35 for n in later), f"the flush went on rendering after the key arrived: {later}"
        assert transcript.scroll_offset.y == top
        priority.input_done(priority.serial())  # the key's frame is drawn
        await until(pilot, lambda: transcript_flushed(transcript) and not transcript.pacer.unsettled, "the next flush")
        assert len(rendered) > 3
        assert transcript.scroll_offset.y == transcript.max_scroll_y > 0


async def test_colouring_a_long_code_block_waits_for_a_key(clock, monkeypatch) -> None:
    """The slices that colour a long code block (`Transcript._lex_tick`, 30-40 ms with their redraws under
    load) wait while a key is on its way, and go on once it is drawn."""
    from rat_tui.ui.widgets import code_lex

    advances: list[int] = []
    original = code_lex.CodeLex.advance

    def counting(self, *args, **kwargs):
        advances.append(1)
        if len(advances) == 2:
            priority.input_arrived(priority.KEY_WINDOW)  # a key typed while the colouring goes on
        return original(self, *args, **kwargs)

    monkeypatch.setattr(code_lex.CodeLex, "advance", counting)
    ticks: list[int] = []
    tick = Transcript._lex_tick

    def counting_ticks(self):
        ticks.append(1)
        return tick(self)

    monkeypatch.setattr(Transcript, "_lex_tick", counting_ticks)
    app = TypingApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        code = "".join(f"def f_{i}(x):  # comment\n    return x * {i}\n" for i in range(1500))
        transcript.add_entry("a1", "agent")
        transcript.append_text("a1", f"```python\n{code}```\n\nEND\n")
        await until(pilot, lambda: len(advances) >= 2, "the colouring to begin")
        ticks_at_key = len(ticks)
        # Ticks come and wait (the clock is frozen: the window cannot end by itself).
        await until(pilot, lambda: len(ticks) >= ticks_at_key + 2, "a tick to wait and come again")
        assert len(advances) == 2, "the colouring went on while the key was on its way"
        at_key = len(advances)
        assert transcript._lexing
        priority.input_done(priority.serial())
        await until(pilot, lambda: not transcript._lexing, "the colouring to end")
        assert len(advances) > at_key


def _pausing(thread: threading.Thread) -> bool:
    """Whether that thread is giving way to input inside an import (priority._pause_for_input on its stack)."""
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        if frame.f_code.co_name == "_pause_for_input":
            return True
        frame = frame.f_back
    return False


def _import_in_thread(name: str, limit: float = 60.0) -> tuple[threading.Thread, threading.Event]:
    """A thread importing `name` as the app's warm-up does (its imports giving way to input)."""
    imported = threading.Event()

    def warm() -> None:
        put_back = priority.imports_give_way(limit)
        try:
            importlib.import_module(name)
        finally:
            put_back()
        imported.set()

    thread = threading.Thread(target=warm, daemon=True)
    thread.start()
    return thread, imported


def test_the_warm_up_s_imports_wait_for_a_key_until_it_is_drawn(clock, tmp_path, monkeypatch) -> None:
    (tmp_path / "rat_warm_mod_a.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "rat_warm_mod_a", raising=False)
    priority.input_arrived(priority.KEY_WINDOW)
    thread, imported = _import_in_thread("rat_warm_mod_a")
    deadline = time.monotonic() + 10
    while not _pausing(thread):  # (the clock is frozen: the key stays on its way until drawn)
        assert time.monotonic() < deadline and not imported.is_set(), "the import did not wait for the key"
        time.sleep(0.001)
    priority.input_done(priority.serial())  # the key is drawn
    assert imported.wait(10), "the import did not go on once the key was drawn"
    thread.join(10)
    assert not any(type(finder).__name__ == "GiveWay" for finder in sys.meta_path)
    sys.modules.pop("rat_warm_mod_a", None)


def test_the_warm_up_s_imports_do_not_wait_while_the_main_thread_imports(clock, tmp_path, monkeypatch) -> None:
    """The main thread may be waiting for a module the warm-up is importing (its lock): then the warm-up must
    not wait for the main thread's key as well."""
    (tmp_path / "rat_warm_mod_b.py").write_text("VALUE = 2\n")
    (tmp_path / "rat_main_mod_b.py").write_text("import builtins\nbuiltins._rat_test_gate()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("rat_warm_mod_b", "rat_main_mod_b"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    priority.input_arrived(priority.KEY_WINDOW)  # a key on its way, never drawn in this test

    def gate() -> None:  # runs inside the main thread's import of rat_main_mod_b
        thread, imported = _import_in_thread("rat_warm_mod_b")
        assert imported.wait(10), "the warm-up's import waited while the main thread was importing"
        thread.join(10)

    monkeypatch.setattr(builtins, "_rat_test_gate", gate, raising=False)
    importlib.import_module("rat_main_mod_b")
    for name in ("rat_warm_mod_b", "rat_main_mod_b"):
        sys.modules.pop(name, None)
