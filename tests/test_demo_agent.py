"""The embedded demo agent (`python -m rat_tui.demo`), driven as a real subprocess over real pipes.

`Driver` (tests/helpers/demo_driver.py) is a tiny raw JSON-RPC client (no rat_tui.protocol). `FakeClient` answers the agent's
requests (fs from a tmp dir, terminals by really running the command, permissions by option kind)
for the scenario tests.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, Awaitable

import pytest

from .helpers.demo_driver import DEMO_ARGV, TIMEOUT, Driver, prompt_params

pytestmark = pytest.mark.slow


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "README.md").write_text("# Sample project\n\nalpha\nbeta\n")
    (ws / "notes.txt").write_text("gamma\n")
    return ws


async def test_demo_full_turn(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(workspace))
    await driver.wait_for(lambda: driver.updates("available_commands_update"), "commands")
    info = driver.received[0]["result"]
    assert info["agentInfo"]["name"] == "rat-demo"
    assert info["agentCapabilities"]["promptCapabilities"]["embeddedContext"] is True
    assert 2 <= len(driver.updates("available_commands_update")[0]["availableCommands"]) <= 3

    response = await driver.request("session/prompt", prompt_params(session_id, "tell me about frobnicators"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert all(m["params"]["sessionId"] == session_id for m in driver.received if m.get("method"))

    thoughts = driver.updates("agent_thought_chunk")
    assert len(thoughts) > 1 and len({t["messageId"] for t in thoughts}) == 1

    plans = driver.updates("plan")
    assert len(plans) > 2 and all(len(p["entries"]) == 3 for p in plans)
    assert plans[0]["entries"][0]["status"] == "in_progress"
    assert [e["status"] for e in plans[-1]["entries"]] == ["completed"] * 3

    calls = driver.updates("tool_call")
    assert len(calls) == 1 and calls[0]["kind"] == "read" and calls[0]["status"] == "pending"
    call_updates = [u for u in driver.updates("tool_call_update") if u["toolCallId"] == calls[0]["toolCallId"]]
    assert [u["status"] for u in call_updates] == ["in_progress", "completed"]
    done = call_updates[-1]
    assert done["locations"][0]["path"] == str(workspace / "README.md")
    assert "Sample project" in done["content"][0]["content"]["text"]

    chunks = driver.updates("agent_message_chunk")
    assert len(chunks) > 10 and len({c["messageId"] for c in chunks}) == 1
    assert chunks[0]["messageId"] != thoughts[0]["messageId"]
    text = "".join(c["content"]["text"] for c in chunks)
    assert text.startswith("## ")
    assert "tell me about frobnicators" in text
    assert "\n- " in text and "```python\n" in text

    # the order of the story: thought, then the tool call, then the answer
    kinds = [u["sessionUpdate"] for u in driver.updates()]
    assert kinds.index("agent_thought_chunk") < kinds.index("tool_call") < kinds.index("agent_message_chunk")
    assert await driver.close() == 0


async def test_demo_cancel_mid_stream(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV, env={"RAT_DEMO_DELAY": "0.02"})
    session_id = await driver.handshake(str(workspace))
    pending = driver.request_nowait("session/prompt", prompt_params(session_id, "a long answer please"))
    await driver.wait_for(lambda: len(driver.updates("agent_thought_chunk")) >= 2, "streaming")
    driver.notify("session/cancel", {"sessionId": session_id})
    response = await asyncio.wait_for(pending, TIMEOUT)
    assert response["result"] == {"stopReason": "cancelled"}
    assert not driver.updates("agent_message_chunk"), "the answer kept streaming after the cancel"
    # the session still works afterwards
    again = await driver.request("session/prompt", prompt_params(session_id, "again"))
    assert again["result"] == {"stopReason": "end_turn"}
    assert await driver.close() == 0


async def test_demo_unknown_method_and_garbage(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    driver.send_raw("this is not json\n[1, 2]\n\n")
    driver.notify("_unknown/notification", {"x": 1})
    response = await driver.request("session/frobnicate", {"x": 1})
    assert response["error"]["code"] == -32601
    session_id = await driver.handshake(str(workspace))
    bad = await driver.request("session/prompt", prompt_params("no-such-session", "hi"))
    assert bad["error"]["code"] == -32602
    ok = await driver.request("session/prompt", prompt_params(session_id, "still alive?"))
    assert ok["result"]["stopReason"] == "end_turn"
    assert await driver.close() == 0
    assert b"malformed" in driver.stderr


async def test_demo_empty_workspace(tmp_path: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(tmp_path))
    response = await driver.request("session/prompt", prompt_params(session_id, ""))
    assert response["result"]["stopReason"] == "end_turn"
    assert driver.updates("tool_call_update")[-1]["status"] == "completed"
    assert await driver.close() == 0


# --------------------------------------------------------------------------- coding-agent scenarios
class ClientFailure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class FakeClient:
    """Serves the agent's requests: fs from `root`, terminals by really running the shell line.

    `permission` is the option kind to pick ("allow_once", "allow_always", "reject_once"), or
    "cancelled" (answer the cancelled outcome), or "cancel_session" (send session/cancel first, then
    answer cancelled, as a real client does). `errors` maps a method to the (code, message) to fail
    it with. `hold_wait` keeps terminal/wait_for_exit unanswered until the terminal is killed.
    """

    def __init__(
        self,
        root: Path,
        permission: str = "allow_once",
        errors: dict[str, tuple[int, str]] | None = None,
        hold_wait: bool = False,
        elicitation: dict | None = None,
    ) -> None:
        self.root = root
        self.elicitation = elicitation or {"action": "cancel"}  # the answer to elicitation/create
        self.permission = permission
        self.errors = errors or {}
        self.hold_wait = hold_wait
        self.driver: Driver | None = None
        self.calls: list[tuple[str, dict]] = []  # every request from the agent, in order
        self.terminals: dict[str, dict] = {}
        self.killed = asyncio.Event()

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]

    def params_of(self, method: str) -> list[dict]:
        return [params for m, params in self.calls if m == method]

    def __call__(self, msg: dict) -> Awaitable[dict]:
        method, params = msg["method"], msg.get("params") or {}
        self.calls.append((method, params))  # now, so a test waiting on `driver.changed` sees it
        return self.answer(method, params)

    async def answer(self, method: str, params: dict) -> dict:
        if method in self.errors:
            code, message = self.errors[method]
            return {"error": {"code": code, "message": message}}
        handler = getattr(self, method.replace("/", "_"), None)
        if handler is None:
            return {"error": {"code": -32601, "message": f"Method not found: {method}"}}
        try:
            return {"result": await handler(params)}
        except ClientFailure as exc:
            return {"error": {"code": exc.code, "message": exc.message}}

    def _path(self, params: dict) -> Path:
        path = Path(params["path"])
        if not path.is_absolute() or not path.resolve().is_relative_to(self.root.resolve()):
            raise ClientFailure(-32001, f"Access denied: {path}")
        return path

    async def fs_read_text_file(self, params: dict) -> dict:
        path = self._path(params)
        if not path.exists():
            raise ClientFailure(-32002, f"Resource not found: {path}")
        lines = path.read_text().splitlines(keepends=True)
        start = max((params.get("line") or 1) - 1, 0)
        limit = params.get("limit")
        return {"content": "".join(lines[start : None if limit is None else start + limit])}

    async def fs_write_text_file(self, params: dict) -> dict:
        self._path(params).write_text(params["content"])
        return {}

    async def session_request_permission(self, params: dict) -> dict:
        if self.permission in ("cancelled", "cancel_session"):
            if self.permission == "cancel_session":
                self.driver.notify("session/cancel", {"sessionId": params["sessionId"]})
            return {"outcome": {"outcome": "cancelled"}}
        option = next(o for o in params["options"] if o["kind"] == self.permission)
        return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}

    async def terminal_create(self, params: dict) -> dict:
        argv = [params["command"], *params["args"]] if params.get("args") else ["/bin/sh", "-c", params["command"]]
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=params.get("cwd"), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = {"proc": proc, "output": asyncio.create_task(proc.stdout.read())}
        return {"terminalId": terminal_id}

    async def _exit_status(self, terminal: dict) -> dict:
        await terminal["output"]
        return {"exitCode": await terminal["proc"].wait(), "signal": None}

    async def terminal_wait_for_exit(self, params: dict) -> dict:
        if self.hold_wait:
            await self.killed.wait()
        return await self._exit_status(self.terminals[params["terminalId"]])

    async def terminal_output(self, params: dict) -> dict:
        terminal = self.terminals[params["terminalId"]]
        output = (await terminal["output"]).decode()
        return {"output": output, "truncated": False, "exitStatus": await self._exit_status(terminal)}

    async def elicitation_create(self, params: dict) -> dict:
        return self.elicitation

    async def terminal_kill(self, params: dict) -> dict:
        self.killed.set()
        return {}

    async def terminal_release(self, params: dict) -> dict:
        terminal = self.terminals.pop(params["terminalId"])
        await self._exit_status(terminal)
        return {}


async def start_with_client(
    workspace: Path, capabilities: dict | None = None, **kwargs: Any
) -> tuple[Driver, FakeClient, str]:
    client = FakeClient(workspace, **kwargs)
    driver = Driver(on_request=client)
    client.driver = driver
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(workspace), capabilities)
    return driver, client, session_id


def calls_of_kind(driver: Driver, kind: str) -> list[dict]:
    return [c for c in driver.updates("tool_call") if c["kind"] == kind]


def updates_of(driver: Driver, call: dict) -> list[dict]:
    return [u for u in driver.updates("tool_call_update") if u["toolCallId"] == call["toolCallId"]]


def final_status(driver: Driver, call: dict) -> str:
    statuses = [u["status"] for u in updates_of(driver, call) if u.get("status")]
    return statuses[-1] if statuses else call["status"]


def answer_text(driver: Driver) -> str:
    return "".join(c["content"]["text"] for c in driver.updates("agent_message_chunk"))


def texts_in(update: dict) -> list[str]:
    return [c["content"]["text"] for c in update.get("content") or [] if c["type"] == "content"]


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
        "fs/write_text_file",  # the seed
        "session/request_permission",
        "fs/write_text_file",  # the edit
    ]
    permission = client.params_of("session/request_permission")[0]
    assert [(o["optionId"], o["kind"]) for o in permission["options"]] == [
        ("allow_always", "allow_always"),
        ("allow", "allow_once"),
        ("reject", "reject_once"),
    ]
    edit = next(c for c in calls_of_kind(driver, "edit") if c["title"] == "Edit demo-notes.txt")
    assert permission["toolCall"]["toolCallId"] == edit["toolCallId"]
    assert edit["status"] == "pending"
    diff = edit["content"][0]
    assert diff["type"] == "diff" and diff["path"] == str(notes)
    old_lines, new_lines = diff["oldText"].splitlines(), diff["newText"].splitlines()
    assert len(new_lines) == len(old_lines) + 1
    assert sum(a != b for a, b in zip(old_lines, new_lines)) == 1
    assert diff["newText"] == text
    done = updates_of(driver, edit)[-1]
    assert done["status"] == "completed" and done["content"] == [diff]
    assert "**edit**: changed `demo-notes.txt`" in answer_text(driver)

    # a second edit reads the existing file and edits it again, no seed
    client.calls.clear()
    response = await driver.request("session/prompt", prompt_params(session_id, "edit again"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert client.methods() == ["fs/read_text_file", "session/request_permission", "fs/write_text_file"]
    assert "(2 edits)" in notes.read_text() and notes.read_text().endswith("- edit 2 by rat-demo\n")
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
    # edit: read + seed + edit; write; read; run; fail
    assert kinds == ["read", "edit", "edit", "edit", "read", "execute", "fetch"]
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


# --------------------------------------------------------------------------- the rest of ACP v1
BOOLEAN_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True,
                "session": {"configOptions": {"boolean": {}}}}


def options_by_id(options: list[dict]) -> dict[str, dict]:
    return {option["id"]: option for option in options}


async def new_session(driver: Driver, cwd: Path) -> dict:
    response = await driver.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    return response["result"]


async def initialize(driver: Driver, capabilities: dict | None = None) -> dict:
    response = await driver.request("initialize", {
        "protocolVersion": 1, "clientCapabilities": capabilities or {},
        "clientInfo": {"name": "test-driver", "version": "0"},
    })
    return response["result"]


async def test_initialize_offers_auth_load_and_session_capabilities(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    result = await initialize(driver)
    assert result["authMethods"] == [
        {"id": "demo-login", "name": "Demo login", "description": "Pretend to sign in to rat-demo; always succeeds"}
    ]
    capabilities = result["agentCapabilities"]
    assert capabilities["loadSession"] is True
    assert capabilities["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}}
    # auth is not required by default: a session starts at once
    assert "sessionId" in await new_session(driver, workspace)
    wrong = await driver.request("authenticate", {"methodId": "password"})
    assert wrong["error"]["code"] == -32602
    assert (await driver.request("authenticate", {"methodId": "demo-login"}))["result"] == {}
    assert await driver.close() == 0


async def test_auth_required_with_the_env(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV, env={"RAT_DEMO_REQUIRE_AUTH": "1"})
    await initialize(driver)
    for method, params in (("session/new", {"cwd": str(workspace), "mcpServers": []}), ("session/list", {}),
                           ("session/load", {"sessionId": "x", "cwd": str(workspace), "mcpServers": []})):
        refused = await driver.request(method, params)
        assert refused["error"]["code"] == -32000, method
        assert refused["error"]["message"] == "Authentication required"
    assert (await driver.request("authenticate", {"methodId": "demo-login"}))["result"] == {}
    assert "sessionId" in await new_session(driver, workspace)
    assert await driver.close() == 0


async def test_config_options_are_declared_and_honoured(workspace: Path) -> None:
    # without the boolean capability: mode and model only
    driver = Driver()
    await driver.start(DEMO_ARGV)
    await initialize(driver, {"fs": {"readTextFile": True, "writeTextFile": True}})
    options = options_by_id((await new_session(driver, workspace))["configOptions"])
    assert set(options) == {"mode", "model"}
    await driver.close()

    client = FakeClient(workspace)
    driver = Driver(on_request=client)
    client.driver = driver
    await driver.start(DEMO_ARGV)
    await initialize(driver, BOOLEAN_CAPS)
    created = await new_session(driver, workspace)
    session_id = created["sessionId"]
    options = options_by_id(created["configOptions"])
    assert set(options) == {"mode", "model", "thoughts"}
    mode, model, thoughts = options["mode"], options["model"], options["thoughts"]
    assert mode["category"] == "mode" and mode["type"] == "select" and mode["currentValue"] == "ask"
    assert [o["value"] for o in mode["options"]] == ["ask", "accept_edits", "read_only"]
    assert model["category"] == "model" and model["currentValue"] == "demo-flash"
    assert [(g["group"], [o["value"] for o in g["options"]]) for g in model["options"]] == [
        ("fast", ["demo-mini", "demo-flash"]), ("smart", ["demo-pro", "demo-ultra"])]
    assert thoughts["type"] == "boolean" and thoughts["currentValue"] is True

    async def set_option(config_id: str, value: Any, **extra: Any) -> dict:
        return await driver.request("session/set_config_option",
                                    {"sessionId": session_id, "configId": config_id, "value": value, **extra})

    answer = await set_option("model", "demo-ultra")
    assert options_by_id(answer["result"]["configOptions"])["model"]["currentValue"] == "demo-ultra"
    assert (await set_option("model", "gpt-99"))["error"]["code"] == -32602
    assert (await set_option("colour", "red"))["error"]["code"] == -32602
    assert (await set_option("thoughts", "no"))["error"]["code"] == -32602
    answer = await set_option("thoughts", False, type="boolean")
    assert options_by_id(answer["result"]["configOptions"])["thoughts"]["currentValue"] is False
    await set_option("mode", "accept_edits")

    # no thought streamed, the chosen model answers, the edit is made without asking
    response = await driver.request("session/prompt", prompt_params(session_id, "edit please"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert not driver.updates("agent_thought_chunk")
    assert "Answered by Demo Ultra in Accept edits mode" in answer_text(driver)
    assert "session/request_permission" not in client.methods()
    assert "edited by rat-demo" in (workspace / "demo-notes.txt").read_text()

    await set_option("mode", "read_only")
    client.calls.clear()
    await driver.request("session/prompt", prompt_params(session_id, "edit write run"))
    assert client.methods() == []
    assert answer_text(driver).count("Read only mode") >= 3
    assert await driver.close() == 0


async def test_usage_after_every_turn_and_a_title_after_the_first(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(workspace))
    await driver.request("session/prompt", prompt_params(session_id, "please summarise the project layout for me now"))
    [usage] = driver.updates("usage_update")
    assert usage["size"] == 128_000 and 0 < usage["used"] <= usage["size"]
    assert usage["cost"]["currency"] == "USD" and usage["cost"]["amount"] > 0
    [info] = driver.updates("session_info_update")
    assert info["title"] == "Please summarise the project layout for…" and info["updatedAt"].endswith("Z")
    kinds = [u["sessionUpdate"] for u in driver.updates()]
    assert kinds.index("usage_update") > kinds.index("agent_message_chunk")  # at the end of the turn
    await driver.request("session/prompt", prompt_params(session_id, "again"))
    usages = driver.updates("usage_update")
    assert len(usages) == 2 and usages[1]["used"] > usages[0]["used"]
    assert usages[1]["cost"]["amount"] > usages[0]["cost"]["amount"]
    assert len(driver.updates("session_info_update")) == 1, "the title is set once"
    assert await driver.close() == 0


ELICITATION_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True, "elicitation": {"form": {}}}


async def test_form_asks_through_elicitation(workspace: Path) -> None:
    answer = {"action": "accept", "content": {"name": "rat", "language": "python", "size": "small", "files": 4,
                                              "confidence": 0.75, "tests": False}}
    driver, client, session_id = await start_with_client(workspace, ELICITATION_CAPS, elicitation=answer)
    response = await driver.request("session/prompt", prompt_params(session_id, "show me a form"))
    assert response["result"] == {"stopReason": "end_turn"}
    [params] = client.params_of("elicitation/create")  # the Driver validated it against the schema
    assert params["sessionId"] == session_id and params["mode"] == "form" and params["message"]
    schema = params["requestedSchema"]
    types = {name: prop["type"] for name, prop in schema["properties"].items()}
    assert types == {"name": "string", "language": "string", "size": "string", "files": "integer",
                     "confidence": "number", "tests": "boolean"}
    assert schema["required"] == ["name", "language"]
    assert "enum" in schema["properties"]["size"] and "oneOf" in schema["properties"]["language"]
    text = answer_text(driver)
    assert 'name = "rat"' in text and 'language = "python"' in text and "files = 4" in text
    assert "confidence = 0.75" in text and "tests = false" in text

    client.elicitation = {"action": "decline"}
    await driver.request("session/prompt", prompt_params(session_id, "form"))
    assert "you declined the form" in answer_text(driver)
    client.elicitation = {"action": "accept", "content": {"size": "large"}}
    await driver.request("session/prompt", prompt_params(session_id, "form"))
    assert "the required name, language missing" in answer_text(driver)
    assert await driver.close() == 0


async def test_form_without_the_capability_is_skipped(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace)
    response = await driver.request("session/prompt", prompt_params(session_id, "form"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert client.calls == []
    assert "did not advertise `elicitation.form`" in answer_text(driver)
    assert await driver.close() == 0


async def test_notice_matches_the_unstable_schema(workspace: Path) -> None:
    from .helpers.acp_schema import validate_unstable

    driver = Driver(validate=False)  # the stable schema has no `notice` yet
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(workspace))
    response = await driver.request("session/prompt", prompt_params(session_id, "send a notice"))
    assert response["result"] == {"stopReason": "end_turn"}
    [notice] = driver.updates("notice")
    assert notice["severity"] == "warning" and notice["title"]
    for message in driver.received:
        if message.get("method") == "session/update":
            validate_unstable("SessionNotification", message["params"])
    assert "sent a warning notice" in answer_text(driver)
    assert await driver.close() == 0


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
