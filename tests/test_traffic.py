"""Tests TrafficLog (ring, listeners, lazy redaction), its feed from a real Connection, and TrafficScreen."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

from rat_tui.protocol import traffic as traffic_module
from rat_tui.protocol.client import AcpClient
from rat_tui.protocol.router import Connection
from rat_tui.protocol.rpc_log import REDACTED, RpcLog
from rat_tui.protocol.traffic import TrafficLog
from rat_tui.protocol.transport import AgentProcess
from rat_tui.ui.screens.traffic import TrafficScreen

from .helpers.agents import scripted_argv
from .helpers.app import until
from .helpers.harness import RatThemedApp

# 2026-01-02 10:00:00 UTC; the screen shows local time, so the tests pin TZ to UTC.
T0 = 1767348000.0


@pytest.fixture
def utc() -> Iterator[None]:
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def chunk(n: int) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"chunk {n} "}}}}


# -- TrafficLog ---------------------------------------------------------------------------------


def test_ring_keeps_the_newest_and_counts_the_dropped() -> None:
    log = TrafficLog(limit=3)
    for n in range(5):
        log.record("in", chunk(n), 100)
    assert [r.seq for r in log.records] == [3, 4, 5]
    assert log.dropped == 2 and log.total == 5 and len(log) == 3
    assert log.get(2) is None and log.get(4).seq == 4 and log.get(6) is None


def test_records_carry_method_id_size_and_latency() -> None:
    log = TrafficLog(clock=lambda: T0)
    log.record("out", {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {}}, 80)
    request = log.records[-1]
    log.record("in", {"jsonrpc": "2.0", "id": 7, "result": {}}, 40, method="session/prompt", latency=0.25)
    answer = log.records[-1]
    log.record("in", "not json", 9)
    garbage = log.records[-1]
    assert (request.direction, request.method, request.id, request.size, request.latency_ms) == (
        "out", "session/prompt", 7, 80, None)
    assert (answer.method, answer.id, answer.latency_ms, answer.time) == ("session/prompt", 7, 250.0, T0)
    assert answer.is_response and not request.is_response
    assert garbage.is_malformed and garbage.method is None and garbage.message == "not json"


def test_listeners_hear_new_records_until_they_unsubscribe() -> None:
    log = TrafficLog()
    heard: list[int] = []
    stop = log.subscribe(lambda record: heard.append(record.seq))
    once: list[int] = []

    def only_once(record) -> None:
        once.append(record.seq)
        stop_once()

    stop_once = log.subscribe(only_once)  # unsubscribing inside the call is safe
    log.record("in", chunk(1), 10)
    stop()
    log.record("in", chunk(2), 10)
    assert heard == [1] and once == [1]


def test_a_failing_listener_does_not_break_recording() -> None:
    log = TrafficLog()
    log.subscribe(lambda record: 1 / 0)
    log.record("in", chunk(1), 10)
    assert len(log) == 1


def test_redaction_is_lazy_and_never_touches_the_live_message(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = traffic_module.redact
    monkeypatch.setattr(traffic_module, "redact", lambda *a, **k: calls.append(1) or real(*a, **k))
    log = TrafficLog()
    for n in range(1000):
        log.record("in", chunk(n), 150)
    secret = {"jsonrpc": "2.0", "id": 1, "method": "authenticate", "params": {"apiKey": "sk-live", "text": "x" * 5000}}
    log.record("out", secret, 200)
    entry = log.records[-1]
    assert calls == [], "recording must not redact"
    shown = entry.message
    assert shown["params"]["apiKey"] == REDACTED and len(shown["params"]["text"]) < 2100
    assert len(entry.redacted(max_string=100)["params"]["text"]) < 200
    assert secret["params"]["apiKey"] == "sk-live"
    assert len(calls) == 2


def test_a_big_message_is_redacted_at_once_so_the_ring_does_not_pin_it() -> None:
    log = TrafficLog()
    big = {"jsonrpc": "2.0", "id": 3, "result": {"content": "y" * 1_000_000, "token": "t"}}
    log.record("in", big, 1_000_050, method="fs/read_text_file")
    entry = log.records[-1]
    held = entry._payload
    assert held is not big and len(held["result"]["content"]) < 2100 and held["result"]["token"] == REDACTED
    assert entry.message is held

def test_a_routed_line_is_kept_as_its_bytes_and_shown_as_it_crossed_the_wire() -> None:
    """The ring holds the line, not the message the router decoded: the message's dicts are freed as soon
    as it is handled (a flood of chunks no longer pins 5,000 trees of them), and what a handler does to
    the message later does not change what the inspector shows."""

    class NoProcess:
        async def write_line(self, line: bytes) -> None: ...

    kept = []

    def handler(method: str, params: dict) -> None:
        if "update" in params:
            kept.append(params)
            params["update"]["content"]["text"] = "changed by a handler"

    log = TrafficLog()
    connection = Connection(NoProcess(), handler, traffic=log)  # type: ignore[arg-type]
    connection._route_line(json.dumps(chunk(1)).encode())
    connection._route_line(b'{"jsonrpc":"2.0","method":"session/update","params":{"t":"\\ud800 \xff"}}')
    holders = [r for r in gc.get_referrers(kept[0]) if isinstance(r, dict) and "jsonrpc" in r]
    assert holders == [], "the ring must not keep the decoded message"
    chunk_record, odd = log.records
    assert chunk_record.message["params"]["update"]["content"]["text"] == "chunk 1 "
    assert odd.message["params"]["t"] == "\ufffd \ufffd"  # decoded as the router decodes it
    assert chunk_record.method == "session/update" and chunk_record.size > 100



def test_every_routed_message_reaches_the_ring_and_its_listeners() -> None:
    """20,000 chunks through Connection's routing: the ring keeps the newest 5,000, listeners hear all.

    What the recording costs is measured by bench/traffic.py, not here.
    """

    class NoProcess:
        async def write_line(self, line: bytes) -> None: ...

    log = TrafficLog()
    heard = [0]
    log.subscribe(lambda record: heard.__setitem__(0, heard[0] + 1))
    connection = Connection(NoProcess(), lambda method, params: None, traffic=log)  # type: ignore[arg-type]
    for n in range(20_000):
        connection._route_line(json.dumps(chunk(n)).encode())
    assert len(log) == 5_000 and log.dropped == 15_000 and heard[0] == 20_000
    assert log.records[-1].message["params"]["update"]["content"]["text"] == "chunk 19999 "


def test_a_listener_hears_a_flood_without_decoding_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The inspector, open, hears every message of a flood: its list needs the fields, not the message, so a line
    kept as its bytes is decoded only when its message is asked for (it doubled the ring's cost per line)."""

    class NoProcess:
        async def write_line(self, line: bytes) -> None: ...

    decoded = []
    real = traffic_module.decode_line
    monkeypatch.setattr(traffic_module, "decode_line", lambda line: decoded.append(1) or real(line))
    log = TrafficLog()
    heard = []
    log.subscribe(lambda record: heard.append((record.seq, record.direction, record.method, record.size)))
    connection = Connection(NoProcess(), lambda method, params: None, traffic=log)  # type: ignore[arg-type]
    for n in range(1000):
        connection._route_line(json.dumps(chunk(n)).encode())
    assert len(heard) == 1000 and heard[-1][:3] == (1000, "in", "session/update")
    assert decoded == []
    newest = log.records[-1]
    assert newest.message["params"]["update"]["content"]["text"] == "chunk 999 " and not newest.is_error
    assert decoded == [1]


