"""Queued prompts and cancel semantics: the queue's rules, then the real app on scripted agents over pipes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.session.prompt_queue import PromptQueue
from rat_tui.state.models import NoticeEntry
from rat_tui.ui.tabs.tab_bar import tab_label
from rat_tui.ui.widgets.prompt_queue import PromptQueueView

from textual.app import ComposeResult
from textual.widgets import Static

from rat_tui.ui.widgets.prompt import PromptComposer

from .helpers.agents import PROBE, answered, received
from .helpers.app import scripted, send, state_word, steady, until, view
from .helpers.harness import RatThemedApp

# -- the rules -------------------------------------------------------------------------------------


def test_queue_sends_after_a_normal_turn_but_waits_after_a_cancel() -> None:
    queue = PromptQueue()
    queue.add("one")
    queue.add("two")
    assert queue.next_after_turn("cancelled") is None and queue.texts == ["one", "two"]
    assert queue.next_after_turn(None) is None  # a failed turn: keep everything
    assert queue.next_after_turn("end_turn") == "one" and queue.texts == ["two"]
    queue.push_front("urgent")
    assert queue.send_now and queue.texts == ["urgent", "two"]
    assert queue.next_after_turn("cancelled") == "urgent" and not queue.send_now
    assert queue.next_after_turn("max_tokens") == "two" and not queue


def test_queue_edit_swaps_in_the_draft_and_remove_clears_send_now() -> None:
    changes = []
    queue = PromptQueue(on_change=lambda: changes.append(queue.texts))
    queue.add("a")
    queue.add("b")
    assert queue.edit(1) == "b" and queue.texts == ["a"]
    assert queue.edit(0, draft="my draft") == "a" and queue.texts == ["my draft"]
    queue.push_front("now")
    assert queue.remove(0) is not None and not queue.send_now
    assert queue.remove(5) is None and queue.edit(5) is None
    assert changes[-1] == ["my draft"]


# -- the app ---------------------------------------------------------------------------------------


def prompts(record: Path) -> list[str]:
    """The text of every session/prompt rat-tui sent, in wire order."""
    return [m["params"]["prompt"][0]["text"] for m in received(record) if m.get("method") == "session/prompt"]


def methods(record: Path) -> list[str]:
    return [m["method"] for m in received(record) if m.get("method", "").startswith("session/")]


def blocked_turn(release: Path) -> list[dict]:
    return [{"chunk": "working on it"}, {"wait_file": str(release)}, {"chunk": " first done"}]


def probed_at(go: Path) -> list[dict]:
    """Steps: once `go` exists, a barrier request to the client (its answer comes after all it sent before)."""
    return [{"wait_file": str(go)}, PROBE]


ENDED = {"respond": {"stopReason": "end_turn"}}


@pytest.mark.slow
async def test_keys_typed_right_after_enter_stay_in_the_composer(tmp_path: Path, record_file: Path) -> None:
    """Enter, then the next words at once, as a fast typist goes on: the prompt is sent (or queued while a
    turn runs) and what was typed after Enter stays in the composer, whichever the app handled first."""
    from textual import events

    turns = [[{"chunk": f"answer {n}"}] for n in range(6)]
    app = RatApp(scripted({"turns": turns}, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        composer = view(app).composer
        sent = []
        for n in range(6):
            prompt = f"prompt {n}"
            await pilot.press(*prompt)
            for key in ["enter", *"next"]:  # no wait between them: the driver queues them as a terminal does
                app._driver.send_message(events.Key(key, "\r" if key == "enter" else key))
                if n % 2:
                    await asyncio.sleep(0)  # and sometimes a turn of the loop between two keys
            sent.append(prompt)
            await until(pilot, lambda p=prompt: composer.text == "next" and p in [*prompts(record_file), *view(app).flow.queue.texts],
                        f"{prompt!r} taken, 'next' kept")
            await pilot.press(*["backspace"] * 4)
            await until(pilot, lambda: state_word(app) == "ready" and not view(app).flow.queue, "the turn's end")
    assert prompts(record_file) == sent


async def test_a_queued_prompt_is_sent_after_the_turn(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    probe = tmp_path / "probe"
    turn = [{"chunk": "working on it"}, *probed_at(probe), {"wait_file": str(release)}, {"chunk": " first done"}]
    script = {"turns": [turn, [{"chunk": "second answer"}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "first")
        await until(pilot, lambda: "working on it" in view(app).transcript.plain_text, "the turn streaming")
        await send(pilot, "second")
        queue_view = view(app).queue_view
        assert view(app).flow.queue.texts == ["second"] and view(app).composer.text == ""
        assert queue_view.display and "second" in str(queue_view.get_option_at_index(0).prompt)
        probe.touch()  # the agent asks the client something after the prompt was queued
        await until(pilot, lambda: answered(record_file) == 1, "the answer to a later request")
        assert prompts(record_file) == ["first"]  # held while the turn runs
        release.touch()
        await until(pilot, lambda: "second answer" in view(app).transcript.plain_text, "the second answer")
        assert not view(app).flow.queue and not queue_view.display
    assert prompts(record_file) == ["first", "second"]


@pytest.mark.slow
async def test_edit_and_remove_queued_prompts(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    turn = [*blocked_turn(release), ENDED, PROBE]  # after the turn's answer, a barrier request
    app = RatApp(scripted({"turns": [turn]}, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "first")
        await until(pilot, lambda: view(app).session.busy, "the turn")
        for text in ("alpha", "beta", "gamma"):
            await send(pilot, text)
        flow, composer = view(app).flow, view(app).composer
        assert flow.queue.texts == ["alpha", "beta", "gamma"]
        await pilot.press("alt+up")  # the last one comes back into the composer
        assert composer.text == "gamma" and flow.queue.texts == ["alpha", "beta"]
        await pilot.press("end", *" again", "enter")
        assert flow.queue.texts == ["alpha", "beta", "gamma again"]
        await pilot.press(*"draft")
        await pilot.press("alt+up")  # a draft is never lost: it takes the edited prompt's place
        assert composer.text == "gamma again" and flow.queue.texts == ["alpha", "beta", "draft"]
        composer.clear()
        await pilot.press("alt+delete")  # removes the last queued prompt
        assert flow.queue.texts == ["alpha", "beta"]
        await pilot.press("shift+tab")  # the queue itself: pick one, remove it
        assert view(app).queue_view.has_focus
        await pilot.press("up", "delete")
        assert flow.queue.texts == ["beta"]
        await pilot.press("escape")
        assert composer.has_focus and view(app).session.busy  # Esc in the queue did not cancel the turn
        await pilot.press(*"abc", "alt+delete")
        assert flow.queue.texts == [] and composer.text == "abc"
        await pilot.press("home", "alt+delete")  # an empty queue: the composer's own delete-word
        assert composer.text == ""
        release.touch()
        await until(pilot, lambda: state_word(app) == "ready", "the turn to end")
        await until(pilot, lambda: answered(record_file) == 1, "the answer to a request sent after the turn")
    assert prompts(record_file) == ["first"]


@pytest.mark.slow
async def test_send_now_cancels_the_turn_first(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [[{"chunk": "busy"}, {"wait_cancel": True}], [{"chunk": "urgent answer"}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "long job")
        await until(pilot, lambda: "busy" in view(app).transcript.plain_text, "the turn")
        await pilot.press(*"urgent", "ctrl+s")
        await until(pilot, lambda: "urgent answer" in view(app).transcript.plain_text, "the urgent answer")
        notices = [e for e in view(app).session.state.entries if isinstance(e, NoticeEntry)]
        assert [(n.text, n.severity) for n in notices] == [("Turn cancelled.", "info")]
        await until(pilot, lambda: state_word(app) == "ready", "ready again")
    assert methods(record_file) == ["session/new", "session/prompt", "session/cancel", "session/prompt"]
    assert prompts(record_file) == ["long job", "urgent"]


@pytest.mark.slow
async def test_after_a_cancel_the_queue_waits_for_the_user(tmp_path: Path, record_file: Path) -> None:
    cancelled_then_probe = [{"chunk": "busy"}, {"wait_cancel": True}, {"respond": {"stopReason": "cancelled"}}, PROBE]
    script = {"turns": [cancelled_then_probe, [{"chunk": "next answer"}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "job")
        await until(pilot, lambda: view(app).session.busy, "the turn")
        await send(pilot, "queued")
        await pilot.press("escape")
        await until(pilot, lambda: state_word(app) == "cancelled", "cancelled")
        await until(pilot, lambda: answered(record_file) == 1, "the answer to a request sent after the turn")
        assert prompts(record_file) == ["job"] and view(app).flow.queue.texts == ["queued"]
        await pilot.press("enter")  # an empty composer: send the next queued prompt
        await until(pilot, lambda: "next answer" in view(app).transcript.plain_text, "the queued prompt's answer")
    assert prompts(record_file) == ["job", "queued"]


@pytest.mark.slow
async def test_prompts_typed_while_the_agent_starts_go_out_when_it_is_ready(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    script = {"on_new_session": [{"wait_file": str(release)}], "turns": [[{"chunk": "one"}], [{"chunk": "two"}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: view(app).session.hello is not None, "initialize")
        await send(pilot, "early one")
        await send(pilot, "early two")
        assert view(app).flow.queue.texts == ["early one", "early two"] and prompts(record_file) == []
        release.touch()
        await until(pilot, lambda: "two" in view(app).transcript.plain_text.split("early two")[-1], "both answers")
    assert prompts(record_file) == ["early one", "early two"]


# -- Esc in each state ------------------------------------------------------------------------------


@pytest.mark.slow
async def test_escape_closes_menus_before_it_cancels(tmp_path: Path, record_file: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hi\n")
    commands = {"sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "help", "description": "Help"}]}
    probe = tmp_path / "probe"
    turn = [{"chunk": "busy"}, *probed_at(probe), {"wait_cancel": True}]
    script = {"on_new_session": [{"update": commands}], "turns": [turn]}
    app = RatApp(scripted(script, tmp_path), project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        composer = view(app).composer
        await send(pilot, "job")
        await until(pilot, lambda: view(app).session.busy, "the turn")
        await pilot.press("/")
        assert composer.menu.is_open
        await pilot.press("escape")  # 1. the slash menu closes; the turn goes on
        assert not composer.menu.is_open and composer.text == "/"
        composer.clear()
        await pilot.press("@", "n")
        assert composer.file_menu.is_open and composer.file_menu.paths == ["notes.txt"]
        await pilot.press("escape")  # 2. the @ menu closes; the turn goes on
        assert not composer.file_menu.is_open and composer.text == "@n"
        probe.touch()  # the agent asks the client something after the two Escs
        await until(pilot, lambda: answered(record_file) == 1, "the answer to a later request")
        assert "session/cancel" not in methods(record_file) and view(app).session.busy
        await pilot.press("escape")  # 3. the turn is cancelled; the draft stays
        await until(pilot, lambda: state_word(app) == "cancelled", "cancelled")
        assert composer.text == "@n"
        state = view(app).session.state
        assert [(e.text, e.severity) for e in state.entries if isinstance(e, NoticeEntry)] == [("Turn cancelled.", "info")]
        assert "✗" not in tab_label(state, True) and tab_label(state, True).startswith("⊘")
        await pilot.press("escape")  # 4. idle: nothing happens, the draft stays
        assert composer.text == "@n" and state_word(app) == "cancelled"
    assert methods(record_file).count("session/cancel") == 1


@pytest.mark.slow
async def test_a_cancelled_prompt_answered_with_an_error_is_still_cancelled(tmp_path: Path, record_file: Path) -> None:
    turn = [{"chunk": "busy"}, {"wait_cancel": True}, {"error": {"code": -32603, "message": "aborted"}}]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "job")
        await until(pilot, lambda: view(app).session.busy, "the turn")
        await pilot.press("escape")
        await until(pilot, lambda: not view(app).session.busy, "the turn to end")
        state = view(app).session.state
        assert state_word(app) == "cancelled" and state.stop_reason == "cancelled"
        assert [(e.text, e.severity) for e in state.entries if isinstance(e, NoticeEntry)] == [("Turn cancelled.", "info")]


# -- snapshot ---------------------------------------------------------------------------------------


class QueueComposerApp(RatThemedApp):
    """The composer as a session shows it: a queue of two prompts above it, the `@` picker open."""

    CSS = "#above { height: 1fr; }"

    def __init__(self, cwd: Path) -> None:
        super().__init__()
        self.cwd = cwd
        self.queue = PromptQueue()

    def compose(self) -> ComposeResult:
        yield Static("The transcript would be here.", id="above")
        yield PromptQueueView(self.queue)
        yield PromptComposer(id="composer")
        yield Static("status bar")

    def on_mount(self) -> None:
        self.use_rat_theme()
        composer = self.query_one(PromptComposer)
        composer.cwd = self.cwd
        composer.capabilities = lambda: {"promptCapabilities": {"image": True, "embeddedContext": True}}
        self.queue.on_change = lambda: self.query_one(PromptQueueView).refresh_queue(busy=True)
        self.queue.add("Now run the whole test suite and fix what fails")
        self.queue.add("Then update the changelog\nwith a line per fix")
        composer.focus()


def test_composer_with_queue_and_file_menu_snapshot(snap_compare, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for name in ("README.md", "src/app.py", "src/app_test.py", "docs.txt", "logo.png"):
        (tmp_path / name).write_text("x\n")
    app = QueueComposerApp(tmp_path)

    async def run_before(pilot) -> None:
        await pilot.press(*"compare @ap")
        await until(pilot, lambda: app.query_one(PromptComposer).file_menu.is_open, "the @ menu")
        steady(app)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(80, 20), run_before=run_before)
