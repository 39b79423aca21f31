"""Hostile fs/read_text_file requests over real pipes: reads are capped by a byte budget (an 8 GiB sparse
file with no limit, a single line longer than the cap) and answered with a clear error naming the file
and the cap, quickly and in bounded memory; a `line` or `limit` too big for any file is invalid params."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.protocol import fs
from rat_tui.protocol.router import INVALID_PARAMS
from rat_tui.session.agent_session import AgentSession

from .helpers.agents import received, scripted_argv
from .helpers.harness import finish, wait_for


def vm_hwm_kb() -> int:
    for row in Path("/proc/self/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1])
    raise AssertionError("no VmHWM")


def reset_hwm() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets the peak RSS this process reports
        return True
    except OSError:
        return False


def read_request(request_id: int, path: Path, **more) -> dict:
    return {"request": {"id": request_id, "method": "fs/read_text_file",
                        "params": {"sessionId": "$SESSION", "path": str(path), **more}}, "wait": False}


async def answers_to(tmp_path: Path, record: Path, requests: list[dict]) -> dict:
    """Play the requests in one turn of the scripted agent; the answers rat sent, by request id."""
    spec = {"turns": [requests]}
    session = AgentSession(SimpleNamespace(name="fs", argv=scripted_argv(spec, tmp_path), env={}), tmp_path)
    task = asyncio.create_task(session.run())
    try:
        await wait_for(lambda: session.state.status == "ready", what="handshake")
        session.start_prompt("read")
        ids = {step["request"]["id"] for step in requests}
        await wait_for(lambda: ids <= {m.get("id") for m in received(record) if "method" not in m},
                       timeout=30, what="the answers")
        return {m["id"]: m for m in received(record) if "method" not in m and m.get("id") in ids}
    finally:
        await finish(session, task)


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "received.jsonl"
    monkeypatch.setenv("RAT_FAKE_RECORD", str(path))
    return path


async def test_an_8_gib_sparse_file_is_refused_quickly_in_bounded_memory(tmp_path: Path, record: Path) -> None:
    sparse = tmp_path / "sparse.bin"
    with open(sparse, "wb") as file:
        file.truncate(8 * 1024 ** 3)
    long_line = tmp_path / "long-line.txt"
    long_line.write_text("short first line\n" + "x" * (fs.MAX_READ_BYTES + 10) + "\nlast line\n")
    measured = reset_hwm()
    before = vm_hwm_kb()
    started = time.monotonic()
    answers = await answers_to(tmp_path, record, [
        read_request(901, sparse), read_request(902, long_line, line=2, limit=1),
        read_request(903, long_line, line=3), read_request(904, long_line, limit=1)])
    took = time.monotonic() - started
    grew_mb = (vm_hwm_kb() - before) / 1024
    print(f"8 GiB sparse read: answered in {took:.2f} s, peak RSS +{grew_mb:.0f} MB (from {before // 1024} MB)")
    for request_id, path, where in ((901, sparse, ""), (902, long_line, " from line 2")):
        error = answers[request_id]["error"]
        assert error["code"] == INVALID_PARAMS
        assert error["message"] == (f"Cannot read {path}{where}: the text is over the 16 MiB read cap "
                                    "(ask for fewer lines with line and limit)")
        assert error["data"] == {"path": str(path), "maxBytes": fs.MAX_READ_BYTES}
    # A line past the long one, and the one before it, are read (the long one skipped in pieces).
    assert answers[903]["result"] == {"content": "last line\n"}
    assert answers[904]["result"] == {"content": "short first line\n"}
    if measured:
        assert grew_mb < 100  # (a 16 MiB piece read, encoded once to count it, the models imported)
    assert took < 15


@pytest.mark.parametrize("params", [{"line": sys.maxsize + 1}, {"line": 10 ** 30}, {"limit": 10 ** 30},
                                    {"line": 1, "limit": sys.maxsize}, {"line": -1}, {"limit": 1.5}])
async def test_a_line_or_limit_too_big_for_any_file_is_invalid_params(tmp_path: Path, record: Path, params) -> None:
    small = tmp_path / "small.txt"
    small.write_text("a\nb\n")
    answers = await answers_to(tmp_path, record, [read_request(905, small, **params)])
    error = answers[905].get("error", answers[905])
    key = next(iter(params)) if len(params) == 1 else "limit"
    assert error["code"] == INVALID_PARAMS and error["message"] == (
        f"{key} must be a non-negative integer below {sys.maxsize}"), json.dumps(error)


def test_the_read_cap_counts_utf8_bytes_and_the_largest_line_values_still_read(tmp_path: Path) -> None:
    text = tmp_path / "wide.txt"
    text.write_text("é" * 600 + "\nend\n")  # 1,201 bytes on disk, 601 characters on its first line
    with pytest.raises(fs.ReadTooLarge):
        fs._read_lines(text, None, None, cap=1200)
    assert fs._read_lines(text, None, None, cap=1206) == "é" * 600 + "\nend\n"
    assert fs._read_lines(text, sys.maxsize - 1, sys.maxsize - 1) == ""
    assert fs._read_lines(text, 2, sys.maxsize - 1) == "end\n"
