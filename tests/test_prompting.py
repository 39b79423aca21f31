"""The prompt-queue rules in the engine (session/prompting.py), headless: an AgentSession on a scripted agent
over real pipes, and a screen that only records what it is told."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from rat_tui.session.agent_session import AgentSession
from rat_tui.session.ui import HeadlessUI

from .helpers.agents import received, scripted_argv
from .helpers.harness import finish, start_session, wait_for


class Screen(HeadlessUI):
    """A composer holding `draft`, and the messages and queue changes the engine sent it."""

    def __init__(self, draft: str = "") -> None:
        self.draft = draft
        self.told: list[str] = []
        self.changes = 0

    def give_back(self, text: str) -> bool:
        if self.draft.strip():
            return False
        self.draft = text
        return True

    def prompts_changed(self) -> None:
        self.changes += 1

    def tell(self, text: str, severity: str = "information", title: str = "", timeout: float = 3,
             about_state: bool = False) -> None:
        self.told.append(text)


def prompts(record: Path) -> list[str]:
    return [m["params"]["prompt"][0]["text"] for m in received(record) if m.get("method") == "session/prompt"]


def released_turn(release: Path) -> list[dict]:
    return [{"wait_file": str(release)}, {"chunk": "done"}]


CANCELLABLE = [{"chunk": "working"}, {"wait_cancel": True}, {"respond": {"stopReason": "cancelled"}}]


async def test_a_prompt_sent_during_a_turn_waits_and_goes_when_the_turn_ends(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    ui = Screen()
    session, task = await start_session({"turns": [released_turn(release)]}, tmp_path, ui=ui)
    assert session.prompts.submit("first\n")
    await wait_for(lambda: prompts(record_file) == ["first"], what="the first prompt on the wire")
    assert session.prompts.waiting() and session.prompts.submit("second")
    assert session.prompts.queue.texts == ["second"] and ui.changes >= 1
    release.touch()
    await wait_for(lambda: prompts(record_file) == ["first", "second"], what="the queued prompt sent")
    await wait_for(lambda: not session.busy, what="the second turn's end")
    assert not session.prompts.queue
    await finish(session, task)


async def test_after_a_cancelled_turn_the_queue_is_kept_and_nothing_goes_by_itself(tmp_path: Path,
                                                                                   record_file: Path) -> None:
    ui = Screen()
    session, task = await start_session({"turns": [CANCELLABLE]}, tmp_path, ui=ui)
    ended: list[str | None] = []
    session.turn_listeners.append(ended.append)  # after Prompting's: the queue has decided by then
    session.prompts.submit("long job")
    await wait_for(lambda: session.busy and session.state.entries, what="the turn running")
    session.prompts.submit("queued")
    assert await session.cancel()
    await wait_for(lambda: ended == ["cancelled"], what="the cancelled turn's end")
    assert prompts(record_file) == ["long job"] and session.prompts.queue.texts == ["queued"]
    assert any("1 queued prompt kept" in text for text in ui.told)
    session.prompts.send_next()  # Enter on an empty composer
    await wait_for(lambda: prompts(record_file) == ["long job", "queued"], what="the queued prompt sent on Enter")
    await finish(session, task)


async def test_send_now_cancels_the_turn_and_sends_right_after(tmp_path: Path, record_file: Path) -> None:
    ui = Screen()
    session, task = await start_session({"turns": [CANCELLABLE]}, tmp_path, ui=ui)
    session.prompts.submit("long job")
    await wait_for(lambda: session.busy and session.state.entries, what="the turn running")
    assert session.prompts.send_now("urgent")  # taken: the composer may clear it
    await wait_for(lambda: prompts(record_file) == ["long job", "urgent"], what="the urgent prompt after the cancel")
    assert [m["method"] for m in received(record_file) if m.get("method") == "session/cancel"] == ["session/cancel"]
    await finish(session, task)


async def test_prompts_queued_while_the_agent_starts_go_out_once_it_is_ready(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    ui = Screen()
    script = {"on_request": {"session/new": [[{"wait_file": str(release)}]]}}
    session = AgentSession(SimpleNamespace(name="fake", argv=scripted_argv(script, tmp_path), env={}), tmp_path, ui=ui)
    task = asyncio.create_task(session.run())
    await wait_for(lambda: any(m.get("method") == "session/new" for m in received(record_file)),
                   what="session/new on the wire")
    assert session.prompts.waiting() and session.prompts.submit("typed early")
    assert prompts(record_file) == []
    release.touch()
    await wait_for(lambda: prompts(record_file) == ["typed early"], what="the early prompt sent once ready")
    await finish(session, task)


async def test_a_prompt_that_cannot_go_comes_back_to_the_composer_or_the_queue_front(tmp_path: Path) -> None:
    ui = Screen()
    session, task = await start_session({}, tmp_path, ui=ui)
    session.prompts.queue.add("later")
    assert session.prompts.give_back("refused words") == "composer" and ui.draft == "refused words"
    assert session.prompts.give_back("more words") == "queue"  # the composer holds a draft now
    assert session.prompts.queue.texts == ["more words", "later"]
    await finish(session, task)


async def test_a_refused_attachment_is_said_and_the_text_not_taken(tmp_path: Path, record_file: Path) -> None:
    ui = Screen()
    (tmp_path / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32)
    session, task = await start_session({}, tmp_path, ui=ui)  # the default agent takes no images
    assert not session.prompts.submit("look at @shot.png")
    assert ui.told and "image" in ui.told[-1].lower() and prompts(record_file) == []
    await finish(session, task)
