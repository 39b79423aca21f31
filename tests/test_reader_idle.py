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
from textual.app import App, ComposeResult

from rat_tui.agents.spec import AgentSpec
from rat_tui.app import RatApp
from rat_tui.config import Config
from rat_tui.protocol.transport import AgentProcess
from rat_tui.state import store as store_module
from rat_tui.state.models import EntryAdded, ReaderIdle
from rat_tui.state.store import SessionStore
from rat_tui.ui import flush_pacer
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

    reader = asyncio.create_task(proc.read_lines(lines.append, on_idle=lambda: idle_after.append(len(lines))))
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


# Lines written in pieces cut anywhere (inside a line, between the newline and the next), blank lines, a line
# over the limit in pieces, a run of many short lines in one write, and a last line with no newline.
PIECES_AGENT = """import sys, time
pieces = [b'{"n": 1}\\n{"n"', b': 2}', b'\\n', b'\\n   \\n{"n": 3}\\n{', b'"n": 4}\\n' + b'x' * 1500, b'y' * 1500,
          b'\\n{"n": 5}\\n', b''.join(b'{"m": %d}\\n' % i for i in range(2000)), b'{"n": "last"}']
for piece in pieces:
    sys.stdout.buffer.write(piece)
    sys.stdout.buffer.flush()
    time.sleep(0.02)
"""


async def test_the_reader_hands_out_each_line_whole_however_the_agent_s_writes_cut_them(tmp_path: Path) -> None:
    """AgentProcess.read_lines splits what each read ends into lines at once: a line cut across reads comes
    whole, blank lines are dropped, a line over the limit is skipped (and said), the last line needs no
    newline."""
    proc = AgentProcess([sys.executable, "-c", PIECES_AGENT], cwd=tmp_path)
    proc.max_line_bytes = 1000
    skipped: list[int] = []
    proc.on_oversized = skipped.append
    await proc.start()
    lines: list[bytes] = []
    try:
        await asyncio.wait_for(proc.read_lines(lines.append), 30)
    finally:
        await proc.close()
    assert lines == [b'{"n": 1}', b'{"n": 2}', b'{"n": 3}', b'{"n": 4}', b'{"n": 5}',
                     *(b'{"m": %d}' % i for i in range(2000)), b'{"n": "last"}']
    assert skipped == [3000]


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


async def test_the_store_delivers_at_once_when_the_reader_goes_idle_unless_it_delivered_within_a_frame() -> None:
    """The reader drained: what came is delivered now when the last delivery was a frame ago or more (it
    waited a frame more, 17 ms at the end of every answer), else a frame after the last delivery."""
    store = SessionStore(frame_seconds=3600.0)  # a frame: never, in this test
    batches: list[list] = []
    store.subscribe(batches.append)

    def chunk(text: str) -> None:
        store.apply_update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})

    chunk("the end")
    store.reader_idle()
    await wait_for(lambda: batches != [], what="the delivery after the reader went idle")
    assert [type(change) for change in batches[0]] == [EntryAdded, ReaderIdle]
    chunk(" and more")
    store.reader_idle()  # a frame after the last delivery: not yet
    loop = asyncio.get_running_loop()
    assert store._flush_handle is not None and store._due > loop.time() + 3000
    assert len(batches) == 1


