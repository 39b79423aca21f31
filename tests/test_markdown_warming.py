"""Until the app's warm-up thread has imported markdown, the transcript shows source text and parses
nothing: importing it on the loop meanwhile waited behind that thread (100-300 ms, keys waiting)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import Input

from rat_tui.app import RatApp
from rat_tui.ui.widgets import markdown_stream
from rat_tui.ui.widgets.transcript import Transcript

from .helpers.app import scripted_named, until

ANSWER = "# Plan of attack\n\n- **read** the config\n- write the `patch`\n\nDone *today*.\n"


class ChatApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()
        yield Input(id="composer")


def shown(transcript: Transcript) -> str:
    """What the transcript draws now, as a frame would (visible_text would render it all for real)."""
    strips = transcript.render_lines(Region(0, 0, transcript.size.width, transcript.size.height))
    return "\n".join(strip.text.rstrip() for strip in strips)


@pytest.fixture
def warm_up_pending(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The state between the app's first frame and the end of its warm-up's markdown import (the event:
    set when it ends)."""
    done = threading.Event()
    monkeypatch.setattr(markdown_stream, "_warmed", done)
    monkeypatch.setattr(markdown_stream, "_warm_waiters", [])
    monkeypatch.setattr(markdown_stream, "_warm_planned", True)
    return done


def finish_warm_up() -> None:
    """What the warm-up thread does once markdown is imported (markdown_stream.warm_up), from a thread."""
    thread = threading.Thread(target=markdown_stream._warm_done)
    thread.start()
    thread.join()


async def test_markdown_shows_as_source_until_the_warm_up_has_imported_it(
        warm_up_pending: threading.Event, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[bool] = []
    parse = markdown_stream.parse
    monkeypatch.setattr(markdown_stream, "parse", lambda *a, **k: parsed.append(True) or parse(*a, **k))
    app = ChatApp()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        app.query_one(Input).focus()
        transcript.add_entry("u1", "user", "please **fix** it")
        transcript.add_entry("a1", "agent")
        for i, piece in enumerate(ANSWER.split(" ")):  # streamed while the user types
            transcript.append_text("a1", piece if i == 0 else " " + piece)
            await pilot.press("abcdefghijklmnop"[i % 16])
        await until(pilot, lambda: "# Plan of attack" in shown(transcript), "the answer's source text")
        assert "please **fix** it" in shown(transcript) and "- **read** the config" in shown(transcript)
        assert app.query_one(Input).value == "abcdefghijklmnop"[: len(ANSWER.split(" "))]
        assert not parsed  # nothing cut into blocks or rendered as markdown on the loop meanwhile
        # ...and nothing looks again until the warm-up calls back (polling redrew the screen through startup)
        assert transcript._warm_waiting and not transcript.pacer.flush_pending and not transcript._catch_up_pending

        finish_warm_up()
        await until(pilot, lambda: "**" not in shown(transcript) and "Plan of attack" in shown(transcript),
                    "the answer rendered as markdown")
        text = shown(transcript)
        assert "# Plan" not in text and "• read the config" in text and "please fix it" in text
        assert parsed
        assert transcript.visible_text() == text.rstrip("\n")  # the same as rendering it all at once


async def test_visible_text_renders_markdown_even_before_the_warm_up(warm_up_pending: threading.Event) -> None:
    app = ChatApp()
    async with app.run_test(size=(60, 16)):
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent", ANSWER)
        assert "• read the config" in transcript.visible_text()


async def test_an_app_closed_before_its_warm_up_leaves_markdown_to_the_loop(
        tmp_path: Path, warm_up_pending: threading.Event, monkeypatch: pytest.MonkeyPatch) -> None:
    markdown_stream.plan_warm_up(False)
    monkeypatch.setattr(RatApp, "_warm_up", lambda self: None)  # closed before the warm-up began
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.first_session.state.status == "ready", "ready")
        assert markdown_stream.warming()  # planned at the first frame
    assert not markdown_stream.warming()


async def test_the_warm_up_ends_the_wait(tmp_path: Path, warm_up_pending: threading.Event) -> None:
    markdown_stream.plan_warm_up(False)
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.warm_thread is not None, "the warm-up")
        await until(pilot, lambda: not app.warm_thread.is_alive(), "the warm-up's end")
        assert warm_up_pending.is_set() and not markdown_stream.warming()


async def test_the_warm_up_calls_the_transcript_back_in_the_app_s_context(
        warm_up_pending: threading.Event, monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up's thread calls the transcript back (ui/loop_hop.py): in that thread's context Textual's
    `active_app` was unset, and a paced flush's timer started there raised LookupError when it ticked (as
    the app closed after SIGTERM, rat crashed before it had killed its agents)."""
    from textual._context import active_app

    seen: list[object] = []
    schedule = Transcript._schedule

    def spied(self: Transcript) -> None:
        seen.append(active_app.get(None))
        schedule(self)

    monkeypatch.setattr(Transcript, "_schedule", spied)
    app = ChatApp()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a1", "agent", ANSWER)
        await until(pilot, lambda: transcript._warm_waiting, "the transcript waiting for the warm-up")
        seen.clear()
        finish_warm_up()
        await until(pilot, lambda: bool(seen), "the warm-up's call back")
        assert seen[0] is app
