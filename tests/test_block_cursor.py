"""The transcript's block cursor: n/p between blocks, [ ] between prompts, x/v/y act on the block
under it (copied to the clipboard), highlighted while the transcript has the focus."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.ui.screens.output_viewer import OutputViewer

from .helpers.app import scripted_named as scripted
from .helpers.app import until

CALL = {"sessionUpdate": "tool_call", "toolCallId": "ls", "title": "ls -la", "kind": "execute", "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "README.md\nsrc\ntests"}}]}
TURNS = [[{"update": CALL}, {"chunk": "Here are the files.\n"}], [{"chunk": "Second answer.\n"}]]


async def two_turns(pilot, app: RatApp) -> None:
    view = app.tabs.active_view
    await until(pilot, lambda: view.session.state.status == "ready", "ready")
    for prompt, answer in (("list files", "Here are the files."), ("again", "Second answer.")):
        await pilot.press(*prompt, "enter")
        await until(pilot, lambda answer=answer: answer in view.transcript.plain_text, answer)
        await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")


@pytest.mark.slow
async def test_block_cursor_moves_and_acts_on_its_block(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": TURNS}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await two_turns(pilot, app)
        view = app.tabs.active_view
        transcript = view.transcript
        await pilot.press("ctrl+t", "p")  # from the bottom: the last answer
        assert transcript.entry_source(transcript.cursor_key) == "Second answer.\n"
        await pilot.press("y")
        assert app.clipboard == "Second answer.\n"
        await pilot.press("[")  # the previous prompt
        assert transcript.entry_source(transcript.cursor_key).startswith("again")
        await pilot.press("p", "n", "p")  # back over the first answer... to the tool call
        await pilot.press("p")
        call = next(iter(view.session.state.tool_calls.values()))
        assert transcript.cursor_key == call.key
        await pilot.press("y")  # a tool call's whole output
        assert app.clipboard.startswith("README.md\nsrc\ntests")
        await pilot.press("x")  # expands the call under the cursor
        await until(pilot, lambda: call.expanded, "the call expanded")
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, OutputViewer), "the viewer of that call")
        assert "ls -la" in app.screen.tool_title


def test_snapshot_block_cursor(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot) -> None:
        await two_turns(pilot, pilot.app)
        await pilot.press("ctrl+t", "p", "p", "p")  # the block cursor on the first answer
        await pilot.pause()

    app = RatApp(scripted({"turns": TURNS}, tmp_path, "one"), Path("/"))
    assert snap_compare(app, terminal_size=(90, 26), run_before=run_before)


CODE_ANSWER = "Two snippets:\n\n```python\nprint('one')\n```\n\nand\n\n```sh\necho two\nls\n```\n\nThat is all.\n"


@pytest.mark.slow
async def test_the_cursor_steps_into_code_blocks_and_y_copies_one_without_its_fences(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": [[{"chunk": CODE_ANSWER}]]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.tabs.active_view
        transcript = view.transcript
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"snippets", "enter")
        await until(pilot, lambda: "That is all." in transcript.plain_text, "the answer")
        await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")
        written: list[str] = []
        driver_write = app._driver.write
        app._driver.write = lambda data: (written.append(data), driver_write(data))[1]  # type: ignore[method-assign]

        await pilot.press("ctrl+t", "p")  # the answer
        assert transcript.entry_source(transcript.cursor_key) == CODE_ANSWER and transcript.cursor_code is None
        await pilot.press("n")  # into its first code block
        assert transcript.cursor_code == 0
        await pilot.press("y")
        assert app.clipboard == "print('one')\n"
        assert "\x1b]52;c;" + base64.b64encode(b"print('one')\n").decode() + "\a" in written  # OSC 52
        assert any("Copied code block 1 of 2 (python)" in n.message for n in app._notifications)
        await pilot.press("n", "y")  # the second one
        assert app.clipboard == "echo two\nls\n"
        await pilot.pause()
        lines = transcript.visible_text().splitlines()
        first, end = transcript._cursor_lines  # only the code block is highlighted, not the whole answer
        top = round(transcript.scroll_offset.y)
        shown = [line.strip() for line in lines[first - top : end - top]]
        assert "echo two" in shown and "ls" in shown and "print('one')" not in shown and "and" not in shown
        await pilot.press("n")  # past the last block: no entry below, the cursor stays
        assert transcript.cursor_code == 1
        await pilot.press("p", "p")  # back: the first code block, then the answer itself
        assert transcript.cursor_code is None
        await pilot.press("y")
        assert app.clipboard == CODE_ANSWER
        await pilot.press("p", "n")  # the prompt, then into the answer again: the answer first
        assert transcript.cursor_code is None and transcript.entry_source(transcript.cursor_key) == CODE_ANSWER
        await pilot.press("[", "]")  # prompts only: no stop in code blocks
        assert transcript.cursor_code is None


def test_snapshot_block_cursor_on_a_code_block(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot) -> None:
        view = pilot.app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"snippets", "enter")
        await until(pilot, lambda: "That is all." in view.transcript.plain_text, "the answer")
        await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")
        await pilot.press("ctrl+t", "p", "n", "n")  # the answer's second code block: only it highlighted
        await pilot.pause()

    app = RatApp(scripted({"turns": [[{"chunk": CODE_ANSWER}]]}, tmp_path, "one"), Path("/"))
    assert snap_compare(app, terminal_size=(90, 30), run_before=run_before)


EDIT = {"sessionUpdate": "tool_call", "toolCallId": "ed", "title": "Edit app.py", "kind": "edit", "status": "completed",
        "content": [{"type": "diff", "path": "/w/app.py", "oldText": "a = 1\nb = 2\n", "newText": "a = 1\nb = 3\n"},
                    {"type": "diff", "path": "/w/new.py", "oldText": None, "newText": "print('new')\n"}]}


@pytest.mark.slow
async def test_y_on_an_edit_copies_its_diffs_as_one_unified_diff(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": [[{"update": EDIT}, {"chunk": "Edited.\n"}]]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"edit it", "enter")
        await until(pilot, lambda: "Edited." in view.transcript.plain_text, "the answer")
        await pilot.press("ctrl+t", "p", "p")  # the answer, then the edit
        call = next(iter(view.session.state.tool_calls.values()))
        assert view.transcript.cursor_key == call.key
        await pilot.press("y")  # built off the UI thread: wait for the notice it sends when copied
        await until(pilot, lambda: any("Copied the diff of 2 files" in n.message for n in app._notifications),
                    "the copy")
        assert app.clipboard == (
            "--- a/w/app.py\n+++ b/w/app.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n"
            "--- /dev/null\n+++ b/w/new.py\n@@ -0,0 +1 @@\n+print('new')\n")


THREE_TURNS = [[{"chunk": "First answer.\n"}], [{"chunk": "".join(f"Filler line {n}.\n\n" for n in range(40))}],
               [{"chunk": "Last answer.\n"}]]


@pytest.mark.slow
async def test_y_with_the_cursor_left_off_screen_copies_the_answer_in_view(tmp_path: Path) -> None:
    """The cursor put on the first answer, then the view scrolled to the end, away from it: `y` copies what is
    on screen (the last answer), not the block two turns up."""
    app = RatApp(scripted({"turns": THREE_TURNS}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.tabs.active_view
        transcript = view.transcript
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        for prompt, answer in (("first", "First answer."), ("fill", "line 39."), ("last", "Last answer.")):
            await pilot.press(*prompt, "enter")
            await until(pilot, lambda answer=answer: answer in transcript.plain_text, answer)
            await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")
        await pilot.press("ctrl+t", *"ppppp")  # up from the end, block by block, to the first answer
        first = transcript.cursor_key
        assert transcript.entry_source(first) == "First answer.\n"
        await pilot.press("y")  # on screen (the cursor brought it there): that block
        assert app.clipboard == "First answer.\n"
        await pilot.press("end")  # to the end: the first answer off screen, the cursor still on it
        await until(pilot, lambda: "Last answer." in transcript.visible_text(), "the end in view")
        assert transcript.cursor_key == first and not transcript.cursor_in_view()
        await pilot.press("y")
        assert app.clipboard == "Last answer.\n"