@pytest.mark.slow
async def test_a_flood_s_end_shows_without_waiting_for_the_flood_pacing(tmp_path: Path, monkeypatch) -> None:
    """A real agent floods 2,000 chunks and keeps its turn open. With the store's and the transcript's flood
    pacing made endless, the end still shows: the reader went idle, and that drew it."""
    monkeypatch.setattr(store_module, "FLOOD_SECONDS", 3600.0)
    monkeypatch.setattr(store_module, "FLOOD_BATCH", 0)  # every delivery paced as a flood's
    monkeypatch.setattr(flush_pacer, "PACED_FLUSH", 0.0)  # every flush paced ...
    monkeypatch.setattr(flush_pacer, "FLUSH_SPACING", 1e6)  # ... for ever
    monkeypatch.setattr(flush_pacer, "MAX_FLUSH_GAP", 3600.0)
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
async def test_a_burst_is_drawn_at_most_every_max_flush_gap_until_it_pauses(tmp_path: Path, monkeypatch) -> None:
    """While the agent's lines keep coming, the transcript draws at most every MAX_FLUSH_GAP, the first time
    that long after the burst began (each draw of a 2,000-chunk answer renders a screenful that scrolls away
    unread, and composites the screen); once they pause for BURST_QUIET, what came is drawn. Each draw's time
    is checked against the times the lines arrived, whatever the machine's speed, while the user types. (The
    gap is made 20 ms, so that a burst read in 100 ms has several.)"""
    monkeypatch.setattr(flush_pacer, "MAX_FLUSH_GAP", 0.02)
    script = {"turns": [[{"chunk": "word ", "repeat": 12000}, {"sleep": 0.3}, {"chunk": "THE-END"}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        arrived: list[float] = []  # when each line was routed (the traffic inspector hears each as it is)
        session.traffic.subscribe(lambda record: arrived.append(time.monotonic()))
        transcript = view(app).transcript
        draws: list[float] = []
        settle = transcript._settle

        def counted(*args, **kwargs) -> bool:
            drawn = settle(*args, **kwargs)
            if drawn and kwargs.get("yielding"):
                draws.append(time.monotonic())
            return drawn

        transcript._settle = counted  # type: ignore[method-assign]
        flushes: list[float] = []
        flush_now = transcript.pacer.flush_now

        def flush_counted(*args, **kwargs) -> None:
            flushes.append(time.monotonic())
            flush_now(*args, **kwargs)

        transcript.pacer.flush_now = flush_counted  # type: ignore[method-assign]
        await send(pilot, "flood")
        await pilot.press(*"typed meanwhile")
        await until(pilot, lambda: "THE-END" in screen_text(app), "the end on screen", timeout=30)
        assert view(app).composer.text == "typed meanwhile"
        burst = [t for t in arrived if t < arrived[-1] - 0.2]  # the 12,000 chunks (not the end, 0.3 s later)
        during = [t for t in draws if burst[0] < t < burst[-1]]
        assert during, "nothing drawn while the burst came"
        previous = burst[0]  # (the burst's start counts as a draw)
        for t in during:
            quiet = not [a for a in burst if t - flush_pacer.BURST_QUIET < a <= t]
            assert quiet or t - previous >= flush_pacer.MAX_FLUSH_GAP - 0.002, \
                f"drawn {1000 * (t - previous):.0f} ms after the last draw or the burst's start while the lines kept coming"
            previous = t
        assert [t for t in draws if t > burst[-1]], "the burst's end was not drawn once it paused"
        # A held draw is flushed again by its timer, not at once: flushed at every turn of the loop, the burst
        # was read slower (20,000 tool calls took 25% longer).
        during = [t for t in flushes if burst[0] < t < burst[-1]]
        assert len(during) <= 2 + (burst[-1] - burst[0]) / flush_pacer.BURST_QUIET, "flushed in a loop"


def test_a_preview_starts_where_markdown_may_start_over() -> None:
    """MarkdownStream.preview: the end of a region not cut yet, from its last line after a blank line that
    continues no list, quote or indented code and is not inside a fence; None when there is none near the end."""
    from rat_tui.ui.widgets.markdown_stream import PREVIEW_LINES, MarkdownStream

    def preview(text: str) -> str | None:
        stream = MarkdownStream()
        stream.feed(text)
        block = stream.preview()
        return None if block is None else block.text

    assert preview("# Title\n\nOne\ntwo\n\nLast one\nand more") == "Last one\nand more"
    assert preview("Intro\n\n- a\n\n- b\n\n  still b\n") is None  # (a list goes on across blank lines)
    assert preview("Intro\n\nPara\n\n1. one\n\n2) two\n") == "Para\n\n1. one\n\n2) two\n"
    assert preview("Intro\n\nPara\n\n> quote\n\n> more\n") == "Para\n\n> quote\n\n> more\n"
    assert preview("Intro\n\nPara\n\n    code\n\n    more code\n") == "Para\n\n    code\n\n    more code\n"
    assert preview("Intro\n\nPara\n\n```py\nx = 1\n\nnot a start\n") == "Para\n\n```py\nx = 1\n\nnot a start\n"
    assert preview("Intro\n\n~~~\nx\n~~~\n\nAfter\n") == "After\n"
    assert preview("Start\n\n" + "".join(f"- item {n}\n" for n in range(PREVIEW_LINES + 5))) is None  # too far back

    # `lines` back at least (the transcript's height once the agent paused): the nearest such start that far
    # back, else the farthest there is within PREVIEW_LINES.
    def back(text: str, lines: int) -> str | None:
        stream = MarkdownStream()
        stream.feed(text)
        block = stream.preview(lines)
        return None if block is None else block.text

    text = "A\n\nB\nb2\n\nC\nc2\n\nD\n"
    assert back(text, 0) == back(text, 1) == "D\n"
    assert back(text, 3) == back(text, 4) == "C\nc2\n\nD\n"
    assert back(text, 5) == back(text, 100) == "B\nb2\n\nC\nc2\n\nD\n"
    far = "Start\n\nFar\n\n" + "".join(f"line {n}\n" for n in range(PREVIEW_LINES - 2)) + "\nNear\n"
    assert back(far, PREVIEW_LINES * 2) == far[far.index("line 0"):] and back(far, 0) == "Near\n"


# An agent that answers a prompt with a flood of markdown written at once (thousands of lines in a few writes,
# faster than the app cuts them), then, after a pause, one more chunk and the turn's end.
FLOOD_AGENT = r"""import json, os, sys, time
PIECES = ["## Part {i}\n\n", "Some *text* {i} and a [link](https://e.com/{i}).\n\n", "- one {i}\n", "- two\n\n",
          "```python\n", "x = {i}\n", "```\n\n"]
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
def chunk(text):
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": update}})
for line in sys.stdin:
    message = json.loads(line)
    method, mid = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1, "agentCapabilities": {}}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        lines = [chunk(PIECES[n % len(PIECES)].format(i=n // len(PIECES))) for n in range(12000)]
        lines.append(chunk("\n\nTHE-END\n"))
        # One write into the biggest pipe allowed, so that the app reads the flood as one burst however loaded
        # the machine is: in 8 KiB pieces through a 64 KiB pipe, a reader faster than this agent found the pipe
        # drained between two of them (a pause). 4 MiB holds all of it; without CAP_SYS_RESOURCE (a container's
        # root too) the most is pipe-max-size, 1 MiB: the reader then routes for tens of ms before it could
        # find it empty, while this write refills it as soon as there is room.
        import fcntl
        for size in (4 << 20, 1 << 20):
            try:
                fcntl.fcntl(1, getattr(fcntl, "F_SETPIPE_SZ", 1031), size)
                break
            except OSError:
                pass
        sys.stdout.flush()
        rest = memoryview(("\n".join(lines) + "\n").encode())
        while rest:
            rest = rest[os.write(1, rest):]
        while len(sys.argv) > 1 and not os.path.exists(sys.argv[1]):  # (held until the test says)
            time.sleep(0.01)
        time.sleep(0.5)
        sys.stdout.write(chunk("\n\nafter") + "\n")
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
"""


# The flood agent at rat's own CPU priority (`agent_nice` 0): these tests need its burst written without a
# pause. At the default (19), with the other test worker busy, it was held off the CPU mid-burst, and the
# transcript drew at that pause, as it should (test_a_flood_s_first_draw_waits_for_it_to_pause: 5 runs of the
# file in 8).
UNPAUSED = Config(agent_nice=0)


def flood_app(tmp_path: Path, go: Path | None = None) -> tuple[RatApp, Path]:
    """The app on FLOOD_AGENT, and the file that releases the agent's turn after the flood; with `go`, the
    flood itself waits for that file."""
    script = FLOOD_AGENT
    if go is not None:
        script = script.replace("        lines = [chunk(", f"        while not os.path.exists({str(go)!r}):\n"
                                "            time.sleep(0.01)\n        lines = [chunk(")
    agent, release = tmp_path / "flood_agent.py", tmp_path / "release"
    agent.write_text(script)
    spec = AgentSpec(name="flood", argv=[sys.executable, str(agent), str(release)], env={}, is_demo=False)
    return RatApp(spec, tmp_path, config=UNPAUSED), release


def _entry_lines(transcript) -> list[str]:
    """Every rendered line of the transcript's last entry (rendered now where not yet)."""
    entry = transcript.rows.items[-1]
    return [strip.text for seg in entry.items for strip in transcript.strips(entry, seg)]


@pytest.mark.slow
async def test_a_flood_s_end_shows_before_all_of_it_is_cut_and_the_whole_renders_the_same(tmp_path: Path) -> None:
    """A flood of markdown while the transcript follows the end: its last lines show (MarkdownStream.preview)
    before the lines that came before them are cut into blocks, as cutting them first took as long again as
    reading the agent. Once cut, the answer renders line for line as it does with no preview at all (the
    same flood in a second app, with the preview turned off). The user types meanwhile."""
    agent = tmp_path / "flood_agent.py"
    agent.write_text(FLOOD_AGENT)
    spec = AgentSpec(name="flood", argv=[sys.executable, str(agent)], env={}, is_demo=False)

    async def play(preview: bool) -> list[str]:
        app = RatApp(spec, tmp_path, config=UNPAUSED)
        async with app.run_test(size=(100, 30)) as pilot:
            session = view(app).session
            await until(pilot, lambda: session.state.status == "ready", "ready")
            transcript = view(app).transcript
            if not preview:
                transcript.pacer.flooding = transcript.pacer.activity = None
            first_shown: list[bool] = []  # (when the end was first drawn: was some of the answer not cut yet?)
            render_lines = transcript.render_lines

            def watched(crop):
                strips = render_lines(crop)
                if not first_shown and any("THE-END" in strip.text for strip in strips):
                    entry = transcript.rows.items[-1]
                    first_shown.append(bool(entry.splitter is not None and entry.splitter.behind or transcript._withheld))
                return strips

            transcript.render_lines = watched  # type: ignore[method-assign]
            await send(pilot, "flood")
            await pilot.press(*"typed meanwhile")
            await until(pilot, lambda: first_shown != [], "the flood's end on screen", timeout=60)
            if preview:
                assert first_shown == [True], "the end showed only once all of the answer was cut"
            await until(pilot, lambda: "after" in screen_text(app) and transcript_flushed(transcript), "the end", 60)
            assert view(app).composer.text == "typed meanwhile"
            assert not transcript._withheld and not transcript._previews
            return _entry_lines(transcript)

    assert await play(True) == await play(False)


@pytest.mark.slow
async def test_a_flood_in_a_background_tab_is_cut_as_it_comes_not_parked(tmp_path: Path) -> None:
    """A tab in the background draws nothing: its flood is cut as it comes (at the hidden pace), never parked
    for a preview nobody sees (a park is looked at again every 20 ms: 19 tabs flooding behind the one typed
    in would poll for nothing). Shown again, it has the whole answer."""
    agent = tmp_path / "flood_agent.py"
    agent.write_text(FLOOD_AGENT)
    app = RatApp(AgentSpec(name="flood", argv=[sys.executable, str(agent)], env={}, is_demo=False), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        first = view(app)
        await until(pilot, lambda: first.session.state.status == "ready", "ready")
        second = await app.open_session(scripted({}, tmp_path), tmp_path)
        await until(pilot, lambda: second.state.status == "ready", "the second tab ready")
        parked: list[bool] = []
        flush_now = first.transcript.pacer.flush_now

        def watched(*args, **kwargs) -> None:
            flush_now(*args, **kwargs)
            parked.append(first.transcript.pacer.parked)

        first.transcript.pacer.flush_now = watched  # type: ignore[method-assign]
        first.session.start_prompt("flood")
        await pilot.press(*"typed in the other tab")
        await until(pilot, lambda: "after" in first.session.state.entries[-1].text, "the flood's end", timeout=60)
        assert parked and not any(parked)
        await pilot.press("alt+1")
        await until(pilot, lambda: "after" in screen_text(app) and transcript_flushed(first.transcript), "shown", 60)
        assert not first.transcript._withheld


@pytest.mark.slow
async def test_a_flood_s_end_shows_as_its_preview_once_it_pauses_before_any_of_it_is_cut(tmp_path: Path,
                                                                                       monkeypatch) -> None:
    """When the flood pauses (nothing written for BURST_QUIET, all of it read), its end is drawn at once as its
    preview, and the cut catches up after that is on screen: not a park's poll or the flood's pace later
    (both made endless here, so nothing else could draw it), and not after a slice of the cut (the end of a
    2,000-chunk answer waited 20-40 ms more for those). A flood that comes in one batch is not cut at its
    first flush either (MarkdownStream.defer): no block of the answer is cut before its end first shows.
    The user types meanwhile."""
    monkeypatch.setattr(flush_pacer, "MAX_FLUSH_GAP", 3600.0)
    monkeypatch.setattr(flush_pacer, "PARK_POLL", 3600.0)
    app, release = flood_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        transcript = view(app).transcript
        cut: list[str] = []  # the kind of each entry a slice of the cut went through
        sync = transcript._sync

        def counted(entry) -> None:
            cut.append(entry.kind)
            sync(entry)

        transcript._sync = counted  # type: ignore[method-assign]
        first_shown: list[tuple[int, bool]] = []  # (slices of the answer cut, some of it not cut yet)
        seen: list[tuple[object, list[str]]] = []  # (the crop, its rows) as the end first shows
        render_lines = transcript.render_lines

        def watched(crop):
            strips = render_lines(crop)
            if not first_shown and any("THE-END" in strip.text for strip in strips):
                entry = transcript.rows.items[-1]
                first_shown.append((len([kind for kind in cut if kind != "user"]),
                                    bool(entry.splitter is not None and entry.splitter.behind)))
                seen.append((crop, [strip.text.rstrip() for strip in strips]))
            return strips

        transcript.render_lines = watched  # type: ignore[method-assign]
        await send(pilot, "flood")
        await pilot.press(*"typed meanwhile")
        await until(pilot, lambda: first_shown != [], "the flood's end on screen", timeout=60)
        assert first_shown == [(0, True)]
        await until(pilot, lambda: not transcript._dirty and not transcript._cycle, "the cut caught up", timeout=60)
        # Drawn where it stays once cut, a screenful of the answer above it: the same rows then (from the last
        # place markdown could start over, it came under the question, the screen blank below it, and jumped).
        crop, rows = seen[0]
        assert [strip.text.rstrip() for strip in transcript.render_lines(crop)] == rows
        assert "THE-END" in rows[-3] + rows[-2] + rows[-1]
        release.touch()
        await until(pilot, lambda: "after" in screen_text(app) and transcript_flushed(transcript), "the end", 60)
        assert view(app).composer.text == "typed meanwhile"
        assert not transcript._withheld and not transcript._previews


async def test_a_flood_s_first_draw_waits_for_it_to_pause(tmp_path: Path, monkeypatch) -> None:
    """While a burst of lines is being read, the transcript draws at most every MAX_FLUSH_GAP counted from the
    burst's start too, not only from its last draw (FlushPacer._paced_since): a 2,000-chunk answer's first
    flush drew a screenful as its first lines came, a frame nobody could read, and its end came later. With
    the gap made endless, the answer is first drawn once the agent pauses, after the burst's last line. The
    user types meanwhile."""
    monkeypatch.setattr(flush_pacer, "MAX_FLUSH_GAP", 3600.0)
    go = tmp_path / "go"
    app, release = flood_app(tmp_path, go)
    async with app.run_test(size=(100, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        transcript = view(app).transcript
        lines: list[int] = []  # each line of the answer as it was routed (the traffic inspector hears each)
        draws: list[int] = []  # how many lines had been routed at each draw of the transcript during the answer
        settle = transcript._settle

        def counted(*args, **kwargs) -> bool:
            drawn = settle(*args, **kwargs)
            if drawn and kwargs.get("yielding") and lines:
                draws.append(len(lines))
            return drawn

        transcript._settle = counted  # type: ignore[method-assign]
        session.traffic.subscribe(lambda record: record.direction == "in" and lines.append(1))
        await send(pilot, "flood")
        # Not drawn by a flush since long ago, as when the prompt's echo was drawn by the key's frame (the flush
        # that would have drawn it gave way to the key): the gap counted from the last draw alone is long over.
        await until(pilot, lambda: transcript_flushed(transcript), "the prompt drawn")
        transcript.pacer.drawn_at = 0.0
        go.touch()
        await pilot.press(*"typed meanwhile")
        await until(pilot, lambda: "THE-END" in screen_text(app), "the flood's end on screen", timeout=60)
        assert len(lines) >= 12001 and draws, draws
        assert draws[0] >= 12001, f"drawn after {draws[0]} of the burst's 12,001 lines"
        release.touch()
        await until(pilot, lambda: "after" in screen_text(app) and transcript_flushed(transcript), "the end", 60)
        assert view(app).composer.text == "typed meanwhile"


async def test_a_flood_s_end_is_not_drawn_before_the_store_has_delivered_it(tmp_path: Path) -> None:
    """Once the reader has read a flood to its end, the store delivers what it brought at once, or a frame after
    its last delivery. The transcript's own timer may come first: then lines are still to come for it
    (SessionView._flooding), and it draws nothing. Drawn then, the end came a frame and a flush later, 20-30 ms
    in tmux. Here the delivery at the end of a burst is made to come 0.3 s late, so that it always comes after
    that timer. The user types meanwhile."""
    app, release = flood_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        connection = session.connection
        store = session.store
        reader_idle = store.reader_idle

        def late_idle() -> None:  # the delivery at the end of a burst comes late, as under load
            store._delivered_at = asyncio.get_running_loop().time() + 0.3
            reader_idle()

        connection.on_idle = late_idle
        transcript = view(app).transcript
        states: list[tuple[bool, bool]] = []  # at each draw: (the reader drained since the last line, its end undelivered)
        settle = transcript._settle

        def counted(*args, **kwargs) -> bool:
            drawn = settle(*args, **kwargs)
            if drawn and kwargs.get("yielding"):
                states.append((connection.idle_at >= connection.last_inbound, store._idle))
            return drawn

        transcript._settle = counted  # type: ignore[method-assign]
        await send(pilot, "flood")
        await pilot.press(*"typed meanwhile")
        await until(pilot, lambda: "THE-END" in screen_text(app), "the flood's end on screen", timeout=60)
        assert states and (True, True) not in states, states
        release.touch()
        await until(pilot, lambda: "after" in screen_text(app) and transcript_flushed(transcript), "the end", 60)
        assert view(app).composer.text == "typed meanwhile"


def _cut_while_behind(text: str, check=None, write: int = 7000) -> tuple[int, int]:
    """Feed `text` to a MarkdownStream in writes of `write` characters, each a flood cut 50 lines at a time
    while it is behind, its preview looked for before each cut (as the transcript does) and `check(stream)`
    after that; returns (lines scanned for the preview, lines)."""
    from rat_tui.ui.widgets.markdown_stream import MarkdownStream

    stream = MarkdownStream()
    scanned = 0
    for start in range(0, len(text), write):
        stream.feed(text[start:start + write])
        stream.defer(50)
        while stream.behind:
            lines = len(stream._lines)
            scanned += lines - (stream._pv_at if stream._pv_at <= lines else 0)
            stream.preview_from()
            if check is not None:
                check(stream)
            stream.sync(limit=50)
    return scanned, stream.line_count


def test_a_preview_scan_goes_on_from_where_it_stopped_as_a_flood_is_cut() -> None:
    """While a flood is cut a prefix at a time, the preview's scan is kept for what is left (_keep_from):
    each line of an answer is scanned about once. Scanned again from the region's start at each cut, a
    20,000-chunk answer spent half its time doing so."""
    import random

    pieces = ["## Part {n}\n\n", "Some *text* {n} and a [link](https://e.com/{n}).\n\n", "- one {n}\n", "- two\n\n",
              "```python\n", "x = {n}\n", "```\n\n", "1. first\n", "   more\n\n", "> said\n\n", "Plain {n}\n"]
    rng = random.Random(3)
    text = "".join(pieces[n % 7].format(n=n) if n % 3 else rng.choice(pieces).format(n=n) for n in range(6000))
    text = text.replace("```python\n", "```python\n" + "y = 1\n" * 2).replace("- two\n\n", "- two\n" * 3 + "\n")
    scanned, lines = _cut_while_behind(text, write=50_000)
    assert scanned <= 2 * lines, f"{scanned} lines scanned for {lines}"


def test_a_preview_scan_kept_across_a_cut_finds_what_a_scan_afresh_finds() -> None:
    """Whatever the markdown (fences of every kind, some the scan and markdown-it read differently, in HTML
    blocks and lists), the preview found after each cut is the one a scan of the region afresh finds."""
    import random

    pieces = ["## Head {n}\n\n", "Text {n} with `code`.\n", "\n", "- item {n}\n", "  more of it\n", "1. one\n",
              "> quote {n}\n", "    indented\n", "```python\n", "```\n", "~~~\n", "````\n", "```` x\n",
              "``` a`b\n", "<div>\n", "| a | b |\n", "plain {n}\n", "plain {n}\n", "\n", "\n"]
    scan = {"_pv_at": 0, "_pv_fence": "", "_pv_base": 0, "_pv_spans": [], "_pv_safes": []}  # (as a region starts)

    def afresh(stream, lines: int) -> int:
        kept = {name: getattr(stream, name) for name in scan if hasattr(stream, name)}
        for name in kept:
            setattr(stream, name, [] if isinstance(scan[name], list) else scan[name])
        try:
            return stream.preview_from(lines)
        finally:
            for name, value in kept.items():
                setattr(stream, name, value)

    def same(stream) -> None:
        for lines in (0, 7, 40):  # (from the last safe line, and a screenful back)
            kept = stream.preview_from(lines)
            assert kept == afresh(stream, lines)

    rng = random.Random(11)
    for _ in range(60):
        _cut_while_behind("".join(rng.choice(pieces).format(n=n) for n in range(3000)), same)



class _TranscriptApp(App):
    def compose(self) -> ComposeResult:
        yield transcript_module.Transcript()


async def test_the_reader_s_pause_looks_at_a_flood_parked_until_it_at_once(monkeypatch) -> None:
    """A flood parked until the agent pauses (its end shown as a preview, the rest cut once it is read) is looked at
    again when the store's delivery says the reader is drained (Transcript.reader_idle), even when that delivery
    carries no text: it woke only a paced flush, and the parked flood waited for the park's next look
    (PARK_POLL, 20 ms; made endless here, it never came)."""
    monkeypatch.setattr(flush_pacer, "MAX_FLUSH_GAP", 3600.0)
    monkeypatch.setattr(flush_pacer, "PARK_POLL", 3600.0)
    reading = [True]  # the reader has not found the agent's pipe drained yet
    app = _TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(transcript_module.Transcript)
        transcript.pacer.flooding = lambda: reading[0]
        transcript.pacer.activity = lambda: 0.0  # the last line came long ago: not a burst still being written
        transcript.add_entry("a1", "agent")
        transcript.pacer.drawn_at = time.monotonic()  # drawn just now: a flood's next draw waits for its pace
        pieces = "".join(f"## Part {i}\n\nSome *text* {i}.\n\n```python\nx = {i}\n```\n\n" for i in range(600))
        transcript.append_text("a1", pieces + "THE-END\n")
        await until(pilot, lambda: transcript.pacer.parked and transcript.pacer.held_timer is not None, "the flood parked")
        assert "THE-END" not in screen_text(app)
        reading[0] = False
        transcript.reader_idle()  # the delivery that ends the burst: ReaderIdle alone, its text delivered before
        await until(pilot, lambda: "THE-END" in screen_text(app), "the flood's end on screen", timeout=10)


async def test_a_flush_does_not_draw_while_the_end_of_the_burst_is_on_its_way_from_the_store() -> None:
    """The reader has read a burst to its end and the store's delivery of it (ending with ReaderIdle) is due
    (FlushPacer.end_due): a flush that comes first, as a cut's last slice or the transcript's own timer did,
    draws nothing; the delivery draws it. Drawn in between, the end came a frame and a flush later."""
    due = [True]
    app = _TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(transcript_module.Transcript)
        transcript.pacer.flooding = lambda: due[0]  # as the view's: the end of a burst not delivered is still to come
        transcript.pacer.end_due = lambda: due[0]
        transcript.pacer.activity = lambda: 0.0  # the last line came long ago: not a burst still being written
        flushes: list[tuple[bool, bool]] = []  # (the delivery due, drawn) at each settle of a flush
        settle = transcript._settle

        def counted(*args, **kwargs) -> bool:
            drawn = settle(*args, **kwargs)
            if kwargs.get("yielding"):
                flushes.append((due[0], drawn))
            return drawn

        transcript._settle = counted  # type: ignore[method-assign]
        flush_now = transcript.pacer.flush_now
        ran = []

        def flushed(*args, **kwargs) -> None:
            flush_now(*args, **kwargs)
            ran.append(due[0])

        transcript.pacer.flush_now = flushed  # type: ignore[method-assign]
        transcript.add_entry("a1", "agent")
        transcript.append_text("a1", "Some *text* and then THE-END\n")
        await until(pilot, lambda: ran, "a flush while the delivery is due")
        assert (True, True) not in flushes, flushes
        due[0] = False
        transcript.reader_idle()  # the delivery's ReaderIdle
        await until(pilot, lambda: (False, True) in flushes, "the delivery's draw", timeout=10)
        assert (True, True) not in flushes, flushes
        assert "THE-END" in screen_text(app)
