"""Tests the Transcript widget in a purpose-built app: streamed markdown, collapse, follow, laziness."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.segment import Segment
from rich.text import Text
from textual.app import App, ComposeResult
from textual.strip import Strip
from textual.widgets import Input

from rat_tui.ui.widgets.markdown_stream import MarkdownStream
from rat_tui.ui.flush_pacer import FlushPacer
from rat_tui.ui.widgets.transcript import ENTRY_SYNC_LINES, FLOOD_SYNC_LINES, Transcript

from .helpers.app import transcript_flushed, until

ANSWER = (
    "# Plan of attack\n\n"
    "First we read the *config* and check `paths`.\n\n"
    "- parse the arguments\n"
    "- load the settings\n\n"
    "```python\n"
    "def main():\n"
    "    return 42\n"
    "```\n\n"
    "Done.\n"
)


class TranscriptApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()


def chunked(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def stream(pilot, transcript: Transcript, key: str, text: str, size: int = 3) -> None:
    for piece in chunked(text, size):
        transcript.append_text(key, piece)
        await pilot.pause()


# -- the splitter on its own --------------------------------------------------------------------


def test_splitter_cuts_blocks_where_markdown_it_does() -> None:
    splitter = MarkdownStream()
    blocks = []
    for piece in chunked(ANSWER + "\ntail words", 2):
        splitter.feed(piece)
        blocks += splitter.sync().done
    texts = [b.text for b in blocks]
    assert texts == [
        "# Plan of attack\n",
        "First we read the *config* and check `paths`.\n",
        "- parse the arguments\n- load the settings\n\n",
        "def main():\n    return 42\n",
    ]
    assert blocks[3].lang == "python" and blocks[3].top and blocks[3].bottom
    # "Done." is final only once the next line is complete (it could still continue the paragraph).
    assert splitter.tail().text == "Done.\n\ntail words"


def test_splitter_keeps_blank_lines_inside_a_fence_and_cuts_long_code() -> None:
    splitter = MarkdownStream()
    code = "".join(f"line {i}\n" + ("\n" if i == 3 else "") for i in range(100))
    blocks = []
    for line in ("~~~\n" + code + "~~~\nafter\n").splitlines(keepends=True):
        splitter.feed(line)
        blocks += splitter.sync().done
    pieces = [b for b in blocks if b.kind == "code"]
    assert "".join(b.text for b in pieces) == code
    assert len(pieces) > 1 and pieces[0].top and not pieces[0].bottom and pieces[-1].bottom
    assert all(b.lang == "text" for b in pieces)


# -- the widget ---------------------------------------------------------------------------------


async def test_streamed_markdown_is_rendered_on_screen() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 30)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("u1", "user", "Please **fix** it")
        transcript.add_entry("a1", "agent")
        await stream(pilot, transcript, "a1", ANSWER)
        seen = transcript.visible_text()
        assert "You" in seen and "Please fix it" in seen  # markdown rendered: no asterisks
        assert "Plan of attack" in seen and "# Plan" not in seen
        assert "• parse the arguments" in seen and "• load the settings" in seen
        assert "def main():" in seen and "return 42" in seen and "```" not in seen
        assert "First we read the config and check paths." in seen
        assert transcript.plain_text.endswith(ANSWER)
        assert transcript.has_entry("a1") and not transcript.has_entry("nope")


async def test_thought_is_collapsed_and_t_expands_it() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 20)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("th", "thought")
        await stream(pilot, transcript, "th", "The user wants\na fix.\nCheck the *tests* first.\n", 5)
        transcript.add_entry("a1", "agent", "On it.")
        await pilot.pause()
        seen = transcript.visible_text()
        assert "▸ Thought (3 lines)" in seen and "Check the tests" not in seen
        transcript.focus()
        await pilot.press("t")
        seen = transcript.visible_text()
        assert "▾ Thought" in seen and "Check the tests first." in seen and "On it." in seen
        await pilot.press("t")
        assert "Check the tests" not in transcript.visible_text()


async def test_notice_and_long_generic_entry() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 20)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("n1", "notice", "Agent exited with code 1", title="error")
        transcript.add_entry("g1", "generic", "{\n" + "".join(f'  "k{i}": {i},\n' for i in range(10)) + "}", title="mystery")
        await pilot.pause()
        seen = transcript.visible_text()
        assert "✗ Agent exited with code 1" in seen
        assert "▸ mystery (12 lines)" in seen and '"k3": 3' not in seen
        transcript.toggle_collapsed("g1")
        await pilot.pause()
        assert '"k3": 3' in transcript.visible_text()


async def test_appending_does_not_re_render_completed_blocks() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent")
        pieces = ["Paragraph number {i} has words.\n\n", "- item {i}\n", "- more\n\n", "```\ncode {i}\n```\n\n"]
        for i in range(5000):
            transcript.append_text("a1", pieces[i % 4].format(i=i))
            if i % 250 == 0:
                await pilot.pause()
        await pilot.pause()
        blocks = 5000 // 4 * 3
        assert transcript.render_count < blocks / 4  # off-screen blocks were never rendered at all
        before = transcript.render_count
        for i in range(20):
            transcript.append_text("a1", f"word{i} ")
            await pilot.pause()
        # Each chunk re-renders the growing tail only: O(1) per chunk, not O(blocks so far).
        assert transcript.render_count - before <= 20 * 2
        assert "word19" in transcript.visible_text()


async def test_a_growing_transcript_does_not_lay_out_the_screen_per_batch() -> None:
    """Only the scrollbar depends on the transcript's virtual size: a batch that grows it repaints the
    transcript and its scrollbar, without a layout of the whole screen (15 ms a batch in a flood)."""
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent")
        for i in range(40):
            transcript.append_text("a1", f"Line {i} of the answer.\n\n")
        await pilot.pause()
        assert transcript.show_vertical_scrollbar  # from here on, growing changes no widget's size
        layouts = 0
        layout = app.screen._refresh_layout

        def counting(*args, **kwargs):
            nonlocal layouts
            layouts += 1
            return layout(*args, **kwargs)

        app.screen._refresh_layout = counting
        heights = set()
        for i in range(40, 70):
            transcript.append_text("a1", f"Line {i} of the answer.\n\n")
            # Each batch is flushed before the next (a paced flush waits on a timer, past one pause).
            await until(pilot, lambda: transcript_flushed(transcript), f"batch {i} flushed")
            heights.add(transcript.virtual_size.height)
        assert len(heights) == 30  # every batch grew the virtual size...
        assert layouts == 0  # ...and none laid out the screen
        assert "Line 69" in transcript.visible_text() and transcript.following
        assert transcript.vertical_scrollbar.window_virtual_size == transcript.virtual_size.height


async def test_scrolling_up_stops_following_and_end_resumes() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(60, 12)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent")
        for i in range(60):
            transcript.append_text("a1", f"Line {i} of the answer.\n\n")
        await pilot.pause()
        assert "Line 59" in transcript.visible_text() and transcript.following
        transcript.focus()
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        assert not transcript.following
        top_before = transcript.scroll_offset.y
        text_before = transcript.visible_text()
        for i in range(60, 80):
            transcript.append_text("a1", f"Line {i} of the answer.\n\n")
        await pilot.pause()
        assert transcript.scroll_offset.y == top_before and transcript.visible_text() == text_before
        await pilot.press("end")
        await pilot.pause()
        assert transcript.following and "Line 79" in transcript.visible_text()
        await pilot.press("home")
        await pilot.pause()
        assert transcript.visible_text().startswith("Line 0 of the answer.")
        assert not transcript.following


async def test_scrolling_into_never_rendered_blocks_does_not_jump() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(50, 15)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent")
        for i in range(400):  # varied lengths, so height estimates are off
            transcript.append_text("a1", f"Para {i} " + "word " * (i % 17) + "\n\n")
        await pilot.pause()
        rendered = transcript.render_count
        assert rendered < 40  # only the end was rendered
        transcript.focus()
        for _ in range(120):
            before = transcript.visible_text().splitlines()
            await pilot.press("up")
            after = transcript.visible_text().splitlines()
            n = min(len(before), len(after)) - 1
            assert after[1 : n + 1] == before[:n]  # everything moved down exactly one line
        await pilot.press("home")
        assert transcript.visible_text().startswith("Para 0\n\nPara 1 word")


async def test_set_renderable_adds_then_replaces_only_that_block() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(60, 20)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent", "Before the tool.")
        transcript.set_renderable("tc1", Text("○ Reading file  pending"))
        transcript.add_entry("a2", "agent", "After the tool.")
        await pilot.pause()
        assert "○ Reading file  pending" in transcript.visible_text()
        before = transcript.render_count
        transcript.set_renderable("tc1", Text("● Reading file  completed\n   ↳ /tmp/x.py"))
        await pilot.pause()
        seen = transcript.visible_text()
        assert "● Reading file  completed" in seen and "pending" not in seen and "↳ /tmp/x.py" in seen
        assert transcript.render_count - before == 1
        assert seen.index("Before") < seen.index("Reading") < seen.index("After")


async def test_resize_re_renders_at_the_new_width() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(100, 20)) as pilot:
        transcript = app.query_one(Transcript)
        words = " ".join(f"word{i}" for i in range(30))
        transcript.add_entry("a1", "agent", words)
        await pilot.pause()
        wide = transcript.visible_text().splitlines()
        before = transcript.render_count
        await pilot.resize_terminal(40, 20)
        await pilot.pause()
        narrow = transcript.visible_text().splitlines()
        assert transcript.render_count > before
        assert len(narrow) > len(wide) and max(len(line) for line in narrow) <= 40
        assert " ".join(" ".join(narrow).split()) == words


def test_snapshot_small_transcript(snap_compare) -> None:
    async def fill(pilot) -> None:
        transcript = pilot.app.query_one(Transcript)
        transcript.add_entry("u1", "user", "Add a `--verbose` flag, please.")
        transcript.add_entry("th", "thought", "The CLI lives in main.py.\nArgparse is used.\n")
        transcript.add_entry("a1", "agent")
        for piece in chunked(ANSWER, 7):
            transcript.append_text("a1", piece)
        transcript.add_entry("n1", "notice", "Turn cancelled", title="warning")
        await pilot.pause()

    assert snap_compare(TranscriptApp(), terminal_size=(70, 32), run_before=fill)


async def test_a_scroll_down_short_of_a_grown_end_keeps_following() -> None:
    """A replay or flood can grow the end while the view scrolls down to the old one: still following."""
    app = TranscriptApp()
    async with app.run_test(size=(60, 12)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent")
        for i in range(60):
            transcript.append_text("a1", f"Line {i} of the answer.\n\n")
        await pilot.pause()
        assert transcript.following and transcript.max_scroll_y > 20
        short = transcript.max_scroll_y - 10
        transcript.watch_scroll_y(short - 5, short)  # moved down, but the end is further on
        assert transcript.following
        transcript.watch_scroll_y(short, short - 5)  # moved up: the reader is looking back
        assert not transcript.following
        await pilot.press("end")
        await pilot.pause()
        assert transcript.following and "Line 59" in transcript.visible_text()


ANSWERS = Path(__file__).parent / "fixtures" / "markdown" / "answers"


def entry_lines_and_whole_render(transcript: Transcript, key: str, doc: str) -> tuple[list[tuple], list[tuple]]:
    """The entry's lines less its gap line, and Rich's whole-document render of `doc` (with the
    transcript's code background and theme), leading and trailing blank lines trimmed, normalized."""
    from rat_tui.ui.widgets.markdown_stream import markdown, parse

    entry = transcript._by_key[key]
    width = transcript._width
    got = [strip for seg in entry.body for strip in transcript.strips(entry, seg)][:-1]
    tokens, _refs = parse(doc, {})
    whole = markdown(tokens, transcript._code_theme(), transcript._code_background())
    console = transcript.app.console
    lines = console.render_lines(whole, console.options.update_width(width), pad=True)
    blank = lambda line: all(not s.text.strip() and not (s.style and s.style.bgcolor) for s in line)  # noqa: E731
    while lines and blank(lines[0]):
        lines.pop(0)
    while lines and blank(lines[-1]):
        lines.pop()
    want = [Strip(line, width).apply_style(transcript._base()) for line in lines]

    def norm(strip: Strip) -> tuple:
        return tuple((s.text, s.style) for s in Segment.simplify(list(strip)) if s.text)

    return [norm(s) for s in got], [norm(s) for s in want]


@pytest.mark.parametrize("name", ["01-nested-list-with-code", "04-link-references", "19-long-numbered-list",
                                  "21-long-code"])
async def test_streamed_answer_shows_the_lines_of_the_whole_render(name: str) -> None:
    """The real widget, fed in 7-character chunks with frames between: the entry's lines are Rich's
    whole-document render (with the transcript's code background and theme) less its gap line."""
    doc = (ANSWERS / f"{name}.md").read_text(encoding="utf-8")
    app = TranscriptApp()
    async with app.run_test(size=(80, 30)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent")
        for n, piece in enumerate(chunked(doc, 7)):
            transcript.append_text("a1", piece)
            if n % 5 == 0:
                await pilot.pause()
        await pilot.pause()
        transcript.visible_text()  # flushes the last batch
        got, want = entry_lines_and_whole_render(transcript, "a1", doc)
        assert got == want


class TypingApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()
        yield Input()


async def test_a_flood_arriving_at_once_is_cut_a_slice_per_turn_with_keys_between(monkeypatch) -> None:
    """Thousands of lines between two flushes (a flood) are cut into blocks at most FLOOD_SYNC_LINES at a
    time, a slice per turn of the loop: keys typed meanwhile are handled before the batch is cut (not after
    all of it), and once cut the entry shows the lines of the whole render."""
    from rat_tui.ui.widgets import markdown_stream

    sizes: list[int] = []
    parse = markdown_stream.parse

    def counting(text: str, refs: dict, *, inline: bool = True):
        sizes.append(text.count("\n"))
        return parse(text, refs, inline=inline)

    monkeypatch.setattr(markdown_stream, "parse", counting)
    doc = "\n\n".join(path.read_text(encoding="utf-8") for path in sorted(ANSWERS.glob("*.md"))) * 4
    assert doc.count("\n") > 15 * FLOOD_SYNC_LINES
    app = TypingApp()
    async with app.run_test(size=(80, 30)) as pilot:
        transcript = app.query_one(Transcript)
        field = app.query_one(Input)
        field.focus()
        transcript.add_entry("a1", "agent")
        await pilot.pause()
        behind_at_key: list[bool] = []
        field.watch_value = lambda value: behind_at_key.append(bool(transcript._dirty or transcript._cycle))  # type: ignore[method-assign]
        sizes.clear()
        transcript.append_text("a1", doc)  # one batch, as a flood's
        await pilot.press(*"typing")
        while transcript.pacer.flush_pending:
            await pilot.pause()
        assert field.value == "typing"
        assert behind_at_key[0], "the first key waited for the whole batch"
        assert max(sizes) <= FLOOD_SYNC_LINES, sorted(sizes)[-5:]
        got, want = entry_lines_and_whole_render(transcript, "a1", doc)
        assert got == want


async def test_a_thousand_messages_arriving_at_once_are_cut_a_slice_per_turn_with_keys_between(monkeypatch) -> None:
    """A `session/load` replay delivers a thousand short messages at a time: a flush cuts at most
    FLOOD_SYNC_LINES lines of them (not all of them, 40 ms before), keys typed meanwhile are handled
    before they are all cut, and once cut every message shows its whole render."""
    from rat_tui.ui.widgets import markdown_stream

    parsed: list[int] = []  # lines parsed, per flush
    parse = markdown_stream.parse

    def counting(text: str, refs: dict, *, inline: bool = True):
        if parsed:
            parsed[-1] += text.count("\n")
        return parse(text, refs, inline=inline)

    monkeypatch.setattr(markdown_stream, "parse", counting)
    flush = FlushPacer.flush

    def counted_flush(self, force: bool = False) -> None:
        parsed.append(0)
        flush(self, force)

    monkeypatch.setattr(FlushPacer, "flush", counted_flush)
    message = "## Step {n}\n\nThis is paragraph {n} with some *emphasis*\nand a `code span`.\n\n- item one\n- item **two**\n\nDone {n}.\n"
    app = TypingApp()
    async with app.run_test(size=(80, 30)) as pilot:
        transcript = app.query_one(Transcript)
        field = app.query_one(Input)
        field.focus()
        await pilot.pause()
        behind_at_key: list[bool] = []
        field.watch_value = lambda value: behind_at_key.append(bool(transcript._dirty or transcript._cycle))  # type: ignore[method-assign]
        parsed.clear()
        for n in range(1000):  # one delivery
            transcript.add_entry(f"a{n}", "agent")
            transcript.append_text(f"a{n}", message.format(n=n))
        await pilot.press(*"typing")
        while transcript.pacer.flush_pending or transcript._cycle:
            await pilot.pause()
        assert field.value == "typing"
        assert behind_at_key[0], "the first key waited for all the messages"
        lines = message.count("\n")
        assert len([count for count in parsed if count]) >= 1000 * lines // FLOOD_SYNC_LINES
        assert max(parsed) <= FLOOD_SYNC_LINES + lines + ENTRY_SYNC_LINES, sorted(parsed)[-5:]
        for n in (0, 517, 999):
            got, want = entry_lines_and_whole_render(transcript, f"a{n}", message.format(n=n))
            assert got == want


async def test_a_slice_of_a_long_cycle_does_work_for_its_own_entries_only(monkeypatch) -> None:
    """A `session/load` of 50,000 updates makes cycles of thousands of entries: a slice took the rest of them
    into a new set (every entry hashed again, per slice: 2.9 million adds in that replay). A slice now
    touches the entries it cuts; the others wait in order, and an entry replaced meanwhile is skipped."""
    from rat_tui.ui.widgets.markdown_stream import Entry

    app = TranscriptApp()
    async with app.run_test(size=(80, 30)) as pilot:
        transcript = app.query_one(Transcript)
        await until(pilot, lambda: not transcript.warming, "the markdown warm-up")
        for n in range(5000):  # one delivery, no turn of the loop between
            transcript.add_entry(f"a{n}", "agent")
            transcript.append_text(f"a{n}", f"Answer {n}.\n")
        hashed = 0
        hash_of = object.__hash__

        def counting(entry: Entry) -> int:
            nonlocal hashed
            hashed += 1
            return hash_of(entry)

        transcript._flush_now()  # the cycle begins: every dirty entry joins it (once)
        left = len(transcript._cycle)
        assert left > 4000
        first = next(iter(transcript._cycle))
        transcript.add_entry(first.key, "agent")  # replaced (a tool call's entry is, when its kind changes)
        monkeypatch.setattr(Entry, "__hash__", counting)
        transcript._flush_now()
        assert hashed <= 2 * FLOOD_SYNC_LINES // ENTRY_SYNC_LINES, hashed  # the old set: every entry left
        assert first not in transcript._cycle  # skipped, not cut
        assert left - len(transcript._cycle) <= FLOOD_SYNC_LINES // ENTRY_SYNC_LINES + 1
        monkeypatch.undo()
        transcript.pacer.flush_pending = True
        transcript.pacer.flush()  # the rest of the cycle, a slice per turn as it goes
        await until(pilot, lambda: transcript_flushed(transcript), "the cycle cut")
        assert "Answer 4999." in transcript.plain_text


async def test_end_at_the_end_already_drawn_draws_nothing_again() -> None:
    """Enter (and End) brings the transcript to its end (action_scroll_end). Already there and drawn, it drew
    the whole transcript again in the next frame: 5 ms headless, 7-9 in tmux, as an answer's first lines came
    in. Scrolled up, it comes back to the end and draws it."""
    app = TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent")
        transcript.append_text("a1", "".join(f"Line {i} of the answer.\n\n" for i in range(80)))
        await until(pilot, lambda: transcript_flushed(transcript) and not transcript.pacer.unsettled
                    and transcript.max_scroll_y > 0 and transcript.scroll_offset.y == transcript.max_scroll_y,
                    "the answer drawn at its end")
        refreshed: list[int] = []
        refresh = transcript.refresh
        transcript.refresh = lambda *args, **kwargs: refreshed.append(1) or refresh(*args, **kwargs)  # type: ignore[method-assign]
        transcript.action_scroll_end()
        assert refreshed == [], "drawn again though nothing changed"
        transcript.action_scroll_home()
        await until(pilot, lambda: transcript.scroll_offset.y == 0, "the top")
        transcript.action_scroll_end()
        await until(pilot, lambda: transcript.scroll_offset.y == transcript.max_scroll_y, "back at the end")
        assert refreshed, "the end not drawn"
