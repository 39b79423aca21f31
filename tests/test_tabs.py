"""Sessions in tabs: open, label and badge, switch, close (with session/close when supported)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.ui.screens.confirm import ConfirmScreen
from rat_tui.ui.screens.new_session import NewSessionScreen
from rat_tui.ui.tabs import tab_bar
from rat_tui.ui.tabs.view import SessionView

from .helpers.agents import received
from .helpers.app import labels, scripted_named, until

pytestmark = pytest.mark.slow


async def test_two_sessions_run_in_tabs_with_badges(tmp_path: Path, record_file: Path) -> None:
    closable = {"initialize_result": {"agentCapabilities": {"sessionCapabilities": {"close": {}}}},
                "turns": [[{"chunk": "first answer"}]]}
    slow = {"turns": [[{"sleep": 2.0}, {"chunk": "second answer"}]]}
    app = RatApp(scripted_named(closable, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        first = app.query_one(SessionView)
        await until(pilot, lambda: first.session.state.status == "ready", "first ready")
        second = await app.open_session(scripted_named(slow, tmp_path, "two"), tmp_path)
        await until(pilot, lambda: second.state.status == "ready", "second ready")
        assert len(app.tabs.views) == 2 and app.session is second
        await pilot.press(*"slow question", "enter")
        await until(pilot, lambda: second.state.status == "working", "second working")
        await pilot.press("alt+1")  # switch away while tab two works
        assert app.session is first.session
        await until(pilot, lambda: "✓" in labels(app)[1], "the done badge on the unseen tab")
        assert "Scripted fake agent · slow question" in labels(app)[1]
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: "first answer" in first.transcript.plain_text, "first answer")
        await pilot.press("alt+2")
        assert app.session is second and "✓" not in labels(app)[1]
        await pilot.press("alt+1", *"half", "alt+w")  # unsent words: closing asks first
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the close question")
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "the question closed")
        await pilot.press(*["backspace"] * 4, "alt+w")  # idle and nothing typed: closes at once
        await until(pilot, lambda: len(app.tabs.views) == 1, "the tab to close")
        assert not isinstance(app.screen, ConfirmScreen)
        assert app.session is second
    assert "session/close" in [m.get("method") for m in received(record_file)]


async def test_new_session_from_the_keyboard(tmp_path: Path) -> None:
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press("ctrl+n")
        await until(pilot, lambda: isinstance(app.screen, NewSessionScreen), "the picker")
        await pilot.press("down", "enter")  # the second choice is the demo agent
        await until(pilot, lambda: len(app.tabs.views) == 2, "a second tab")
        await until(pilot, lambda: app.session.state.status == "ready", "the demo ready")
        assert app.session.state.agent_name == "Demo agent"


async def test_two_sessions_stream_at_once_while_typing_in_one(tmp_path: Path) -> None:
    """Both agents stream in the same seconds; each transcript gets all of its own text and the
    prompt of the active tab keeps every key typed meanwhile."""
    go = tmp_path / "go"

    def streaming(word: str) -> dict:
        burst = [{"chunk": f"{word} ", "repeat": 400}, {"sleep": 0.05}]
        return {"turns": [[{"wait_file": str(go)}, *burst * 6, {"chunk": f"\n\n{word} done"}]]}

    app = RatApp(scripted_named(streaming("alpha"), tmp_path, "one"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        first = app.query_one(SessionView)
        await until(pilot, lambda: first.session.state.status == "ready", "first ready")
        await pilot.press(*"go one", "enter")
        second = await app.open_session(scripted_named(streaming("beta"), tmp_path, "two"), tmp_path)
        await until(pilot, lambda: second.state.status == "ready", "second ready")
        await pilot.press(*"go two", "enter")
        await until(pilot, lambda: first.session.busy and second.busy, "both turns running")
        go.write_text("")
        both_streaming = False

        def streamed(session) -> int:
            return sum(e.text.count(" ") for e in session.state.entries if getattr(e, "role", "") == "agent")

        async def watch() -> None:
            nonlocal both_streaming
            while first.session.busy or second.busy:
                if 0 < streamed(first.session) < 2400 and 0 < streamed(second) < 2400:
                    both_streaming = True
                await pilot.pause(0.01)

        watcher = asyncio.create_task(watch())
        await pilot.press(*"typed while both stream")
        await asyncio.wait_for(watcher, 60)
        view_two = app.tabs.active_view
        assert view_two is not None and view_two.session is second
        assert view_two.composer.text == "typed while both stream"
        assert both_streaming, "the two streams never overlapped"
        await until(pilot, lambda: "beta done" in view_two.transcript.plain_text, "tab two's end")
        assert view_two.transcript.plain_text.count("beta") == 2401
        await pilot.press("alt+1")
        await until(pilot, lambda: "alpha done" in first.transcript.plain_text, "tab one's end")
        assert first.transcript.plain_text.count("alpha") == 2401
        assert "beta" not in first.transcript.plain_text


async def test_a_badge_that_keeps_the_label_s_width_draws_the_tab_without_a_layout(tmp_path: Path) -> None:
    """A tab in the background finishing (◐ to ✓) is drawn again, not laid out again with the whole screen
    (10-30 ms with 20 tabs open); so is one seen, whose badge goes: its place stays blank (tab_bar.NO_BADGE),
    the label keeps its width. A label that changes width (a new title) still is laid out."""
    slow = {"turns": [[{"sleep": 3.0}, {"chunk": "second answer"}],
                      [{"update": {"sessionUpdate": "session_info_update", "title": "A much longer title, at last"}},
                       {"chunk": "third answer"}]]}
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        first = app.query_one(SessionView)
        await until(pilot, lambda: first.session.state.status == "ready", "first ready")
        second = await app.open_session(scripted_named(slow, tmp_path, "two"), tmp_path)
        await until(pilot, lambda: second.state.status == "ready", "second ready")
        await pilot.press(*"slow question", "enter")
        await until(pilot, lambda: labels(app)[1].startswith("◐ "), "the busy badge on tab two")
        await pilot.press("alt+1")
        await pilot.pause()
        assert labels(app)[1].startswith("◐ ")  # (the answer comes 3 s after the prompt)
        tab = list(app.tabs.query("ContentTab"))[1]
        layouts: list[str] = []
        refresh = tab.refresh

        def counted(*regions, layout: bool = False, **kwargs):
            if layout:
                layouts.append(str(tab.label))
            return refresh(*regions, layout=layout, **kwargs)

        tab.refresh = counted  # type: ignore[method-assign]
        await until(pilot, lambda: labels(app)[1].startswith("✓ "), "the done badge on tab two")
        await pilot.pause()
        assert layouts == []
        assert str(tab.render()).startswith("✓ Scripted fake agent · slow question")  # drawn as labelled
        await pilot.press("alt+2")  # seen: the badge goes, its place kept blank
        await until(pilot, lambda: not labels(app)[1].startswith("✓"), "the badge gone")
        await until(pilot, lambda: str(tab.render()).startswith("  Scripted fake agent · slow question"), "drawn")
        assert layouts == []
        await pilot.press(*"go on", "enter")  # the agent names the session: a longer label
        await until(pilot, lambda: "A much longer title" in labels(app)[1], "the new title")
        await until(pilot, lambda: layouts != [], "the tab laid out again")
        assert str(tab.render()).strip().startswith("Scripted fake agent · A much longer title")


async def test_a_first_prompt_s_title_waits_for_the_agent_to_pause(tmp_path: Path) -> None:
    """The first prompt makes the tab's label longer, which lays the whole screen out twice (15-30 ms): it
    waits until the agent has sent nothing for QUIET_RELABEL, so it does not hold up an answer streaming in
    (MAX_RELABEL_DELAY at most). Checked against the times the lines arrived, whatever the machine's speed,
    while the user types into the composer."""
    burst = [{"chunk": "word "}, {"sleep": 0.005}] * 100  # 0.5 s of chunks: never quiet for 50 ms
    app = RatApp(scripted_named({"turns": [[*burst, {"sleep": 0.3}, {"chunk": "END"}]]}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(SessionView)
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        arrived: list[float] = []  # when each line came (the traffic inspector hears each as it is routed)
        view.session.traffic.subscribe(lambda record: arrived.append(time.monotonic()))
        tab = app.tabs.query_one("ContentTab")
        layouts: list[tuple[float, str]] = []
        refresh = tab.refresh

        def counted(*regions, layout: bool = False, **kwargs):
            if layout:
                layouts.append((time.monotonic(), str(tab.label)))
            return refresh(*regions, layout=layout, **kwargs)

        tab.refresh = counted  # type: ignore[method-assign]
        await pilot.press(*"flood me")
        asked = time.monotonic()
        await pilot.press("enter")
        await pilot.press(*" and go on")  # typed while it streams
        await until(pilot, lambda: "END" in view.transcript.plain_text, "the answer's end")
        await until(pilot, lambda: "flood me" in labels(app)[0], "the title")
        assert view.composer.text == " and go on"
        first = next(t for t, label in layouts if "flood me" in label)  # (not another layout of the tab)
        assert first - asked >= tab_bar.QUIET_RELABEL
        if first - asked < tab_bar.MAX_RELABEL_DELAY:
            assert not [t for t in arrived if first - tab_bar.QUIET_RELABEL < t <= first], "laid out mid-stream"
        # Lines kept coming once QUIET_RELABEL had passed since the prompt, and the title waited for them. (Not a
        # count of lines: on a loaded machine the agent itself pauses, and the title rightly goes in that pause.)
        assert any(asked + tab_bar.QUIET_RELABEL <= t < first for t in arrived), "the title did not wait for the stream"


async def test_a_frame_drawn_while_a_closed_tab_s_composer_is_pruned_draws_it_blank(tmp_path: Path) -> None:
    """Textual detaches a removed widget and clears its component styles before the next layout drops it
    from the screen: a frame in between drew the composer of a closing tab and failed (KeyError
    'text-area--gutter': the app closed). Drawn then, it is blank."""
    from textual.geometry import Region

    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        first = app.query_one(SessionView)
        await until(pilot, lambda: first.session.state.status == "ready", "first ready")
        second = await app.open_session(scripted_named({}, tmp_path, "two"), tmp_path)
        await until(pilot, lambda: second.state.status == "ready", "second ready")
        view = app.tabs.active_view
        composer, width = view.composer, view.composer.size.width
        await view.remove()
        assert not composer.is_attached and not composer._component_styles  # as Textual leaves it
        lines = composer.render_lines(Region(0, 0, width, 2))
        assert [line.text for line in lines] == [" " * width] * 2