# -- a real Connection --------------------------------------------------------------------------


async def test_connection_records_initialize_and_its_answer(tmp_path: Path, record_file: Path) -> None:
    script = {"before_initialize": [
        {"request": {"id": "fs-1", "method": "fs/read_text_file", "params": {"sessionId": "s", "path": "/x"}}},
        {"raw": "this is not json"},
    ]}
    process = AgentProcess(scripted_argv(script, tmp_path), tmp_path)
    await process.start()
    traffic = TrafficLog()
    rpc_log = RpcLog(tmp_path / "rpc.jsonl")
    connection = Connection(process, lambda method, params: None, rpc_log=rpc_log, traffic=traffic)
    reader = asyncio.create_task(connection.run())
    try:
        hello = await asyncio.wait_for(AcpClient(connection).initialize(), 10)
    finally:
        await process.close()
        await reader
        rpc_log.close()
    assert hello.name == "scripted-agent"
    rows = [(r.direction, r.method, r.id) for r in traffic.records]
    assert rows == [
        ("out", "initialize", 0),
        ("in", "fs/read_text_file", "fs-1"),
        ("out", "fs/read_text_file", "fs-1"),  # our answer (method not found) carries its request's method
        ("in", None, None),
        ("in", "initialize", 0),
    ]
    request, _, answer_to_agent, garbage, response = traffic.records
    assert response.latency_ms is not None and response.latency_ms > 0 and response.is_response
    assert answer_to_agent.latency_ms is not None and answer_to_agent.is_error
    assert garbage.is_malformed and request.latency_ms is None
    assert request.message["params"]["clientInfo"]["name"]
    # One entry point feeds both: the --rpc-log file holds the same messages, in the same order.
    logged = [json.loads(line) for line in (tmp_path / "rpc.jsonl").read_text().splitlines()]
    assert [(e["dir"], e.get("method"), e.get("id"), e["bytes"]) for e in logged] == [
        (r.direction, r.method, r.id, r.size) for r in traffic.records
    ]
    assert logged[-1]["latency_ms"] == round(response.latency_ms, 3)


