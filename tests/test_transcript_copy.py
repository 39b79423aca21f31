"""Select and copy in the transcript: mouse drag then Ctrl+C puts the text on the clipboard (Textual's
clipboard and an OSC 52 sequence on the terminal), with no crash; `main()` exits non-zero on a crash."""

from __future__ import annotations

import base64

from textual.app import App, ComposeResult

from rat_tui.ui.widgets.transcript import Transcript

from .helpers.app import transcript_flushed, until


class TranscriptApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()


def terminal_writes(app: App) -> list[str]:
    """Everything the app writes to the terminal from now on (the headless driver drops it)."""
    written: list[str] = []
    driver = app._driver
    original = driver.write
    driver.write = lambda data: (written.append(data), original(data))[1]  # type: ignore[method-assign]
    return written


async def test_drag_then_ctrl_c_copies_the_selected_lines() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(60, 20)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("u1", "user", "first question")
        transcript.add_entry("a1", "agent", "alpha line\n\nbeta line\n\ngamma line\n")
        await pilot.pause()
        lines = transcript.visible_text().splitlines()
        top = lines.index("alpha line")
        bottom = lines.index("gamma line")
        await pilot.mouse_down(Transcript, offset=(0, top))
        await pilot.hover(Transcript, offset=(4, bottom))
        await pilot.mouse_up(Transcript, offset=(4, bottom))
        await pilot.pause()
        assert app.screen.get_selected_text() == "alpha line\n\nbeta line\n\ngamma"
        written = terminal_writes(app)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "alpha line\n\nbeta line\n\ngamma"
        expected = base64.b64encode(b"alpha line\n\nbeta line\n\ngamma").decode()
        assert f"\x1b]52;c;{expected}\a" in written  # OSC 52: works over SSH and inside tmux
        assert app.return_code in (None, 0)  # no crash (it was: Transcript._render hid Widget._render)


WRAPPED = ("The quick brown fox jumps over the lazy dog, and then it runs all the way back home again "
           "before the sun goes down.")
CODE_LINE = "total = first_value + second_value + third_value + fourth_value + fifth_value + sixth"


