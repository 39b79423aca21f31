"""Text that is not valid Unicode, from an agent over real pipes: shown as U+FFFD, journaled byte-exact,
replayed as it was shown, and every later message journaled too; the --rpc-log likewise."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import sqlite3
from pathlib import Path

import pytest

from rat_tui.history.journal import HistoryJournal
from rat_tui.history.rebuild import rebuild
from rat_tui.history.records import IN, from_logged, parse_recording
from rat_tui.protocol.lines import decode_line
from rat_tui.protocol.rpc_log import RpcLog

from .helpers.harness import finish, start_session

SESSION = "sess-bad"


def update_line(update: bytes) -> bytes:
    return (b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SESSION.encode()
            + b'","update":' + update + b"}}")


def chunk_line(text: bytes) -> bytes:
    return update_line(b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"' + text + b'"}}')


# Each as the agent writes it: a UTF-8-encoded surrogate, bytes that are no UTF-8 at all, a lone
# surrogate escape next to a valid escaped pair (an emoji), a title and a tool call title with them.
BAD_LINES = [
    chunk_line(b"raw surrogate [\xed\xa0\x80] "),
    chunk_line(b"not utf-8 [\xff\xfe] "),
    chunk_line(b"escaped [\\ud800] pair [\\ud83d\\ude00] "),
    update_line(b'{"sessionUpdate":"session_info_update","title":"title [\xed\xb0\x80] [\\udfff]"}'),
    update_line(b'{"sessionUpdate":"tool_call","toolCallId":"t1","title":"tool [\xc3\x28] [\\udc80]","status":"completed"}'),
]
SHOWN = ("raw surrogate [\ufffd] not utf-8 [\ufffd\ufffd] escaped [\ufffd] pair [\U0001f600] after the bad ones. "
         "still journaled.")


def script() -> dict:
    steps: list[dict] = [{"chunk": "before. "}]
    steps += [{"raw_hex": line.hex()} for line in BAD_LINES]
    steps += [{"chunk": "after the bad ones. "}, {"chunk": "still journaled."}]
    return {"session_id": SESSION, "turns": [steps]}


def transcript(state) -> list[tuple[str, str]]:
    return [(getattr(entry, "role", type(entry).__name__), entry.text if hasattr(entry, "text") else entry.title)
            for entry in state.entries]


async def test_bad_text_is_shown_replaced_journaled_byte_exact_and_replayed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    written = tmp_path / "written.jsonl"
    os.environ["RAT_FAKE_WRITTEN"] = str(written)  # what the agent wrote, byte for byte
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    problems: list[str] = []
    journal.on_problem = problems.append
    recorder = journal.start_session("fake", ["fake"], str(tmp_path))
    rpc_log = RpcLog(tmp_path / "rpc.jsonl")
    try:
        session, task = await start_session(script(), tmp_path, recorders=[recorder], rpc_log=rpc_log)
        try:
            await asyncio.wait_for(session.start_prompt("say something odd"), 20)
            session.store.flush()
            live = transcript(session.state)
            title = session.state.title
        finally:
            await finish(session, task)
    finally:
        del os.environ["RAT_FAKE_WRITTEN"]
        rpc_log.close()

    # Shown: each character that is no text is one U+FFFD (for `\xff\xfe` two), the emoji stays.
    agent_text = "".join(text for kind, text in live if kind == "agent")
    assert agent_text == "before. " + SHOWN
    assert ("ToolCallEntry", "tool [\ufffd(] [\ufffd]") in live
    assert title == "title [\ufffd] [\ufffd]"

    # Journaled: every line the agent wrote is stored with its exact bytes (a BLOB where not UTF-8),
    # nothing failed, and the messages after the bad ones are there too.
    assert not problems and journal.failures == 0
    sent = [line for line in written.read_bytes().split(b"\n") if line.strip()]
    assert all(line in sent for line in BAD_LINES)
    rows = journal._db.execute("SELECT body FROM messages WHERE session=? AND dir='in' ORDER BY id",
                               (recorder.id,)).fetchall()
    # (a run of streamed chunks is one row, their lines joined by newlines)
    stored = [line for (body,) in rows for line in ([body] if isinstance(body, bytes) else body.encode().split(b"\n"))]
    assert stored == sent
    assert sum(isinstance(body, bytes) for (body,) in rows) == 4  # the lines that are not UTF-8

    # Replayed: the journal rebuilds exactly the transcript that was shown, and so does the rpc log.
    assert transcript(rebuild(journal.records(recorder.id)).store.state) == live
    info = journal.session(recorder.id)
    assert info is not None and info.title == "title [\ufffd] [\ufffd]" and info.first_prompt == "say something odd"
    journal.close()
    reopened = HistoryJournal(tmp_path / "h.sqlite3")  # as the next rat process reads it
    assert transcript(rebuild(reopened.records(recorder.id)).store.state) == live
    reopened.close()

    logged = (tmp_path / "rpc.jsonl").read_bytes()
    logged.decode("utf-8")  # the log itself is valid UTF-8 text
    recording = parse_recording(logged.decode("utf-8"))
    assert recording.skipped == 0
    assert transcript(rebuild(recording.records).store.state) == live
    # A line that was not UTF-8 is logged reversibly: its bytes come back exactly.
    entries = [json.loads(line) for line in logged.splitlines()]
    marked = [entry for entry in entries if entry.get("not_utf8")]
    assert len(marked) == 4
    rebuilt = [json.dumps(entry["msg"], ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogateescape")
               for entry in marked[:2]]
    assert rebuilt == BAD_LINES[:2]
    assert all(from_logged(entry["msg"]) == decode_line(line) for entry, line in zip(marked, [
        BAD_LINES[0], BAD_LINES[1], BAD_LINES[3], BAD_LINES[4]]))
    # No traceback, no "recording a message failed" anywhere.
    assert not [r for r in caplog.records if r.exc_info or "failed" in r.getMessage()]


def test_a_journal_write_that_fails_is_said_once_and_writing_goes_on(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    problems: list[str] = []
    journal.on_problem = problems.append
    session = journal.start_session("fake", ["x"], "/p")
    session.record(IN, {"jsonrpc": "2.0", "method": "x"}, 10, raw=b'{"jsonrpc":"2.0","method":"x"}')
    journal._writer.execute("ALTER TABLE messages RENAME TO kept")  # as good as a disk that refuses writes
    for n in range(3):
        session.record(IN, {"jsonrpc": "2.0", "method": f"lost {n}"}, 10)
    journal._writer.execute("ALTER TABLE kept RENAME TO messages")
    # A message SQLite cannot bind as text (a lone surrogate), recorded without its wire line.
    session.record(IN, {"jsonrpc": "2.0", "method": "odd", "params": {"text": "a\ud800b"}}, 10)
    session.record(IN, {"jsonrpc": "2.0", "method": "later"}, 10)
    assert journal.failures == 3 and len(problems) == 1 and "cannot be written" in problems[0]
    methods = [record.message["method"] for record in journal.records(session.id)]
    assert methods == ["x", "odd", "later"]
    [odd] = [record.message for record in journal.records(session.id) if record.message["method"] == "odd"]
    assert odd["params"]["text"] == "a\ufffdb"  # read back as the router would have shown it
    journal.close()


async def test_a_locked_journal_keeps_the_batch_and_writes_it_when_free(tmp_path: Path) -> None:
    journal = HistoryJournal(tmp_path / "h.sqlite3")
    session = journal.start_session("fake", ["x"], "/p")
    other = sqlite3.connect(tmp_path / "h.sqlite3", isolation_level=None)  # another process writing
    other.execute("BEGIN IMMEDIATE")
    for n in range(10):
        session.record(IN, {"jsonrpc": "2.0", "method": f"m{n}"}, 10)
    await asyncio.sleep(0)  # the tick's commit meets the lock
    assert journal.commits == 0 and len(journal._rows) == 10 and journal.failures == 0
    session.record(IN, {"jsonrpc": "2.0", "method": "m10"}, 10)
    other.execute("COMMIT")
    other.close()
    deadline = asyncio.get_running_loop().time() + 10
    while journal.commits == 0 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    assert [record.message["method"] for record in journal.records(session.id)] == [f"m{n}" for n in range(11)]
    assert journal.failures == 0
    journal.close()


async def test_the_app_shows_bad_text_as_replacement_characters_live_and_from_history(tmp_path: Path) -> None:
    from rat_tui.app import RatApp
    from rat_tui.ui.screens.history import HistoryTranscriptScreen

    from .helpers.app import scripted, send, state_word, until, view

    app = RatApp(scripted(script(), tmp_path), tmp_path)
    problems: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        assert app.history is not None
        app.history.on_problem = problems.append
        await send(pilot, "say something odd")
        await until(pilot, lambda: "still journaled." in view(app).transcript.plain_text, "the last chunk")
        live = view(app).transcript.plain_text
        assert "raw surrogate [\ufffd] not utf-8 [\ufffd\ufffd] escaped [\ufffd] pair [\U0001f600]" in live
        assert "tool [\ufffd(] [\ufffd]" in live
        await until(pilot, lambda: state_word(app) == "ready", "the turn's end")
        for key in ("ctrl+r", *"odd", "enter"):  # the history list, searched, the session opened
            await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, HistoryTranscriptScreen)
                    and app.screen.session.done, "the replayed session")
        await pilot.pause()
        assert app.screen.view.transcript.plain_text == live
        assert not problems and app.history.failures == 0


def test_the_routers_decoder_reads_every_line_as_json_loads_with_its_limits_does() -> None:
    """decode_line with the router's decoder (built once) against json.loads with the same options (a new
    decoder per call, what it replaced): the same value or the same error, for odd lines too."""

    from rat_tui.protocol import router

    lines = [b'{"a": 1}', b'{"n": 123456789012345678901234567890}', b'{"n": -99999999999999999999999}',
             b'{"x": NaN}', b'{"x": Infinity}', b'{"x": -Infinity}', b'\xef\xbb\xbf{"bom": true}',
             '{"u": "\u00e9"}'.encode("utf-16"), '{"u": 2}'.encode("utf-32-le"), '{"u": 3}'.encode("utf-16-le"), b'{"t": "\\ud800"}',
             b'{"t": "\xed\xa0\x80"}', b'{"t": "\xff"}', b"not json", b"", b"[1, 2.5e400]", b'{"a": 1} x',
             # objects read by the scan alone when it ends at the line's last `}`, by `decode` otherwise
             b'{}', b'{"a": 1}}', b'{"a": 1} }', b'{"a": [1, {"b": 2}]}x}', b'{"a": 1} ', b'{"a": 1', b"{", b"{}}",
             b'{"a": tru}', b'{"a": NaN}', b'{"n": 1e999}', b'{"t": "caf\xc3\xa9"}', b'{"t": "caf\xc3\xa9 \xed\xa0\x80"}',
             b'{"t": "\\ud83d\\ude00 \\udc00"}', b'{"t": "\\\\ud800"}', b'{"k\xff": 1}', b'{"a": "}']
    # Read by orjson, unless a number of 19 digits or more is in the line (then as before): numbers at and
    # around where orjson and the stdlib part (2**63, 2**64), a text holding 19 digits, floats hard to round,
    # what orjson refuses (a control character, 2,000 levels deep), whitespace around, a repeated key.
    numbers = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**18, -(10**18), 99999999999999999]
    lines += [b'{"id": %d, "n": [%d]}' % (n, n) for n in numbers] + [b'{"t": "%d"}' % 2**64]
    floats = [b"2.2250738585072011e-308", b"1.7976931348623157e308", b"5e-324", b"0.1000000000000000055511151231257827",
              b"1.00000000000000011102230246251565404236316680908203125", b"9007199254740993", b"-0.0", b"1E+2",
              b"1.7976931348623159e308", b"4.9406564584124654e-325"]
    rng = random.Random(11)
    floats += [repr(rng.uniform(-1, 1) * 10.0 ** rng.randint(-300, 300)).encode() for _ in range(300)]
    floats += [b"0.%d" % rng.randrange(10**17) for _ in range(100)]
    lines += [b'{"f": %s}' % f for f in floats]
    lines += [b'{"t": "a\\tb"}', b'{"t": "a\tb"}', b'{"t": "a\x01b"}', b'\t{"a": 1}\r', b'  {"a": 1}  ',
              b'{"a": 1, "a": 2}', b'{"t": "\\/\\b\\u00e9"}', b"[" * 2000 + b"]" * 2000, b'{"a": 1}\x00']
    lines += [line.decode("utf-8", "replace") for line in lines[:6]] + ["\ufeff{}"]

    def outcome(read, line):
        try:
            return ("value", repr(read(line)))
        except Exception as error:  # noqa: BLE001 (the type is what is compared)
            return ("error", type(error).__name__)

    for line in lines:
        want = outcome(lambda s: decode_line_loads(s, router), line)
        assert outcome(lambda s: decode_line(s, router.WIRE_DECODER), line) == want, line


def decode_line_loads(line, router):
    """decode_line as it was: json.loads with the router's options, then the same mending."""
    from rat_tui.protocol.lines import _MAYBE_SURROGATE, _LONE_SURROGATE, mend

    options = {"parse_int": router._bounded_int, "parse_constant": router._no_constant}
    if isinstance(line, str):
        value = json.loads(line, **options)
        return mend(value) if "\\u" in line or _LONE_SURROGATE.search(line) else value
    try:
        value = json.loads(line, **options)
    except UnicodeDecodeError:
        return mend(json.loads(line.decode("utf-8", "replace"), **options))
    return mend(value) if (b"\\u" in line or b"\xed" in line) and _MAYBE_SURROGATE.search(line) else value


def test_a_streamed_chunk_s_line_is_read_by_orjson_and_a_long_number_s_line_is_not(monkeypatch) -> None:
    """The router reads a line with orjson (1.3 us for a streamed chunk's line, 3.8 with the stdlib's decoder);
    a line holding a number of 19 digits or more, which orjson reads otherwise, with the stdlib's. The values
    are the same either way (the test above): only which reader ran says the fast one still does."""
    from rat_tui.protocol import lines, router

    read: list[bytes] = []
    loads = lines.orjson.loads
    monkeypatch.setattr(lines.orjson, "loads", lambda line: read.append(line) or loads(line))
    chunk = (b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":'
             b'"agent_message_chunk","content":{"type":"text","text":"item 1234567890 of 12"}}}}')
    assert decode_line(chunk, router.WIRE_DECODER)["params"]["update"]["content"]["text"] == "item 1234567890 of 12"
    assert read == [chunk]
    assert decode_line(b'{"id": 9223372036854775808}', router.WIRE_DECODER) == {"id": 2**63 - 1}
    assert read == [chunk]
