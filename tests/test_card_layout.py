"""Tool cards: a command's output shown from its end (tail first) and opened there by `v`; wrapped lines
that keep their indent; a click on a card's header expands or collapses it."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from rat_tui.app import RatApp
from rat_tui.state.models import ToolCallEntry
from rat_tui.ui.screens.output_viewer import OutputViewer, output_text
from rat_tui.ui.widgets.tool_call import render_tool_call

from .helpers.app import scripted_named as scripted
from .helpers.app import until

BUILD_LOG = "\n".join(f"step {n}: compiling module_{n}.c" for n in range(3000)) + \
    "\nerror: undefined reference to `main'\nmake: *** [all] Error 1\n"
READ_TEXT = "\n".join(f"line {n} of the file" for n in range(50))


def _call(call_id: str, title: str, kind: str, text: str) -> dict:
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, "kind": kind, "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": text}}],
            "rawInput": {"command": title}}


TURN = [{"update": _call("build", "make all", "execute", BUILD_LOG)},
        {"update": _call("read", "Read notes.txt", "read", READ_TEXT)}]


def card_text(call: ToolCallEntry, width: int = 80) -> str:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(render_tool_call(call, {}))
    return console.export_text()


@pytest.mark.slow
async def test_an_execute_card_shows_its_last_lines_and_v_opens_at_the_end(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": [TURN]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 60)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"build", "enter")
        await until(pilot, lambda: "read" in view.session.state.tool_calls, "the tool calls")
        await until(pilot, lambda: view.session.state.status == "ready", "the turn's end")
        await pilot.press("end")
        await until(pilot, lambda: "line 7 of the file" in view.transcript.visible_text(), "the cards drawn")
        shown = view.transcript.visible_text().splitlines()
        # The command's card: the note first, then its last lines, the error among them.
        note = next(i for i, line in enumerate(shown) if "earlier lines" in line)
        assert shown[note].strip() == "… 2994 earlier lines (v to view all)"
        assert [line.strip() for line in shown[note + 1 : note + 9]] == [
            *(f"step {n}: compiling module_{n}.c" for n in range(2994, 3000)),
            "error: undefined reference to `main'", "make: *** [all] Error 1"]
        assert "step 0: compiling" not in "\n".join(shown)
        # Another kind keeps its first lines, and says how many follow.
        assert any(line.strip() == "line 0 of the file" for line in shown)
        assert any("… 42 more lines · x expands" in line for line in shown)
        assert "line 8 of the file" not in "\n".join(shown)
        # The block cursor onto the command's card (p from the bottom: the read card, then it).
        await pilot.press("ctrl+t", "p", "p")
        assert view.transcript.cursor_key == view.session.state.tool_calls["build"].key
        # v: the whole output, opened on its last line.
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, OutputViewer), "the viewer")
        viewer = app.screen
        await until(pilot, lambda: viewer.view.scroll_offset.y == viewer.view.max_scroll_y > 0, "the viewer's end")
        assert viewer.view.lines[-1] == "make: *** [all] Error 1"
        assert viewer.view.lines[0] == "── raw input ──"  # the command first, its output last
        await pilot.press("escape")
        # The read call's viewer opens at the top, as before.
        await pilot.press("n", "v")
        await until(pilot, lambda: isinstance(app.screen, OutputViewer), "the second viewer")
        await pilot.pause()
        assert app.screen.view.scroll_offset.y == 0 and app.screen.view.lines[0] == "line 0 of the file"


def test_expanded_execute_card_keeps_the_last_400_lines() -> None:
    call = ToolCallEntry("tc", "tc", title="make", kind="execute", status="completed",
                         content=[{"type": "content", "content": {"type": "text", "text": BUILD_LOG}}])
    call.expanded = True
    shown = card_text(call)
    lines = shown.splitlines()
    assert lines[1].strip() == "… 2602 earlier lines (v to view all)"
    assert lines[2].strip() == "step 2602: compiling module_2602.c"
    assert lines[-1].strip() == "make: *** [all] Error 1"
    assert "more lines" not in shown


def test_a_short_execute_output_has_no_note() -> None:
    call = ToolCallEntry("tc", "tc", title="ls", kind="execute", status="completed",
                         content=[{"type": "content", "content": {"type": "text", "text": "a\nb\n"}}])
    assert "earlier" not in card_text(call) and "more lines" not in card_text(call)


def test_wrapped_lines_keep_the_card_indent() -> None:
    long_line = " ".join(f"word{n}" for n in range(40))
    for kind in ("read", "execute"):
        call = ToolCallEntry("tc", "tc", title="t", kind=kind, status="completed",
                             content=[{"type": "content", "content": {"type": "text", "text": long_line}}])
        body = card_text(call, width=40).splitlines()[1:]
        assert len(body) > 3 and all(line.startswith("   word") for line in body), body


def header_row(transcript, title: str) -> int:
    return next(i for i, line in enumerate(transcript.visible_text().splitlines())
                if line.startswith("●") and title in line)


@pytest.mark.slow
async def test_a_click_on_a_card_header_expands_and_collapses_it(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": [TURN]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"read", "enter")
        await until(pilot, lambda: view.session.state.status == "ready" and "read" in view.session.state.tool_calls,
                    "the turn's end")
        transcript = view.transcript
        await until(pilot, lambda: "Read notes.txt" in transcript.visible_text(), "the card drawn")
        call = view.session.state.tool_calls["read"]
        row = header_row(transcript, "Read notes.txt")
        # A drag across the header selects text: no toggle.
        await pilot.mouse_down(transcript, offset=(2, row))
        await pilot.hover(transcript, offset=(20, row))
        await pilot.mouse_up(transcript, offset=(20, row))
        # A click on the header: expanded (once: the drag before it toggled nothing).
        await pilot.click(transcript, offset=(4, header_row(transcript, "Read notes.txt")))
        await until(pilot, lambda: call.expanded, "expanded by the click")
        await until(pilot, lambda: "line 49 of the file" in transcript.plain_text or
                    "line 49 of the file" in transcript.visible_text(), "the whole output drawn")
        assert call.expanded
        assert header_row(transcript, "Read notes.txt") == row  # the header stays under the pointer
        # A click on a body line does nothing; on the header again, collapsed.
        await pilot.click(transcript, offset=(4, header_row(transcript, "Read notes.txt") + 2))
        await pilot.click(transcript, offset=(4, header_row(transcript, "Read notes.txt")))
        await until(pilot, lambda: not call.expanded, "collapsed by the second click")
        await pilot.click(transcript, offset=(4, header_row(transcript, "Read notes.txt")))
        await until(pilot, lambda: call.expanded, "expanded again")  # the body click had toggled nothing


def test_a_long_title_wraps_under_itself() -> None:
    command = "pytest " + " ".join(f"tests/test_module_{n}.py" for n in range(12))
    call = ToolCallEntry("tc", "tc", title=command, kind="execute", status="in_progress")
    lines = card_text(call, width=60).splitlines()
    assert lines[0].startswith("◐ ▶  pytest tests/test_module_0.py")
    assert len(lines) >= 4 and all(line.startswith(" " * 5) and line[5] != " " for line in lines[1:])
    assert " ".join(" ".join(lines).split()).endswith("tests/test_module_11.py in progress")


def test_an_output_sent_as_one_fenced_block_shows_without_its_fences() -> None:
    """Claude's v1 Bash card (its recording): the output arrives as a ```console block."""
    fenced = "```console\nharness-shell-ok\nbig.txt\nhello.py\n```"
    call = ToolCallEntry("tc", "tc", title="ls", kind="execute", status="completed",
                         content=[{"type": "content", "content": {"type": "text", "text": fenced}}])
    shown = card_text(call)
    assert "```" not in shown and "console" not in shown
    assert [line.strip() for line in shown.splitlines()[1:4]] == ["harness-shell-ok", "big.txt", "hello.py"]
    assert "```" not in output_text(call, {})
    # text that is more than one block keeps its markers
    two = "```\na\n```\nand then\n```\nb\n```"
    mixed = ToolCallEntry("tc", "tc", title="t", kind="read", status="completed",
                          content=[{"type": "content", "content": {"type": "text", "text": two}}])
    assert card_text(mixed).count("```") == 4
