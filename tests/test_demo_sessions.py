"""The demo agent's sessions: load, list, resume and close across a restart, close during a turn, and its
store on disk (bad lines, an unwritable folder).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from .helpers.demo_driver import (
    BOOLEAN_CAPS, DEMO_ARGV, TIMEOUT, Driver, initialize, new_session, options_by_id, prompt_params,
)

pytestmark = pytest.mark.slow


async def test_sessions_load_list_resume_and_close_across_a_restart(workspace: Path, tmp_path: Path) -> None:
    env = {"RAT_DEMO_STORE": str(tmp_path / "store")}
    first = Driver()
    await first.start(DEMO_ARGV, env=env)
    await initialize(first, BOOLEAN_CAPS)
    session_id = (await new_session(first, workspace))["sessionId"]
    await first.request("session/set_config_option", {"sessionId": session_id, "configId": "model", "value": "demo-pro"})
    await first.request("session/prompt", prompt_params(session_id, "hello there"))
    await first.request("session/prompt", prompt_params(session_id, "fail"))
    other = tmp_path / "elsewhere"
    other.mkdir()
    other_id = (await new_session(first, other))["sessionId"]
    sent = [u for u in first.updates() if u["sessionUpdate"] != "available_commands_update"]
    assert await first.close() == 0

    # a new process: list, then load replays everything, then the session goes on
    second = Driver()
    await second.start(DEMO_ARGV, env=env)
    await initialize(second, BOOLEAN_CAPS)
    listed = (await second.request("session/list", {}))["result"]
    assert {s["sessionId"] for s in listed["sessions"]} == {session_id, other_id}
    assert listed.get("nextCursor") is None
    mine = (await second.request("session/list", {"cwd": str(workspace)}))["result"]["sessions"]
    assert [(s["sessionId"], s["cwd"], s["title"]) for s in mine] == [(session_id, str(workspace), "Hello there")]
    loaded = await second.request("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    replayed = [u for u in second.updates() if u["sessionUpdate"] != "available_commands_update"]
    users = [u for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["content"]["text"] for u in users] == ["hello there", "fail"]
    assert [u for u in replayed if u["sessionUpdate"] != "user_message_chunk"] == sent  # same updates, same order
    load_at = next(i for i, m in enumerate(second.received) if m.get("result") is loaded["result"])
    assert all(m.get("method") != "session/update" or m["params"]["update"]["sessionUpdate"] == "available_commands_update"
               for m in second.received[load_at:]), "every replayed update comes before the load answer"
    assert options_by_id(loaded["result"]["configOptions"])["model"]["currentValue"] == "demo-pro"
    again = await second.request("session/prompt", prompt_params(session_id, "and now?"))
    assert again["result"] == {"stopReason": "end_turn"}
    assert second.updates("usage_update")[-1]["used"] > sent_usage(sent)

    # resume: no replay; close: the session is gone from this process (still loadable)
    before = len(second.updates())
    resumed = await second.request("session/resume", {"sessionId": other_id, "cwd": str(other)})
    assert "configOptions" in resumed["result"]
    # (the agent sends it after its answer: the answer may be read first)
    await second.wait_for(lambda: len(second.updates()) > before, "the update after the resume answer")
    assert [u["sessionUpdate"] for u in second.updates()[before:]] == ["available_commands_update"]
    assert (await second.request("session/close", {"sessionId": other_id}))["result"] == {}
    closed = await second.request("session/prompt", prompt_params(other_id, "hi"))
    assert closed["error"]["code"] == -32602
    missing = await second.request("session/load", {"sessionId": "no-such", "cwd": str(workspace), "mcpServers": []})
    assert missing["error"]["code"] == -32002
    assert await second.close() == 0


def sent_usage(updates: list[dict]) -> int:
    return [u for u in updates if u["sessionUpdate"] == "usage_update"][-1]["used"]


async def test_close_cancels_the_running_turn(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV, env={"RAT_DEMO_DELAY": "0.05"})
    session_id = await driver.handshake(str(workspace))
    pending = driver.request_nowait("session/prompt", prompt_params(session_id, "a long answer"))
    await driver.wait_for(lambda: len(driver.updates("agent_thought_chunk")) >= 1, "streaming")
    assert (await driver.request("session/close", {"sessionId": session_id}))["result"] == {}
    assert (await asyncio.wait_for(pending, TIMEOUT))["result"] == {"stopReason": "cancelled"}
    assert await driver.close() == 0


async def test_archive_hides_a_session_and_unarchive_brings_it_back(workspace: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # archive is unstable (ACP 1.34)
    driver = Driver()
    await driver.start(DEMO_ARGV, env={"RAT_DEMO_STORE": str(tmp_path / "store")})
    await initialize(driver)
    kept = (await new_session(driver, workspace))["sessionId"]
    hidden = (await new_session(driver, workspace))["sessionId"]

    async def listed(**params: str) -> list[tuple[str, bool]]:
        rows = (await driver.request("session/list", params))["result"]["sessions"]
        return sorted((row["sessionId"], row["archived"]) for row in rows)

    assert (await driver.request("session/archive", {"sessionId": hidden}))["result"] == {}
    assert await listed() == [(kept, False)]  # the default: archived ones left out
    assert await listed(archived="include") == sorted([(kept, False), (hidden, True)])
    assert await listed(archived="only") == [(hidden, True)]
    assert (await driver.request("session/list", {"archived": "someday"}))["error"]["code"] == -32602
    closed = await driver.request("session/prompt", prompt_params(hidden, "hi"))  # archiving closed it
    assert closed["error"]["code"] == -32602
    assert (await driver.request("session/archive", {"sessionId": "no-such"}))["error"]["code"] == -32002
    assert (await driver.request("session/unarchive", {"sessionId": hidden}))["result"] == {}
    assert await listed() == sorted([(kept, False), (hidden, False)])
    assert await driver.close() == 0


def test_store_skips_bad_lines_and_survives_an_unwritable_folder(tmp_path: Path) -> None:
    from rat_tui.demo.store import DemoStore

    store = DemoStore(tmp_path / "store")
    store.create("s-1", {"cwd": "/p", "title": None, "updatedAt": "2026-01-01T00:00:00Z"})
    store.append("s-1", {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}})
    with (tmp_path / "store" / "s-1.jsonl").open("a") as f:
        f.write('{"update": {"sessionUpdate": "trunc\n')  # a line cut short by a crash
    store.set_meta("s-1", {"title": "Later"})
    meta, updates = DemoStore(tmp_path / "store").load("s-1")  # as a new process sees it
    assert meta["title"] == "Later" and meta["cwd"] == "/p"
    assert [u["content"]["text"] for u in updates] == ["hi"]
    assert DemoStore(tmp_path / "store").load("../etc/passwd") is None  # ids are never paths
    assert DemoStore(tmp_path / "store").load("unknown") is None

    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    store = DemoStore(blocked / "store")  # cannot be created: kept in memory
    store.create("s-2", {"cwd": "/q", "updatedAt": "2026-01-02T00:00:00Z"})
    store.append("s-2", {"sessionUpdate": "plan", "entries": []})
    assert store.failed and store.load("s-2")[1] == [{"sessionUpdate": "plan", "entries": []}]
    assert [m["sessionId"] for m in store.sessions()] == ["s-2"]