# -- TrafficScreen ------------------------------------------------------------------------------


def fixed_traffic() -> TrafficLog:
    """A session's first messages, at fixed times, with a secret in the initialize request."""
    times = iter(T0 + n * 0.137 for n in range(100))
    log = TrafficLog(clock=lambda: next(times))
    log.record("out", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": 1, "clientInfo": {"name": "rat-tui", "version": "0.1"},
        "_meta": {"apiKey": "sk-very-secret", "note": "kept"}}}, 182)
    log.record("in", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "agentInfo": {"name": "fake"}}},
               96, method="initialize", latency=0.0421)
    log.record("out", {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/p", "mcpServers": []}},
               88)
    log.record("in", {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}, 52, method="session/new",
               latency=0.3107)
    log.record("out", {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {
        "sessionId": "s1", "prompt": [{"type": "text", "text": "hello"}]}}, 120)
    for n in range(3):
        log.record("in", chunk(n), 150 + n)
    log.record("in", {"jsonrpc": "2.0", "id": "p-1", "method": "session/request_permission", "params": {
        "sessionId": "s1", "toolCall": {"toolCallId": "t1"}, "options": []}}, 140)
    log.record("out", {"jsonrpc": "2.0", "id": "p-1", "error": {"code": -32800, "message": "Request cancelled"}}, 81,
               method="session/request_permission", latency=1.5)
    log.record("in", "garbage {", 10)
    log.record("in", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}, 55, method="session/prompt",
               latency=2.0304)
    return log


class TrafficApp(RatThemedApp):
    """Pushes one TrafficScreen over a placeholder, with rat's themes."""

    def __init__(self, traffic: TrafficLog) -> None:
        super().__init__()
        self.traffic = traffic
        self.closed = False

    def compose(self) -> ComposeResult:
        yield Static("The session would be here.")

    def on_mount(self) -> None:
        self.use_rat_theme()
        self.push_screen(TrafficScreen(self.traffic), lambda _: setattr(self, "closed", True))


def table_rows(app: App) -> list[list[str]]:
    table = app.screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def detail_text(app: App) -> str:
    return str(app.screen.query_one("#traffic-json", Static).render())


async def test_screen_lists_a_request_and_its_answer_live(utc: None) -> None:
    traffic = TrafficLog(clock=lambda: T0)
    app = TrafficApp(traffic)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert table_rows(app) == []
        traffic.record("out", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}, 60)
        traffic.record("in", {"jsonrpc": "2.0", "id": 0, "result": {}}, 1234, method="initialize", latency=0.0123)
        await until(pilot, lambda: len(table_rows(app)) == 2, "both rows")
        assert table_rows(app) == [
            ["1", "10:00:00.000", "→", "initialize", "0", "60", ""],
            ["2", "10:00:00.000", "←", "initialize", "0", "1,234", "12.3 ms"],
        ]
        assert app.screen.query_one(DataTable).cursor_row == 1, "following: the newest row is current"


