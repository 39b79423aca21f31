"""ACP as of schema 1.34 and v2 Preview: the shapes rat sends and reads, pinned (the schema copies are older)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.agents.spec import AgentSpec
from rat_tui.app import RatApp
from rat_tui.session.fleet import ERROR_WORD, IDLE
from rat_tui.session.session_status import read_status
from rat_tui.ui.screens.board import BoardScreen

from .helpers.agents import received, scripted_argv
from .helpers.app import scripted_named, send, until, view

pytestmark = pytest.mark.slow

V2_SCHEMA = Path(__file__).resolve().parent / "fixtures" / "acp-schema" / "v2-preview"


async def test_v2_prompt_carries_an_idempotency_key(tmp_path: Path, record_file: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_DIR", str(V2_SCHEMA))
    script = {"protocol": 2, "session_id": "sess-v2", "turns": [[{"chunk": "one"}], [{"chunk": "two"}]]}
    folder = tmp_path / "v2"
    folder.mkdir()
    app = RatApp(AgentSpec(name="v2", argv=scripted_argv(script, folder), env={}, is_demo=False, protocol=2), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await send(pilot, "first")
        await until(pilot, lambda: session.state.turns == 1 and session.state.status == "ready", "the first turn")
        await send(pilot, "second")
        await until(pilot, lambda: session.state.turns == 2 and session.state.status == "ready", "the second turn")
    prompts = [m["params"] for m in received(record_file) if m.get("method") == "session/prompt"]
    keys = [p.get("idempotencyKey") for p in prompts]
    assert len(keys) == 2 and all(isinstance(k, str) and k.startswith("rat-") for k in keys)
    assert keys[0] != keys[1]  # one key per submission


def test_session_status_answer_read() -> None:
    assert read_status({"status": "open", "state": {"state": "running", "background": []}}) == ("open", "running")
    assert read_status({"status": "saved"}) == ("saved", None)
    assert read_status({"status": "evicted-later-name"}) == ("saved", None)  # unknown values read as saved
    assert read_status({"status": "open", "state": "garbage"}) == ("open", None)
    assert read_status(None) == ("saved", None)


STATUS_CAPS = {"agentCapabilities": {"loadSession": False, "sessionCapabilities": {"status": {}},
                                     "promptCapabilities": {"embeddedContext": True}}}


@pytest.mark.parametrize(("answer", "state", "doing"), [
    ({"result": {"status": "saved"}}, IDLE, "saved by the agent, not in its memory"),
    ({"error": {"code": -32002, "message": "Resource not found", "data": {"sessionId": "sess-1"}}},
     ERROR_WORD, "the agent no longer knows this session"),
])
async def test_session_status_feeds_the_board(tmp_path: Path, record_file: Path, answer: dict, state: str,
                                              doing: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # session/status is unstable
    script = {"initialize_result": STATUS_CAPS, "responses": {"session/status": answer}}
    app = RatApp(scripted_named(script, tmp_path, "status"), tmp_path)
    async with app.run_test(size=(140, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await pilot.press("f12")
        await until(pilot, lambda: isinstance(app.screen, BoardScreen) and app.screen.rows
                    and app.screen.rows[0].doing == doing, "the board to show what the agent said")
        assert app.screen.rows[0].state == state
    asked = [m for m in received(record_file) if m.get("method") == "session/status"]
    assert asked and asked[0]["params"] == {"sessionId": "sess-1"}


def test_stable_plan_operations_and_subagent_names_pinned() -> None:
    from rat_tui.protocol.client import client_capabilities
    from rat_tui.protocol.updates import parse_plan_removed, parse_plan_update, parse_subagent_update

    caps = client_capabilities()
    assert caps["plan"] == {} and caps["subagents"] == {}  # the opt-ins, as 1.34 names them
    markdown = parse_plan_update({"sessionUpdate": "plan_update", "plan": {
        "planId": "p1", "type": "markdown", "content": "# Plan\n\n1. tests", "path": "/work/shop/PLAN.md"}})
    assert (markdown.kind, markdown.markdown, markdown.uri) == ("markdown", "# Plan\n\n1. tests", "/work/shop/PLAN.md")
    relative = parse_plan_update({"sessionUpdate": "plan_update", "plan": {
        "planId": "p1", "type": "markdown", "content": "x", "path": "PLAN.md"}})
    assert relative.uri is None  # the path must be absolute; the plan still shows
    items = parse_plan_update({"sessionUpdate": "plan_update", "plan": {
        "planId": "p2", "type": "items", "entries": [{"content": "a", "priority": "high", "status": "pending"}]}})
    assert items.kind == "items" and items.entries[0].content == "a"
    assert parse_plan_removed({"sessionUpdate": "plan_removed", "planId": "p2"}).plan_id == "p2"
    child = parse_subagent_update({"sessionUpdate": "subagent_update", "sessionId": "c1", "title": "Tests",
                                   "capabilities": {"cancel": {}}, "state": {"state": "running"}})
    assert child.session_id == "c1" and child.can_cancel and child.state == {"state": "running"}


def test_v2_tool_call_statuses_beyond_v1_kept() -> None:
    from rat_tui.protocol.v2 import UpdateMapper

    for status in ("paused", "cancelled", "_custom_wait"):
        [patch] = UpdateMapper().map({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": status,
                                      "capabilities": {"cancel": {}}})
        assert patch.fields["status"] == status and patch.fields["capabilities"] == {"cancel": {}}
    [terminal] = UpdateMapper().map({"sessionUpdate": "terminal_update", "terminalId": "t1",
                                     "capabilities": {"cancel": {}}})
    assert terminal.cancellable is True


def test_agent_worktree_marks_read_leniently() -> None:
    from rat_tui.session.agent_worktrees import agent_worktree, grouped, worktree_label

    assert agent_worktree({"sessionId": "a", "cwd": "/w/wt-12", "agentWorktree": True}) == "wt-12"
    assert agent_worktree({"sessionId": "a", "agentWorktree": {"branch": "claude/fix-1", "path": "/w/x"}}) == "claude/fix-1"
    assert agent_worktree({"sessionId": "a", "_meta": {"agentWorktree": {"path": "/w/codex-7/"}}}) == "codex-7"
    assert agent_worktree({"sessionId": "a", "agentWorktree": "feature/x\x1b[2J"}) == "feature/x␛[2J"
    for nothing in (False, None, 3, [], "  "):
        assert agent_worktree({"sessionId": "a", "agentWorktree": nothing}) is None
    assert agent_worktree({"sessionId": "a"}) is None
    assert worktree_label({"cwd": "/data/worktrees/shop-rat-demo-1a2b/src"}, "/data/worktrees") == "shop-rat-demo-1a2b"
    rows = [{"sessionId": "1", "agentWorktree": {"branch": "b"}}, {"sessionId": "2"},
            {"sessionId": "3", "cwd": "/data/worktrees/r1"}, {"sessionId": "4", "agentWorktree": {"branch": "b"}}]
    assert [r["sessionId"] for r in grouped(rows, "/data/worktrees")] == ["2", "1", "4", "3"]


async def test_agent_worktree_rows_grouped_in_the_session_list(tmp_path: Path, record_file: Path) -> None:
    from textual.widgets import OptionList

    from rat_tui.ui.screens.session_browser import SessionBrowserScreen

    here = str(tmp_path)
    listing = {"sessions": [
        {"sessionId": "s-wt1", "cwd": here, "title": "Try the refactor", "agentWorktree": {"branch": "claude/refactor"}},
        {"sessionId": "s-a", "cwd": here, "title": "Fix the parser"},
        {"sessionId": "s-wt2", "cwd": here, "title": "Refactor, part 2", "agentWorktree": {"branch": "claude/refactor"}},
        {"sessionId": "s-b", "cwd": here, "title": "Write docs"},
    ]}
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}}},
              "on_request": {"session/list": [[{"respond": listing}]]}}
    app = RatApp(scripted_named(script, tmp_path, "lister"), tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(app.screen, SessionBrowserScreen)
                    and app.screen.query_one(OptionList).option_count == 4, "the list")
        options = app.screen.query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(4)]
        assert [p.split("\n")[0] for p in prompts] == [
            "Fix the parser", "Write docs", "⎇ claude/refactor  Try the refactor", "⎇ claude/refactor  Refactor, part 2"]


def test_auth_status_read() -> None:
    from rat_tui.session.auth_status import badge, read_auth

    answer = {"state": "authenticated", "accounts": [
        {"label": "OpenAI API key", "active": False}, {"label": "Claude Max", "active": True, "email": "me@example.org"}]}
    assert read_auth(answer) == {"state": "authenticated", "account": "Claude Max"}  # never the email
    assert badge(read_auth(answer)) == ("👤 Claude Max", False)
    assert read_auth({"state": "unauthenticated"}) == {"state": "unauthenticated", "account": None}
    assert badge(read_auth({"state": "unauthenticated"})) == ("not logged in · Alt+L", True)
    assert read_auth({"state": "_vendor_state"})["state"] == "unknown"  # unknown values read as unknown
    assert badge(read_auth({"state": "not_required"})) == ("", False)
    assert read_auth({"accounts": []}) is None and read_auth("x") is None


async def test_account_badge_from_auth_status_and_its_update(tmp_path: Path, record_file: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")
    caps = {"agentCapabilities": {"loadSession": False, "auth": {"status": {}},
                                  "promptCapabilities": {"embeddedContext": True}}}
    update = {"send": {"jsonrpc": "2.0", "method": "_auth/status_update", "params": {
        "state": "authenticated", "accounts": [{"label": "Claude Max", "active": True}]}}}
    script = {"initialize_result": caps, "responses": {"auth/status": {"result": {"state": "unauthenticated"}}},
              "turns": [[update, {"chunk": "hello"}]]}
    app = RatApp(scripted_named(script, tmp_path, "claude"), tmp_path)
    async with app.run_test(size=(140, 30)) as pilot:
        tab = view(app)
        await until(pilot, lambda: tab.session.state.status == "ready", "ready")
        await until(pilot, lambda: "not logged in · Alt+L" in str(tab.status_bar.render()), "not logged in, at once")
        await send(pilot, "hi")
        await until(pilot, lambda: "👤 Claude Max" in str(tab.status_bar.render()), "the account after the update")
    asked = [m for m in received(record_file) if m.get("method") == "auth/status"]
    news = [m for m in received(record_file) if m.get("method") == "session/new"]
    assert len(asked) == 1 and asked[0]["params"] == {}
    assert received(record_file).index(asked[0]) < received(record_file).index(news[0])  # before the session


def test_prompt_suggestions_update_read() -> None:
    from rat_tui.protocol.updates import parse_prompt_suggestions_update
    from rat_tui.protocol.wire import parse_update

    update = {"sessionUpdate": "prompt_suggestions_update", "suggestions": [
        {"prompt": [{"type": "text", "text": "Run the test suite\nand fix what breaks"}]},
        {"prompt": [{"type": "text", "text": "Review"}, {"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py"}]},
        {"prompt": [{"type": "text", "text": "   "}]}, "junk"]}
    parsed = parse_update(update)
    assert parsed.suggestions == ("Run the test suite and fix what breaks", "Review @/w/a.py")
    assert parse_prompt_suggestions_update({"suggestions": []}).suggestions == ()  # withdraws
    assert parse_prompt_suggestions_update({"suggestions": None}) is None


def suggest(*texts: str) -> dict:
    return {"update": {"sessionUpdate": "prompt_suggestions_update",
                       "suggestions": [{"prompt": [{"type": "text", "text": text}]} for text in texts]}}


async def test_prompt_suggestion_as_ghost_text_tab_takes_it_typing_dismisses(tmp_path: Path, record_file: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")
    turns = [[{"chunk": "done"}, suggest("Run the tests", "Commit")], [{"chunk": "ok"}, suggest("Push it")]]
    app = RatApp(scripted_named({"turns": turns}, tmp_path, "predictor"), tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        tab = view(app)
        composer = tab.composer
        await until(pilot, lambda: tab.session.state.status == "ready", "ready")
        await send(pilot, "first")
        await until(pilot, lambda: composer.suggestion == "Run the tests", "the ghost text")
        assert composer.text == "" and len(tab.session.state.entries) == 2  # not in the transcript
        await pilot.press("tab")
        assert composer.text == "Run the tests" and composer.suggestion == ""
        await pilot.press("enter")
        await until(pilot, lambda: composer.suggestion == "Push it", "the next ghost text")
        await pilot.press("x")
        assert composer.text == "x" and composer.suggestion == ""  # typing dismissed it
    initialize = next(m for m in received(record_file) if m.get("method") == "initialize")
    assert initialize["params"]["clientCapabilities"]["session"]["promptSuggestions"] == {}
    prompts = [m["params"]["prompt"][0]["text"] for m in received(record_file) if m.get("method") == "session/prompt"]
    assert prompts == ["first", "Run the tests"]


def test_v2_replay_complete_marker_shows_nothing() -> None:
    from rat_tui.protocol.v2 import UpdateMapper

    assert UpdateMapper().map({"sessionUpdate": "replay_complete"}) == []
