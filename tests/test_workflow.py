"""The coding-agent workflow in the real app: permissions, rules, files and terminals over real pipes."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.agents.spec import AgentSpec
from rat_tui.ui.screens.permission import DiffPreview, PermissionScreen

from .helpers.acp_schema import validate
from .helpers.agents import received, scripted_argv
from .helpers.app import delivered, send, state_word, until, view

pytestmark = pytest.mark.slow

CLAUDE_OPTIONS = [
    {"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]
GEMINI_OPTIONS = [
    {"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
    {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "cancel", "name": "Reject", "kind": "reject_once"},
]


def permission_step(call_id: str = "call-1", command: str = "git status", options=CLAUDE_OPTIONS, request_id=None) -> dict:
    request = {
        "method": "session/request_permission",
        "params": {
            "sessionId": "$SESSION",
            "toolCall": {"toolCallId": call_id, "title": f"`{command}`", "kind": "execute",
                         "rawInput": {"command": command}},
            "options": options,
        },
    }
    if request_id is not None:
        request["id"] = request_id
    return {"request": request}


def answers(record: Path, method_ids: set) -> list[dict]:
    return [m for m in received(record) if m.get("id") in method_ids and ("result" in m or "error" in m)]


def spec(script: dict, tmp_path: Path) -> AgentSpec:
    return AgentSpec(name="scripted", argv=scripted_argv(script, tmp_path), env={}, is_demo=False)


async def start(app: RatApp, pilot) -> None:
    await until(pilot, lambda: state_word(app) == "ready", "ready")


def dialog(app: RatApp) -> bool:
    return isinstance(app.screen, PermissionScreen)


@pytest.mark.parametrize(
    ("keys", "options", "expected"),
    [
        (["y"], CLAUDE_OPTIONS, "allow"),
        (["a", "enter"], CLAUDE_OPTIONS, "allow_always"),  # "always" is confirmed with Enter
        (["n"], CLAUDE_OPTIONS, "reject"),
        (["1", "enter"], GEMINI_OPTIONS, "proceed_always"),
        (["2"], GEMINI_OPTIONS, "proceed_once"),
        (["3"], GEMINI_OPTIONS, "cancel"),
        (["enter"], GEMINI_OPTIONS, "proceed_once"),
        (["down", "enter"], CLAUDE_OPTIONS, "reject"),
    ],
)
async def test_permission_answered_by_key(tmp_path: Path, record_file: Path, keys, options, expected) -> None:
    script = {"turns": [[permission_step(options=options, request_id=0), {"chunk": "after permission"}]]}
    app = RatApp(spec(script, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await start(app, pilot)
        await send(pilot, "go")
        await until(pilot, lambda: dialog(app), "the permission dialog")
        assert view(app).session.state.pending_permissions == 1
        await pilot.press(*keys)
        await until(pilot, lambda: "after permission" in view(app).transcript.plain_text, "the turn to go on")
    [answer] = answers(record_file, {0})
    assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": expected}}
    validate("session/request_permission", "response", answer["result"])


async def test_a_call_the_user_rejected_reads_rejected_not_failed(tmp_path: Path) -> None:
    """Claude ends a rejected call `failed`; its card says what happened instead."""
    failed = {"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "status": "failed"}
    other = {"sessionUpdate": "tool_call", "toolCallId": "call-2", "title": "broken", "kind": "execute",
             "status": "failed"}
    script = {"turns": [[permission_step(request_id=0), {"update": failed}, {"update": other}, {"chunk": "after"}]]}
    app = RatApp(spec(script, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await start(app, pilot)
        await send(pilot, "go")
        await until(pilot, lambda: dialog(app), "the permission dialog")
        await pilot.press("n")
        await until(pilot, lambda: "after" in view(app).transcript.plain_text, "the turn to go on")
        text = view(app).transcript.plain_text
        assert "`git status`  rejected" in text and "`git status`  failed" not in text
        assert "broken  failed" in text  # a call that failed by itself still says so


async def test_cancel_with_pending_permission_answers_cancelled(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [[permission_step(request_id=5), {"wait_cancel": True}]]}
    app = RatApp(spec(script, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await start(app, pilot)
        await send(pilot, "go")
        await until(pilot, lambda: dialog(app), "the permission dialog")
        await view(app).action_cancel_turn()  # what Esc does in the session
        await until(pilot, lambda: state_word(app) == "cancelled", "cancelled")
        await until(pilot, lambda: not dialog(app), "the dialog to close")
        [call] = view(app).session.state.tool_calls.values()
        assert call.status == "cancelled"
    [answer] = answers(record_file, {5})
    assert answer["result"] == {"outcome": {"outcome": "cancelled"}}


async def test_always_rule_answers_the_next_request_without_a_dialog(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [
        [permission_step("c1", "npm test -- --watch=false", request_id=1)],
        [permission_step("c2", "npm test -- --watch=false", request_id=2), {"chunk": "second done"}],
    ]}
    app = RatApp(spec(script, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await start(app, pilot)
        await send(pilot, "first")
        await until(pilot, lambda: dialog(app), "the first dialog")
        await pilot.press("a", "enter")
        await until(pilot, lambda: state_word(app) == "ready" and view(app).session.state.turns == 1, "first turn")
        assert [r.pattern for r in app.policy.rules] == ["npm test -- --watch=false"]
        await send(pilot, "second")
        await until(pilot, lambda: "second done" in view(app).transcript.plain_text, "the second turn")
        assert not dialog(app)
        call = view(app).session.state.tool_calls["c2"]
        assert call.auto_decision and "auto-allowed" in call.auto_decision
        assert "auto-allowed" in view(app).transcript.plain_text
    [first, second] = answers(record_file, {1, 2})
    assert first["result"]["outcome"]["optionId"] == "allow_always"
    assert second["result"]["outcome"]["optionId"] == "allow"  # by kind: the rule allows once each time
    assert "npm test" in app.policy.path.read_text()  # persisted in the data dir


async def test_permission_is_the_first_sight_of_a_tool_call(tmp_path: Path) -> None:
    """Gemini never sends tool_call for edits: the request itself must create the card."""
    step = permission_step("gem-1", "rm -rf build", options=GEMINI_OPTIONS)
    step["request"]["params"]["toolCall"] = {
        "toolCallId": "gem-1", "title": "Edit notes.txt", "kind": "edit", "status": "pending",
        "content": [{"type": "diff", "path": str(tmp_path / "notes.txt"), "oldText": "beta\n", "newText": "BETA\n"}],
    }
    app = RatApp(spec({"turns": [[step]]}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await start(app, pilot)
        await send(pilot, "go")
        await until(pilot, lambda: dialog(app), "the dialog")
        assert "gem-1" in view(app).session.state.tool_calls
        assert any("notes.txt" in preview.plain_text for preview in app.screen.query(DiffPreview))
        await pilot.press("2")
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        assert "Edit notes.txt" in view(app).transcript.plain_text


async def test_withdrawn_request_closes_the_dialog(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [[
        {"send": {"jsonrpc": "2.0", "id": "perm-9", "method": "session/request_permission", "params": {
            "sessionId": "$SESSION", "toolCall": {"toolCallId": "w1", "title": "ls"}, "options": CLAUDE_OPTIONS}}},
        {"sleep": 3.0},
        {"send": {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "perm-9"}}},
        {"sleep": 0.5},
    ]]}
    app = RatApp(spec(script, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await start(app, pilot)
        view(app).session.start_prompt("go")  # not pilot.press: it may wait out the whole dialog
        await until(pilot, lambda: dialog(app), "the dialog")
        await until(pilot, lambda: not dialog(app), "the dialog to close")
        await until(pilot, lambda: state_word(app) == "ready", "ready")
    [answer] = [m for m in received(record_file) if m.get("id") == "perm-9"]
    assert answer["error"]["code"] == -32800


async def test_files_and_terminals_through_the_app(tmp_path: Path, record_file: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\r\nbeta\r\ngamma\r\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    script = {"turns": [[
        {"request": {"id": 10, "method": "fs/read_text_file",
                     "params": {"sessionId": "$SESSION", "path": str(tmp_path / "notes.txt"), "line": 2, "limit": 1}}},
        {"request": {"id": 11, "method": "fs/write_text_file",
                     "params": {"sessionId": "$SESSION", "path": str(tmp_path / "new" / "dir" / "file.txt"), "content": "hi\n"}}},
        {"request": {"id": 12, "method": "fs/write_text_file",
                     "params": {"sessionId": "$SESSION", "path": str(outside), "content": "nope"}}},
        {"request": {"id": 13, "method": "fs/read_text_file",
                     "params": {"sessionId": "$SESSION", "path": "relative/path.txt"}}},
        {"request": {"id": 14, "method": "terminal/create", "params": {
            "sessionId": "$SESSION", "command": "printf 'x%.0s' $(seq 1 500) && echo && echo done-marker",
            "outputByteLimit": 100}}},
    ]]}
    app = RatApp(spec(script, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await start(app, pilot)
        await send(pilot, "go")
        await until(pilot, lambda: state_word(app) == "ready" and view(app).session.state.turns == 1, "turn end")
    by_id = {m["id"]: m for m in received(record_file) if "id" in m and ("result" in m or "error" in m)}
    assert by_id[10]["result"] == {"content": "beta\r\n"}
    assert (tmp_path / "new" / "dir" / "file.txt").read_text() == "hi\n"
    assert by_id[12]["error"]["code"] == -32001 and not outside.exists()
    assert by_id[13]["error"]["code"] == -32602
    terminal_id = by_id[14]["result"]["terminalId"]
    validate("terminal/create", "response", by_id[14]["result"])
    assert isinstance(terminal_id, str)


async def test_follow_along_previews_the_files_the_agent_touches(tmp_path: Path) -> None:
    source = tmp_path / "module.py"
    source.write_text("".join(f"line_{n} = {n}\n" for n in range(1, 400)))
    other = tmp_path / "other.py"
    other.write_text("print('other')\n")
    read = {"sessionUpdate": "tool_call", "toolCallId": "r1", "title": "Read module.py", "kind": "read",
            "status": "completed", "locations": [{"path": str(source), "line": 250}]}
    read2 = {"sessionUpdate": "tool_call", "toolCallId": "r2", "title": "Read other.py", "kind": "read",
             "status": "completed", "locations": [{"path": str(other)}]}
    script = {"turns": [[{"update": read}], [{"update": read2}]]}
    app = RatApp(spec(script, tmp_path), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot)
        preview = view(app).preview
        await send(pilot, "read it")
        session = view(app).session
        await until(pilot, lambda: "r1" in session.state.tool_calls and delivered(session), "the tool call shown")
        assert not preview.is_open
        view(app).transcript.focus()
        await pilot.press("o")  # open the nearest location by hand
        await until(pilot, lambda: "line_250 = 250" in preview.shown_text, "the preview")
        assert preview.is_open and preview.line == 250
        await pilot.press("f5")  # now follow automatically
        view(app).composer.focus()
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "again")
        await until(pilot, lambda: "print('other')" in preview.shown_text, "the followed file")


async def test_diff_of_a_tool_call_opens_full_screen(tmp_path: Path) -> None:
    from rat_tui.ui.screens.diff_screen import DiffScreen
    from rat_tui.ui.widgets.diff_view import DiffView

    old = "".join(f"row {n}\n" for n in range(1, 2001))
    new = old.replace("row 1000\n", "row one thousand\n")
    edit = {"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit rows.txt", "kind": "edit",
            "status": "completed", "content": [{"type": "diff", "path": str(tmp_path / "rows.txt"),
                                                "oldText": old, "newText": new}]}
    app = RatApp(spec({"turns": [[{"update": edit}]]}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await start(app, pilot)
        await send(pilot, "edit")
        session = view(app).session
        await until(pilot, lambda: "e1" in session.state.tool_calls and delivered(session), "the edit shown")
        assert "d opens the diff" in view(app).transcript.plain_text
        view(app).transcript.focus()
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen), "the diff screen")
        diff = app.screen.query_one(DiffView)
        await pilot.press("n")
        await pilot.pause()
        assert "row one thousand" in diff.visible_text()
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DiffScreen), "back to the session")