async def test_a_flood_is_added_in_a_few_batches() -> None:
    traffic = TrafficLog()
    app = TrafficApp(traffic)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TrafficScreen)
        flushes = []
        real_flush = screen._flush
        screen._flush = lambda: flushes.append(1) or real_flush()  # type: ignore[method-assign]
        for n in range(3000):
            traffic.record("in", chunk(n), 150)
        await until(pilot, lambda: screen.query_one(DataTable).row_count == 3000, "the flood in the table")
        assert len(flushes) == 1


async def test_the_table_stays_within_the_ring() -> None:
    traffic = TrafficLog(limit=100)
    app = TrafficApp(traffic)
    async with app.run_test(size=(100, 30)) as pilot:
        for n in range(1000):
            traffic.record("in", chunk(n), 150)
            if n % 90 == 0:
                await pilot.pause(0.15)
        await until(pilot, lambda: [row[0] for row in table_rows(app)][-1:] == ["1000"], "the last row")
        rows = table_rows(app)
        assert len(rows) <= 125 and rows[-1][0] == "1000"
        assert "900 older dropped" in str(app.screen.query_one("#traffic-status", Static).render())


async def test_filter_by_method_direction_and_id() -> None:
    app = TrafficApp(fixed_traffic())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert len(table_rows(app)) == 12
        await pilot.press("slash", *"prompt")
        await pilot.pause()
        assert [row[0] for row in table_rows(app)] == ["5", "12"]
        await pilot.press("space", "i", "n")
        await pilot.pause()
        assert [row[0] for row in table_rows(app)] == ["12"]
        await pilot.press("escape")  # clears the filter
        await pilot.pause()
        assert len(table_rows(app)) == 12 and not app.closed
        await pilot.press("slash", *"p-1")
        await pilot.pause()
        assert [row[0] for row in table_rows(app)] == ["9", "10"]
        await pilot.press("escape", "escape")  # clear, then close
        await pilot.pause()
        assert app.closed


async def test_filter_by_the_kind_of_an_update_kept_as_bytes() -> None:
    """`plan` finds the plan updates: a routed line is kept as its bytes, and its kind is read from them."""

    class NoProcess:
        async def write_line(self, line: bytes) -> None: ...

    traffic = TrafficLog()
    connection = Connection(NoProcess(), lambda method, params: None, traffic=traffic)  # type: ignore[arg-type]
    plan = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {
        "sessionUpdate": "plan", "entries": [{"content": "chunk", "priority": "high", "status": "pending"}]}}}
    for line in (chunk(1), plan, chunk(2)):
        connection._route_line(json.dumps(line).encode())
    assert [record.update_kind for record in traffic.records] == ["agent_message_chunk", "plan", "agent_message_chunk"]
    app = TrafficApp(traffic)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: len(table_rows(app)) == 3, "the rows")
        await pilot.press("slash", *"plan")
        await until(pilot, lambda: [row[0] for row in table_rows(app)] == ["2"], "the plan update alone")


async def test_enter_shows_the_redacted_json_of_a_row() -> None:
    app = TrafficApp(fixed_traffic())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert "Enter on a message" in detail_text(app)
        await pilot.press("ctrl+home", "enter")
        await pilot.pause()
        shown = detail_text(app)
        assert "#1 client → agent · initialize" in shown
        assert '"apiKey": "REDACTED"' in shown and "sk-very-secret" not in shown
        assert '"note": "kept"' in shown
        screen = app.screen
        assert isinstance(screen, TrafficScreen)
        assert screen.follow is False, "moving off the newest row stops following"
        await pilot.press("f")
        assert screen.follow and screen.query_one(DataTable).cursor_row == 11


def test_snapshot_traffic_screen(snap_compare, utc: None) -> None:
    async def select_the_request(pilot) -> None:
        await pilot.pause()
        await pilot.press("ctrl+home", "enter")
        await pilot.pause()

    assert snap_compare(TrafficApp(fixed_traffic()), terminal_size=(100, 30), run_before=select_the_request)
