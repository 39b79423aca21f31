"""The demo agent's coding-agent scenarios (edit, write, read, run, fail, bigdiff, all), played against
`FakeClient` (tests/helpers/demo_driver.py): fs from a tmp dir, terminals really run, permissions by kind.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from .helpers.demo_driver import (
    TIMEOUT, answer_text, calls_of_kind, final_status, prompt_params, start_with_client, texts_in, updates_of,
)

pytestmark = pytest.mark.slow


async def test_default_answer_lists_the_keywords(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace)
    response = await driver.request("session/prompt", prompt_params(session_id, "what can you do?"))
    assert response["result"] == {"stopReason": "end_turn"}
    text = answer_text(driver)
    for word in ("edit", "write", "read", "run", "fail", "bigdiff", "all"):
        assert f"- `{word}`" in text
    assert client.calls == [], "the default turn reads the file itself, not through the client"
    assert await driver.close() == 0


async def test_edit_allowed_creates_then_edits_the_notes(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace)
    response = await driver.request("session/prompt", prompt_params(session_id, "please EDIT something"))
    assert response["result"] == {"stopReason": "end_turn"}
    notes = workspace / "demo-notes.txt"
    text = notes.read_text()
    assert "status: edited by rat-demo (1 edit)" in text and text.endswith("- edit 1 by rat-demo\n")
    assert client.methods() == [
        "fs/read_text_file",  # missing: -32002
        "session/request_permission",  # to create it: nothing is written before the answer
        "fs/write_text_file",
    ]
    permission = client.params_of("session/request_permission")[0]
    assert [(o["optionId"], o["kind"]) for o in permission["options"]] == [
        ("allow_always", "allow_always"),
        ("allow", "allow_once"),
        ("reject", "reject_once"),
    ]
    [create] = calls_of_kind(driver, "edit")
    assert create["title"] == "Create demo-notes.txt" and permission["toolCall"]["toolCallId"] == create["toolCallId"]
    assert create["content"][0]["oldText"] is None and create["content"][0]["newText"] == text
    assert "**edit**: created `demo-notes.txt`" in answer_text(driver)

    # a second edit reads the existing file and edits it
    client.calls.clear()
    response = await driver.request("session/prompt", prompt_params(session_id, "edit again"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert client.methods() == ["fs/read_text_file", "session/request_permission", "fs/write_text_file"]
    edit = next(c for c in calls_of_kind(driver, "edit") if c["title"] == "Edit demo-notes.txt")
    permission = client.params_of("session/request_permission")[0]
    assert permission["toolCall"]["toolCallId"] == edit["toolCallId"]
    assert edit["status"] == "pending"
    diff = edit["content"][0]
    assert diff["type"] == "diff" and diff["path"] == str(notes) and diff["oldText"] == text
    old_lines, new_lines = diff["oldText"].splitlines(), diff["newText"].splitlines()
    assert len(new_lines) == len(old_lines) + 1
    assert sum(a != b for a, b in zip(old_lines, new_lines)) == 1
    assert diff["newText"] == notes.read_text()
    done = updates_of(driver, edit)[-1]
    assert done["status"] == "completed" and done["content"] == [diff]
    assert "**edit**: changed `demo-notes.txt`" in answer_text(driver)
    assert "(2 edits)" in notes.read_text() and notes.read_text().endswith("- edit 2 by rat-demo\n")
    assert await driver.close() == 0


async def test_edit_rejected_on_a_missing_file_creates_nothing(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace, permission="reject_once")
    response = await driver.request("session/prompt", prompt_params(session_id, "edit"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert client.methods() == ["fs/read_text_file", "session/request_permission"]
    assert not (workspace / "demo-notes.txt").exists()
    assert await driver.close() == 0


async def test_edit_rejected_leaves_the_file(workspace: Path) -> None:
    notes = workspace / "demo-notes.txt"
    notes.write_text("one\ntwo\nstatus: mine\n")
    driver, client, session_id = await start_with_client(workspace, permission="reject_once")
    response = await driver.request("session/prompt", prompt_params(session_id, "edit"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert notes.read_text() == "one\ntwo\nstatus: mine\n"
    assert client.methods() == ["fs/read_text_file", "session/request_permission"]
    [edit] = calls_of_kind(driver, "edit")
    assert edit["content"][0]["oldText"] == "one\ntwo\nstatus: mine\n"
    assert final_status(driver, edit) == "failed"
    assert texts_in(updates_of(driver, edit)[-1]) == ["The user rejected this edit"]
    assert "rejected" in answer_text(driver)
    assert await driver.close() == 0


@pytest.mark.parametrize("permission", ["cancelled", "cancel_session"])
async def test_edit_cancelled_at_the_permission(workspace: Path, permission: str) -> None:
    (workspace / "demo-notes.txt").write_text("status: draft\n")
    driver, client, session_id = await start_with_client(workspace, permission=permission)
    response = await driver.request("session/prompt", prompt_params(session_id, "edit and write"))
    assert response["result"] == {"stopReason": "cancelled"}
    assert (workspace / "demo-notes.txt").read_text() == "status: draft\n"
    assert "fs/write_text_file" not in client.methods()
    assert not driver.updates("agent_message_chunk")
    [edit] = calls_of_kind(driver, "edit")
    assert final_status(driver, edit) == "failed"  # not left pending
    assert not (workspace / "demo-new-file.md").exists(), "the write scenario ran after the cancel"
    # the late answer to the permission request does not upset the agent; the session goes on
    client.permission = "allow_once"
    again = await driver.request("session/prompt", prompt_params(session_id, "write"))
    assert again["result"] == {"stopReason": "end_turn"}
    assert (workspace / "demo-new-file.md").exists()
    assert await driver.close() == 0
    assert b"ignoring" not in driver.stderr


async def test_write_creates_a_new_file(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace, permission="allow_always")
    response = await driver.request("session/prompt", prompt_params(session_id, "Write."))
    assert response["result"] == {"stopReason": "end_turn"}
    created = workspace / "demo-new-file.md"
    assert client.methods() == ["session/request_permission", "fs/write_text_file"]
    [write] = calls_of_kind(driver, "edit")
    diff = write["content"][0]
    assert diff == {"type": "diff", "path": str(created), "oldText": None, "newText": created.read_text()}
    assert final_status(driver, write) == "completed"
    # a second write never overwrites the first file
    await driver.request("session/prompt", prompt_params(session_id, "write"))
    assert (workspace / "demo-new-file-2.md").exists()
    assert await driver.close() == 0


async def test_read_first_lines(workspace: Path) -> None:
    (workspace / "README.md").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    driver, client, session_id = await start_with_client(workspace)
    response = await driver.request("session/prompt", prompt_params(session_id, "read"))
    assert response["result"] == {"stopReason": "end_turn"}
    [params] = client.params_of("fs/read_text_file")
    assert params == {"sessionId": session_id, "path": str(workspace / "README.md"), "line": 1, "limit": 5}
    [read] = calls_of_kind(driver, "read")
    assert read["locations"] == [{"path": str(workspace / "README.md"), "line": 1}]
    done = updates_of(driver, read)[-1]
    assert done["status"] == "completed"
    assert texts_in(done) == ["line 1\nline 2\nline 3\nline 4\nline 5\n"]
    assert await driver.close() == 0


async def test_run_in_a_terminal(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace, permission="allow_once")
    response = await driver.request("session/prompt", prompt_params(session_id, "run it"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert client.methods() == [
        "session/request_permission",
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    permission = client.params_of("session/request_permission")[0]
    assert [(o["optionId"], o["kind"]) for o in permission["options"]] == [
        ("proceed_always", "allow_always"),
        ("proceed_once", "allow_once"),
        ("cancel", "reject_once"),
    ]
    [create] = client.params_of("terminal/create")
    assert create["command"] == "echo demo-terminal-ok && ls" and not create.get("args")
    assert create["cwd"] == str(workspace) and create["outputByteLimit"] == 32000
    [run] = calls_of_kind(driver, "execute")
    assert run["title"] == "echo demo-terminal-ok && ls"
    ups = updates_of(driver, run)
    assert ups[0]["status"] == "in_progress"
    assert ups[0]["content"] == [{"type": "terminal", "terminalId": "term-1"}]
    assert ups[-1]["status"] == "completed"
    assert "demo-terminal-ok\n" in ups[-1]["rawOutput"]["output"] and "README.md" in ups[-1]["rawOutput"]["output"]
    # the completed update comes before the release
    release_id = next(m["id"] for m in driver.received if m.get("method") == "terminal/release")
    completed_at = next(i for i, m in enumerate(driver.received) if m.get("params", {}).get("update") == ups[-1])
    release_at = next(i for i, m in enumerate(driver.received) if m.get("id") == release_id and "method" in m)
    assert completed_at < release_at
    assert await driver.close() == 0


async def test_run_rejected_and_terminal_keyword(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace, permission="reject_once")
    response = await driver.request("session/prompt", prompt_params(session_id, "open a Terminal"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert client.methods() == ["session/request_permission"]
    [run] = calls_of_kind(driver, "execute")
    assert final_status(driver, run) == "failed"
    assert await driver.close() == 0


async def test_cancel_while_waiting_for_the_terminal(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace, hold_wait=True)
    pending = driver.request_nowait("session/prompt", prompt_params(session_id, "run"))
    await driver.wait_for(lambda: "terminal/wait_for_exit" in client.methods(), "the wait")
    driver.notify("session/cancel", {"sessionId": session_id})
    response = await asyncio.wait_for(pending, TIMEOUT)
    assert response["result"] == {"stopReason": "cancelled"}
    await driver.wait_for(lambda: "terminal/release" in client.methods(), "the release")
    assert client.methods()[-2:] == ["terminal/kill", "terminal/release"]
    [run] = calls_of_kind(driver, "execute")
    assert final_status(driver, run) == "failed"
    assert await driver.close() == 0


async def test_fail_still_ends_the_turn(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace)
    response = await driver.request("session/prompt", prompt_params(session_id, "fail"))
    assert response["result"] == {"stopReason": "end_turn"}
    [fetch] = calls_of_kind(driver, "fetch")
    done = updates_of(driver, fetch)[-1]
    assert done["status"] == "failed" and "Could not fetch" in texts_in(done)[0]
    assert client.calls == []
    assert await driver.close() == 0


async def test_bigdiff(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace)
    response = await driver.request("session/prompt", prompt_params(session_id, "show me a bigdiff"))
    assert response["result"] == {"stopReason": "end_turn"}
    [edit] = calls_of_kind(driver, "edit")
    diff = edit["content"][0]
    old, new = diff["oldText"].splitlines(), diff["newText"].splitlines()
    assert len(old) == len(new) == 20_000
    assert 150 <= sum(a != b for a, b in zip(old, new)) <= 250
    assert final_status(driver, edit) == "completed"
    assert client.calls == [], "bigdiff asks nothing and writes nothing"
    assert not (workspace / "demo-big-file.txt").exists()
    assert await driver.close() == 0


async def test_all_plays_every_scenario_but_bigdiff(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace)
    response = await driver.request("session/prompt", prompt_params(session_id, "do it ALL"))
    assert response["result"] == {"stopReason": "end_turn"}
    kinds = [c["kind"] for c in driver.updates("tool_call")]
    # edit: read + create; write; read; run; fail
    assert kinds == ["read", "edit", "edit", "read", "execute", "fetch"]
    plan = driver.updates("plan")[-1]["entries"]
    assert len(plan) == 7 and all(e["status"] == "completed" for e in plan)
    text = answer_text(driver)
    assert all(f"**{name}**" in text for name in ("edit", "write", "read", "run", "fail"))
    assert "**bigdiff**" not in text
    assert await driver.close() == 0


async def test_client_without_fs_or_terminal(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace, capabilities={"fs": {}, "terminal": False})
    response = await driver.request("session/prompt", prompt_params(session_id, "all"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert client.calls == [], "no fs, terminal or permission request without the capabilities"
    assert [c["kind"] for c in driver.updates("tool_call")] == ["fetch"]
    text = answer_text(driver)
    assert "did not advertise `fs.readTextFile` and `fs.writeTextFile`" in text
    assert "did not advertise `terminal`" in text
    assert await driver.close() == 0


async def test_client_errors_fail_the_tool_call_and_the_turn_goes_on(workspace: Path) -> None:
    errors = {
        "fs/write_text_file": (-32001, "Access denied: not today"),
        "terminal/create": (-32601, "Method not found"),
    }
    (workspace / "demo-notes.txt").write_text("status: draft\n")
    driver, client, session_id = await start_with_client(workspace, errors=errors)
    response = await driver.request("session/prompt", prompt_params(session_id, "edit write run"))
    assert response["result"] == {"stopReason": "end_turn"}
    failed = [c for c in driver.updates("tool_call") if final_status(driver, c) == "failed"]
    assert [c["kind"] for c in failed] == ["edit", "edit", "execute"]
    assert all(
        re.search(r"Access denied: not today|Method not found", texts_in(updates_of(driver, c)[-1])[0]) for c in failed
    )
    assert (workspace / "demo-notes.txt").read_text() == "status: draft\n"
    assert "terminal/release" not in client.methods()  # nothing was created
    assert len(driver.updates("agent_message_chunk")) > 0
    assert await driver.close() == 0
