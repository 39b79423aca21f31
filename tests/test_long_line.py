"""A huge single line from the agent (issue #45's 50 MB line): parsed in a child process, journaled on the
journal's commit thread, and the same message or the same notice as a short line would give.

bench/stress.py --only longline measures the key echo while a 50 MB line arrives.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from rat_tui.history.journal import BACKGROUND_BYTES, HistoryJournal
from rat_tui.history.records import IN
from rat_tui.protocol.aside import HUGE_LINE

from .helpers.harness import finish, start_session, wait_for
from .helpers.hostile import alive

SIZE = HUGE_LINE + 12345


def agent_text(session) -> str:
    return "".join(e.text for e in session.state.entries if getattr(e, "role", "") == "agent")


def notices(session) -> list[str]:
    return [e.text for e in session.state.entries if getattr(e, "role", "") not in ("agent", "user", "thought")
            and isinstance(getattr(e, "text", None), str)]


async def test_a_huge_line_is_parsed_in_a_child_and_shown_and_journaled_whole(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    recorder = journal.start_session("fake", ["fake"], str(tmp_path))
    script = {"turns": [[{"chunk": "head|"}, {"big_chunk": SIZE}, {"chunk": "|tail"}]]}
    session, task = await start_session(script, tmp_path, recorders=[recorder])
    try:
        await asyncio.wait_for(session.start_prompt("go"), 60)
        session.store.flush()
        aside = session.process.aside
        assert aside.parsed == 1  # the big line, and only it
        child = aside._proc.pid
        assert alive(child)
        assert agent_text(session) == "head|" + "x" * SIZE + "|tail"
    finally:
        await finish(session, task)
    assert not alive(child)  # ended with its agent
    journal.flush(wait=True)
    assert journal.committed_off_loop >= 1
    updates = [r.message["params"]["update"] for r in journal.records(recorder.id)
               if r.message.get("method") == "session/update"]
    texts = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert texts == "head|" + "x" * SIZE + "|tail"  # every chunk once, in order
    journal.close()


async def test_a_huge_line_that_is_not_json_gets_the_notice_a_short_one_gets(tmp_path: Path) -> None:
    script = {"turns": [[{"raw": "{" + "y" * HUGE_LINE}, {"chunk": "after"}]]}
    session, task = await start_session(script, tmp_path)
    try:
        await asyncio.wait_for(session.start_prompt("go"), 60)
        await wait_for(lambda: "after" in agent_text(session), what="the chunk after the bad line")
        assert session.process.aside.parsed == 0  # refused by the child, parsed (and refused) here
        said = [text for text in notices(session) if "cannot use" in text]
        assert len(said) == 1 and "not JSON" in said[0], notices(session)
    finally:
        await finish(session, task)


async def test_a_big_batch_commits_on_the_commit_thread_and_keeps_the_order(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    session = journal.start_session("fake", ["x"], "/p")

    def message(n: int, size: int = 10) -> dict:
        return {"jsonrpc": "2.0", "method": "_test/n", "params": {"n": n, "pad": "z" * size}}

    session.record(IN, message(1, BACKGROUND_BYTES), BACKGROUND_BYTES)
    journal.flush()
    for n in range(2, 6):  # queued while the first may still be on its way: they go behind it
        session.record(IN, message(n), 40)
        journal.flush()
    journal.flush(wait=True)
    assert journal.committed_off_loop >= 1
    got = [r.message["params"]["n"] for r in journal.records(session.id)]
    assert got == [1, 2, 3, 4, 5]
    other = HistoryJournal(tmp_path / "h.sqlite3")  # another process reads it all
    assert len(other.records(session.id)) == 5
    other.close()
    journal.close()
    assert os.path.getsize(tmp_path / "h.sqlite3") > BACKGROUND_BYTES
