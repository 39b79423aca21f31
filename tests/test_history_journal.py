"""The history journal (no UI): what it records, how it is searched, pruned, rebuilt and exported."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path

import pytest

from rat_tui.history.journal import HistoryJournal, HistoryQuery
from rat_tui.history.markdown import to_markdown
from rat_tui.history.rebuild import rebuild
from rat_tui.history.records import IN, OUT, RecordingError, dump_recording, parse_recording, read_recording

from .helpers.harness import finish, start_session, wait_for

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"


def update(kind: str, **fields) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": "s1", "update": {"sessionUpdate": kind, **fields}}}


def chunk(text: str) -> dict:
    return update("agent_message_chunk", content={"type": "text", "text": text})


def play_conversation(session) -> None:
    """A short session as the router records it: handshake, one prompt turn, a setting change."""
    session.record(OUT, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}, 60)
    session.record(IN, {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentInfo": {
        "name": "fake", "title": "Fake agent"}, "agentCapabilities": {"loadSession": True}}}, 90, method="initialize")
    session.record(OUT, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/p", "mcpServers": []}}, 70)
    session.record(IN, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}, 40, method="session/new")
    session.record(OUT, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {
        "sessionId": "s1", "prompt": [{"type": "text", "text": "tell me about zebras"}]}}, 90)
    session.record(IN, chunk("Zebras have "), 80)
    session.record(IN, chunk("stripes."), 80)
    session.record(IN, update("session_info_update", title="Zebra facts"), 80)
    session.record(IN, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}, 40, method="session/prompt")
    session.record(OUT, {"jsonrpc": "2.0", "id": 3, "method": "session/set_config_option",
                         "params": {"sessionId": "s1", "configId": "model", "value": "fast"}}, 80)
    session.record(OUT, {"jsonrpc": "2.0", "id": 4, "method": "session/set_mode",
                         "params": {"sessionId": "s1", "modeId": "plan"}}, 80)


def test_journal_records_messages_and_session_facts(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    session = journal.start_session("fake", ["fake-agent", "--acp"], "/p")
    play_conversation(session)
    session.set_draft("half a thought")
    journal.close()

    reopened = HistoryJournal(tmp_path / "h.sqlite3")  # as the next rat process sees it
    [info] = reopened.sessions()
    assert (info.agent, info.agent_title, info.argv, info.cwd) == ("fake", "Fake agent", ["fake-agent", "--acp"], "/p")
    assert (info.agent_session_id, info.title, info.first_prompt) == ("s1", "Zebra facts", "tell me about zebras")
    assert info.messages == 11 and info.bytes > 0
    assert info.draft == "half a thought"
    assert info.settings == {"config": {"model": "fast"}, "mode": "plan"}
    records = reopened.records(info.id)
    assert [r.direction for r in records[:2]] == [OUT, IN]
    assert records[1].method == "initialize" and records[0].method is None
    builder = rebuild(records)
    texts = [entry.text for entry in builder.store.state.entries]
    assert texts == ["tell me about zebras", "Zebras have stripes."]
    assert builder.can_continue and builder.agent_session_id == "s1"


async def test_a_run_of_streamed_chunks_is_one_row_and_reads_back_message_by_message(tmp_path: Path) -> None:
    """Chunks of the session's own messages and thoughts, handed over with their wire lines as the router
    hands them, are queued as runs: a row per run, its lines joined by newlines (a commit costs mostly per
    row). Anything else ends a run: a tool call, a subagent's chunk, a line that is not UTF-8 (kept as its
    exact bytes in a row of its own). `records` gives back every message, in order; the session counts
    each one; the search finds a phrase cut between two chunks."""
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    session = journal.start_session("fake", ["x"], "/p")
    session.record(IN, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}, 40, method="session/new")
    sent: list[dict] = []

    def wire(message: dict, raw: bytes | None = None) -> None:
        raw = raw if raw is not None else json.dumps(message).encode()
        sent.append(message)
        session.record(IN, message, len(raw) + 1, raw=raw)

    for n in range(1000):
        wire(chunk("zebras have stri" if n == 500 else "pes " if n == 501 else f"c{n} "))
    wire(update("tool_call", toolCallId="t1", title="Read zoo.md", status="pending"))
    wire(update("agent_thought_chunk", content={"type": "text", "text": "hmm "}))
    wire(update("agent_thought_chunk", content={"type": "text", "text": "right"}))
    child = {"jsonrpc": "2.0", "method": "session/update",
             "params": {"sessionId": "child-1", "update": {"sessionUpdate": "agent_message_chunk",
                                                           "content": {"type": "text", "text": "sub"}}}}
    wire(child)
    bad = chunk("caf\ufffd")
    wire(bad, json.dumps(chunk("caf@")).encode().replace(b"@", b"\xe9"))  # Latin-1, not UTF-8
    for n in range(1000, 1500):
        wire(chunk(f"c{n} "))
    journal.flush()
    rows = journal._db.execute("SELECT method, body, text FROM messages WHERE session=? ORDER BY id",
                               (session.id,)).fetchall()
    # the session/new answer; 1000 chunks; the tool call; 2 thoughts; the subagent's; the bad line; 500 chunks
    assert [len(body.split("\n")) if isinstance(body, str) else "bytes" for _, body, _ in rows] == \
        [1, 1000, 1, 2, 1, "bytes", 500]
    assert rows[1][2].startswith("c0 c1 ") and "zebras have stripes " in rows[1][2] and rows[3][2] == "hmm right"
    records = journal.records(session.id)
    assert [r.message for r in records[1:]] == sent  # (the bad line read back as the router decoded it)
    assert journal.session(session.id).messages == 1 + len(sent)
    assert [info.id for info in journal.sessions("have stripes")] == [session.id]
    journal.close()


async def test_messages_reach_the_file_in_one_commit_without_any_flush(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    session = journal.start_session("fake", ["x"], "/p")
    reader = HistoryJournal(tmp_path / "h.sqlite3")  # another connection, as another process would read
    for n in range(500):
        session.record(IN, chunk(f"c{n} "), 50)
    assert journal.commits == 0 and reader.records(session.id) == []  # queued in this tick
    # Streamed updates wait for the store's delivery (tested below) or COMMIT_AFTER: then one transaction.
    await wait_for(lambda: journal.commits == 1, what="the updates' commit")
    assert len(reader.records(session.id)) == 500
    session.record(OUT, {"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": {"sessionId": "s1", "prompt": []}}, 80)
    await asyncio.sleep(0)
    # Anything but a streamed update is committed on the very next loop turn, before this coroutine went on.
    assert journal.commits == 2 and len(reader.records(session.id)) == 501
    session.set_draft("typed")
    await asyncio.sleep(0)
    assert journal.commits == 2  # drafts wait for a pause in typing
    await wait_for(lambda: reader.session(session.id).draft == "typed", what="the draft")
    journal.close()
    reader.close()


async def test_a_commit_inserts_its_rows_in_a_few_statements(tmp_path: Path, monkeypatch) -> None:
    """SQLite runs each statement with the GIL released; the UI thread then waits up to a switch interval
    to get it back while another thread computes (the warm-up, a big diff). executemany ran a statement
    per row (a 300-row commit took 150-270 ms during the warm-up): a commit runs a few, of the sizes in
    INSERT_SIZES only (sqlite3 caches each distinct statement; one per row count grew the app by 15-100 MB)."""
    from rat_tui.history import journal as journal_module

    journal = HistoryJournal(tmp_path / "h.sqlite3")
    session = journal.start_session("fake", ["x"], "/p")
    await wait_for(lambda: not journal._rows, what="the session's own rows")
    statements: list[str] = []
    journal._writer.set_trace_callback(statements.append)
    sizes: list[int] = []  # rows of each INSERT statement
    insert_sql = journal_module._insert_sql
    monkeypatch.setattr(journal_module, "_insert_sql", lambda count: sizes.append(count) or insert_sql(count))
    for n in range(5000):
        session.record(IN, chunk(f"c{n} "), 50)
    await wait_for(lambda: journal.written >= 5000, what="the commit")
    inserts = [sql for sql in statements if sql.startswith("INSERT")]
    assert len(inserts) == len(sizes) and sum(sizes) == 5000
    assert set(sizes) <= set(journal_module.INSERT_SIZES) and max(sizes) >= 160
    assert len(inserts) <= 5000 // max(sizes) + 3 * len(journal_module.INSERT_SIZES)
    for n in (1, 3, 300, 1999):  # commits of other sizes: no statement of another size
        sizes.clear()
        for i in range(n):
            session.record(IN, chunk(f"d{n}-{i} "), 50)
        journal.flush()
        assert sum(sizes) == n and set(sizes) <= set(journal_module.INSERT_SIZES)
    texts = [record.message["params"]["update"]["content"]["text"] for record in journal.records(session.id)]
    assert texts == [f"c{n} " for n in range(5000)] + [f"d{n}-{i} " for n in (1, 3, 300, 1999) for i in range(n)]
    journal.close()


def test_search_by_text_agent_cwd_and_date(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    zebra = journal.start_session("claude", ["claude-acp"], "/home/u/zoo")
    play_conversation(zebra)
    other = journal.start_session("gemini", ["gemini", "--acp"], "/home/u/garden")
    other.record(OUT, {"jsonrpc": "2.0", "id": 5, "method": "session/prompt",
                       "params": {"sessionId": "g", "prompt": [{"type": "text", "text": "water the roses"}]}}, 50)
    journal.flush()

    def found(query: str) -> list[str]:
        return [info.agent for info in journal.sessions(query)]

    assert found("") == ["gemini", "claude"]  # newest first
    assert found("stripes") == ["claude"]  # text of an agent message
    assert found("have stripes") == ["claude"]  # a phrase split between two streamed chunks
    assert found("roses") == ["gemini"]  # text of a prompt
    assert found("agent:gem") == ["gemini"]
    assert found("agent:fake") == ["claude"]  # the agent's own title counts too
    assert found("cwd:zoo") == ["claude"]
    today = time.strftime("%Y-%m-%d")
    assert found(f"date:{today}") == ["gemini", "claude"]
    assert found("date:1999") == []
    assert found("stripes cwd:garden") == []
    assert HistoryQuery.parse("a b agent:x date:2026-11") == HistoryQuery("a b", "x", "", "2026-11")


def test_retention_prunes_old_many_and_big_sessions(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    ids = []
    for n in range(5):
        session = journal.start_session(f"agent{n}", ["x"], "/p")
        session.record(OUT, {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {
            "sessionId": "s", "prompt": [{"type": "text", "text": f"prompt {n}"}]}}, 300_000)
        ids.append(session.id)
    empty_old, empty_new = (journal.start_session("idle", ["x"], "/p") for _ in range(2))  # never prompted
    journal.flush()
    now = time.time()
    journal._db.execute("UPDATE sessions SET updated=? WHERE id=?", (now - 2 * 86400, empty_old.id))
    assert journal.prune(max_sessions=5, now=now) == 1  # the old empty one; empty ones don't count
    assert [i.id for i in journal.sessions("agent:idle")] == [empty_new.id]
    journal.delete(empty_new.id)
    journal._db.execute("UPDATE sessions SET updated=? WHERE id=?", (now - 40 * 86400, ids[0]))
    assert journal.prune(retention_days=30, now=now) == 1
    assert journal.prune(max_sessions=3) == 1  # the least recently used of the four left
    assert [i.agent for i in journal.sessions()] == ["agent4", "agent3", "agent2"]
    assert journal.prune(max_megabytes=0.6) == 1  # 300 kB each: two fit (bytes as on the wire)
    assert [i.agent for i in journal.sessions()] == ["agent4", "agent3"]
    assert journal.records(ids[0]) == [] and journal.records(ids[2]) == []
    assert journal.prune(retention_days=30, max_sessions=10, max_megabytes=100) == 0


def test_reattaching_continues_the_journaled_session(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    first = journal.start_session("fake", ["x"], "/p")
    play_conversation(first)
    first.set_draft("unsent words")
    journal.flush()
    again = journal.start_session("fake", ["x"], "/p", attach_session_id="s1")
    assert again.id == first.id and again.draft == "unsent words" and again.settings["mode"] == "plan"
    assert journal.start_session("fake", ["x"], "/elsewhere", attach_session_id="s1").id != first.id
    assert len(journal.sessions()) == 2


def test_a_load_replay_is_not_shown_twice() -> None:
    """After session/load the agent replays the conversation: the rebuilt transcript keeps one copy."""
    trace = read_recording(TRACES / "claude-code-acp.jsonl")
    state = rebuild(trace.records).store.state
    user = [e.text for e in state.entries if getattr(e, "role", None) == "user"]
    assert user.count("HARNESS:think Think first, then answer.") == 1
    assert len(user) == 10  # nine turns before the load, one after it


def test_recording_formats(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    session = journal.start_session("fake", ["x"], "/p")
    play_conversation(session)
    journal.flush()
    records = journal.records(session.id)
    text = dump_recording(records, journal.session(session.id).header())
    again = parse_recording(text)
    assert again.session["agent_session_id"] == "s1"
    assert [(r.direction, r.message, r.method) for r in again.records] == [
        (r.direction, r.message, r.method) for r in records]
    first = json.loads(text.splitlines()[1])
    assert first["dir"] == "c2a" and first["t"] == 0 and first["msg"]["method"] == "initialize"
    rpc_log = '{"time": 1.5, "dir": "out", "bytes": 10, "method": "initialize", "id": 0, "msg": {"jsonrpc": "2.0", "id": 0, "method": "initialize"}}\nnot json\n'
    parsed = parse_recording(rpc_log)
    assert parsed.records[0].direction == OUT and parsed.skipped == 1
    with pytest.raises(RecordingError, match="holds no recorded ACP message"):
        parse_recording("{}\n", "empty.jsonl")
    with pytest.raises(RecordingError, match="No such file"):
        read_recording(tmp_path / "missing.jsonl")


EDIT_TURN = [
    {"update": {"sessionUpdate": "plan", "entries": [
        {"content": "Read notes", "priority": "high", "status": "completed"},
        {"content": "Edit notes", "priority": "high", "status": "in_progress"}]}},
    {"chunk": "I will edit notes.txt."},
    {"update": {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "beta should be loud"}}},
    {"update": {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit notes.txt", "kind": "edit",
                "status": "in_progress", "locations": [{"path": "$CWD/notes.txt", "line": 2}]}},
    {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "content": [
        {"type": "diff", "path": "$CWD/notes.txt", "oldText": "alpha\nbeta\n", "newText": "alpha\nBETA\n"}]}},
    {"chunk": "Done."},
]


def edit_script(cwd: Path) -> dict:
    return json.loads(json.dumps({"turns": [EDIT_TURN]}).replace("$CWD", str(cwd)))


async def test_markdown_export_of_a_journaled_session_with_a_tool_call_and_a_diff(tmp_path: Path, record_file: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    recorder = journal.start_session("fake", ["fake"], str(tmp_path))
    session, task = await start_session(edit_script(tmp_path), tmp_path, recorders=[recorder])
    try:
        turn = session.start_prompt("make beta loud")
        await asyncio.wait_for(turn, 20)
        session.store.flush()
        live = [entry.text if hasattr(entry, "text") else entry.title for entry in session.state.entries]
    finally:
        await finish(session, task)
    journal.flush()
    state = rebuild(journal.records(recorder.id)).store.state
    assert [entry.text if hasattr(entry, "text") else entry.title for entry in state.entries] == live
    markdown = to_markdown(state, journal.session(recorder.id).header())
    assert "# make beta loud" in markdown and f"- Directory: `{tmp_path}`" in markdown
    assert "## You\n\nmake beta loud" in markdown
    assert "## Agent\n\nI will edit notes.txt." in markdown
    assert "<details><summary>Thought</summary>\n\nbeta should be loud" in markdown
    assert "### Tool: Edit notes.txt — ✓ completed" in markdown
    assert f"kind: edit · `{tmp_path}/notes.txt:2`" in markdown
    assert "```diff\n" in markdown and "-beta\n+BETA\n" in markdown and f"+++ b{tmp_path}/notes.txt" in markdown
    assert "## Plan\n\n- [x] Read notes\n- [~] Edit notes" in markdown


def test_a_failing_write_is_reported_once(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    problems: list[str] = []
    journal.on_problem = problems.append
    session = journal.start_session("fake", ["x"], "/p")
    journal._db.execute("DROP TABLE messages")  # as good as a disk that refuses writes
    for _ in range(3):
        session.record(IN, chunk("lost"), 10)
        journal.flush()
    assert journal.failures == 3 and len(problems) == 1 and "cannot be written" in problems[0]
    journal.close()


@pytest.mark.parametrize("slow_disk", [False, True], ids=["disk", "slow-disk"])
async def test_every_store_delivery_finds_its_chunks_already_committed(tmp_path: Path, slow_disk: bool) -> None:
    """A flood over real pipes: each time the store hands changes to the widgets, the chunks they show
    are in the database already, as another process reads it (the store commits before it delivers).
    With commits made slow on purpose, the screen waits for them, it does not run ahead."""
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    if slow_disk:
        journal._writer.set_progress_handler(lambda: time.sleep(0.0002) or 0, 200)
    recorder = journal.start_session("fake", ["fake"], str(tmp_path))
    other = sqlite3.connect(tmp_path / "h.sqlite3")
    checks: list[tuple[int, int]] = []  # (chunks shown by this delivery, chunks committed then)
    script = {"turns": [[{"chunk": "c|", "repeat": 20000}]]}
    session, task = await start_session(script, tmp_path, recorders=[recorder])

    def delivered(changes) -> None:
        shown = sum(entry.text.count("c|") for entry in session.state.entries if getattr(entry, "role", "") == "agent")
        # (a row holds a run of chunks, their lines joined by newlines: lines are counted)
        [(committed,)] = other.execute(
            "SELECT COALESCE(SUM(LENGTH(body) - LENGTH(REPLACE(body, char(10), '')) + 1), 0) FROM messages "
            "WHERE session=? AND method='session/update'", (recorder.id,)).fetchall()
        checks.append((shown, committed))

    unsubscribe = session.store.subscribe(delivered)
    try:
        await asyncio.wait_for(session.start_prompt("flood"), 30)
        session.store.flush()  # the turn's last batch, due a frame later
    finally:
        unsubscribe()
        await finish(session, task)
    other.close()
    journal.close()
    assert checks and checks[-1][0] == 20000
    assert len(checks) > 3  # the flood came in several deliveries
    assert all(committed >= shown for shown, committed in checks), [c for c in checks if c[1] < c[0]][:5]


async def test_the_wal_is_checkpointed_by_its_own_thread_never_by_a_commit(tmp_path: Path) -> None:
    """A checkpoint copies the WAL into the database and waits for the disk (fsync): on a busy disk that
    took hundreds of milliseconds, and SQLite ran it inside whichever commit crossed 1,000 pages, the UI
    thread's. Commits never checkpoint; a thread does, once CHECKPOINT_BYTES were written."""
    from rat_tui.history import journal as journal_module

    journal = HistoryJournal(tmp_path / "history.db")
    assert journal._writer.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    assert journal._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    session = journal.start_session("agent", ["agent"], str(tmp_path))
    big = update("agent_message_chunk", content={"type": "text", "text": "x" * 100_000})
    body = json.dumps(big).encode()
    wal = tmp_path / "history.db-wal"
    for _ in range(journal_module.CHECKPOINT_BYTES // len(body) + 2):
        session.record(IN, big, len(body), method="session/update", raw=body)
        await asyncio.sleep(0)  # a turn of the loop: the batch is committed
    await wait_for(lambda: journal.checkpoints > 0, what="the checkpoint")
    # ... and once the writing paused, one more that catches up with what was written meanwhile.
    await wait_for(lambda: journal.checkpointed_bytes == journal.committed_bytes, what="the catching up")
    assert journal.checkpointed_on == "journal-checkpoint"
    first = wal.stat().st_size
    # Checkpointed, the WAL is written again from its start: it does not keep growing.
    for _ in range(journal_module.CHECKPOINT_BYTES // len(body) + 2):
        session.record(IN, big, len(body), method="session/update", raw=body)
        await asyncio.sleep(0)
    assert wal.stat().st_size < 1.5 * first
    journal.close()
    db = sqlite3.connect(tmp_path / "history.db")
    assert db.execute("SELECT COUNT(*) FROM messages").fetchone()[0] == 2 * (journal_module.CHECKPOINT_BYTES // len(body) + 2)