async def test_a_copied_wrapped_paragraph_has_no_line_breaks_where_the_screen_wrapped() -> None:
    """The screen wraps the paragraph and the long line of code at 40 columns; the clipboard has them whole, with
    the real line breaks (between paragraphs, between lines of code) kept."""
    app = TranscriptApp()
    async with app.run_test(size=(40, 30)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent", f"{WRAPPED}\n\nShort one.\n\n```\n{CODE_LINE}\nx = 1\n```\n")
        await pilot.pause()
        lines = transcript.visible_text().splitlines()
        top = next(y for y, line in enumerate(lines) if line.startswith("The quick"))
        bottom = next(y for y, line in enumerate(lines) if line.strip() == "x = 1")
        assert bottom - top > 6  # wrapped on screen: the paragraph and the code line take several rows each
        await pilot.mouse_down(Transcript, offset=(0, top))
        await pilot.hover(Transcript, offset=(lines[bottom].index("1") + 1, bottom))
        await pilot.mouse_up(Transcript, offset=(lines[bottom].index("1") + 1, bottom))
        await pilot.pause()
        written = terminal_writes(app)
        await pilot.press("ctrl+c")
        await pilot.pause()
        copied = [line.strip() for line in app.clipboard.split("\n")]
        # (The blank rows between the blocks are copied as shown: the code block's top row is its padding.)
        assert [line for line in copied if line] == [WRAPPED, "Short one.", CODE_LINE, "x = 1"], app.clipboard
        assert f"{WRAPPED}\n\nShort one.\n\n" in app.clipboard
        assert f"\x1b]52;c;{base64.b64encode(app.clipboard.encode()).decode()}\a" in written


def test_a_crash_exits_non_zero_and_says_where_the_log_is(tmp_path, capsys) -> None:
    from rat_tui.__main__ import finished

    class Crashing(App):
        def on_mount(self) -> None:
            raise RuntimeError("boom")

    assert finished(Crashing(), tmp_path / "rat.log", headless=True) == 1
    assert f"the log is {tmp_path / 'rat.log'}" in capsys.readouterr().err


async def test_new_content_below_is_marked_while_scrolled_up_and_end_clears_it() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(60, 12)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent", "".join(f"line {n}\n\n" for n in range(40)))
        await until(pilot, lambda: transcript_flushed(transcript), "the first answer flushed")  # before scrolling up
        await pilot.press("home")  # scrolled up: no longer following
        await pilot.pause()
        assert not transcript.new_below
        transcript.add_entry("a2", "agent", "a later answer\n")
        # The first flush (40 paragraphs) cost over PACED_FLUSH: this one may wait on a timer past a pause.
        await until(pilot, lambda: transcript_flushed(transcript), "the later answer flushed")
        await pilot.pause()  # the frame after it
        assert transcript.new_below
        assert "new content below" in "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        await pilot.press("end")
        await pilot.pause()
        assert not transcript.new_below and "a later answer" in transcript.visible_text()


ANSWER = ("See rat_tui/app.py for the --cwd flag. Done.\n\n- item one\n- item two\n\n"
          "```python\nx = 1\ny = 2\n```\n\nafter the code\n")


async def test_double_click_selects_a_word_and_triple_click_a_block_then_ctrl_c_copies_it() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(70, 24)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent", ANSWER)
        await pilot.pause()
        lines = transcript.visible_text().splitlines()
        first = next(y for y, line in enumerate(lines) if line.startswith("See "))
        written = terminal_writes(app)

        await pilot.double_click(Transcript, offset=(lines[first].index("app.py"), first))
        assert app.screen.get_selected_text() == "rat_tui/app.py"  # a path is one word
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "rat_tui/app.py"
        assert f"\x1b]52;c;{base64.b64encode(b'rat_tui/app.py').decode()}\a" in written

        await pilot.double_click(Transcript, offset=(lines[first].index("cwd"), first))
        assert app.screen.get_selected_text() == "--cwd"
        await pilot.double_click(Transcript, offset=(lines[first].index("Done") + 2, first))
        assert app.screen.get_selected_text() == "Done"  # the sentence's period is not part of it

        two = lines.index(" • item one")
        await pilot.triple_click(Transcript, offset=(6, two + 1))
        assert app.screen.get_selected_text() == " • item one\n • item two"  # the whole block (a list), as shown
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == " • item one\n • item two"

        code = next(y for y, line in enumerate(lines) if line.strip() == "y = 2")
        await pilot.triple_click(Transcript, offset=(3, code))
        selected = app.screen.get_selected_text()
        assert [line.strip() for line in selected.splitlines()] == ["x = 1", "y = 2"]  # the code block, no more
        assert app.return_code in (None, 0)


async def test_triple_click_selects_a_long_code_block_the_stream_cut_into_pieces() -> None:
    code = "".join(f"x{i} = {i}\n" for i in range(40))
    app = TranscriptApp()
    async with app.run_test(size=(70, 60)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent", "")
        for line in f"intro\n\n```python\n{code}```\n\nend\n".splitlines(keepends=True):
            transcript.append_text("a1", line)  # streamed: the block arrives in pieces of a few lines
            await pilot.pause()
        lines = transcript.visible_text().splitlines()
        middle = next(y for y, line in enumerate(lines) if line.strip() == "x20 = 20")
        await pilot.triple_click(Transcript, offset=(4, middle))
        assert [line.strip() for line in app.screen.get_selected_text().splitlines()] == code.splitlines()


def test_soft_wraps_are_found_by_the_characters_and_a_box_keeps_its_breaks() -> None:
    from rat_tui.ui.widgets.soft_wraps import join_lines, wrap_joins

    shown = ["alpha beta", "gamma", "", " • an item that", "   wraps", "code_cut_he", "re  x", "    indented"]
    wide = ["alpha beta gamma", "", " • an item that wraps", "code_cut_here  x", "    indented"]
    joins = wrap_joins(shown, wide)
    assert joins == [" ", "\n", "\n", " ", "\n", "", "\n"]
    assert join_lines(shown, joins) == "alpha beta gamma\n\n • an item that wraps\ncode_cut_here  x\n    indented"
    assert wrap_joins(["│ a │", "│ b │"], ["│ a b │"]) is None  # each row has its own borders: not a wrap
    assert wrap_joins(["one", "two"], ["one"]) is None  # more on screen than rendered wide: keep the breaks
