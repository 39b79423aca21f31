"""The fleet board (F12) over real pipes: background terminals stopped one by one, a subagent stopped, a request
in a background tab answered, all with keys pressed one by one."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.session.fleet import NEEDS_YOU, STOPPED, WORKING_WORD
from rat_tui.ui.screens.board import BoardScreen
from rat_tui.ui.screens.child_session import ChildSessionScreen
from rat_tui.ui.screens.permission import PermissionScreen
from rat_tui.ui.widgets.tool_call import render_tool_call

from .helpers.agents import received
from .helpers.app import scripted_named, send, until, view

pytestmark = pytest.mark.slow

CHILD = "child-1"


@pytest.fixture(autouse=True)
def unstable_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # subagents are in schema.unstable.json


def waits_for(release: Path, word: str) -> str:
    """A shell line that runs until `release` exists, then prints `word`."""
    python = shlex.quote(sys.executable)
    loop = f"import os,time\nwhile not os.path.exists({str(release)!r}): time.sleep(0.05)\nprint({word!r})"
    return f"{python} -c {shlex.quote(loop)}"


def background_tasks(release: Path) -> list[dict]:
    """A turn that starts three commands in client terminals, each shown in its own execute card, then waits
    for each to exit and reports how it ended."""
    steps: list[dict] = []
    for n in (1, 2, 3):
        steps.append({"request": {"method": "terminal/create", "params": {
            "sessionId": "$SESSION", "command": waits_for(release, f"task {n} done")}}, "save": f"t{n}"})
        steps.append({"update": {"sessionUpdate": "tool_call", "toolCallId": f"task-{n}", "title": f"Background task {n}",
                                 "kind": "execute", "status": "in_progress",
                                 "content": [{"type": "terminal", "terminalId": f"${{t{n}.terminalId}}"}]}})
    for n in (1, 2, 3):
        steps.append({"request": {"method": "terminal/wait_for_exit",
                                  "params": {"sessionId": "$SESSION", "terminalId": f"${{t{n}.terminalId}}"}},
                      "save": f"exit{n}"})
        steps.append({"update": {"sessionUpdate": "tool_call_update", "toolCallId": f"task-{n}",
                                 "status": "completed"}})
    steps.append({"chunk": "all three tasks are over"})
    return steps


def board(app: RatApp) -> BoardScreen:
    screen = app.screen
    assert isinstance(screen, BoardScreen), f"the board is not on top: {screen!r}"
    return screen


def row_index(app: RatApp, suffix: str) -> int:
    return next(i for i, row in enumerate(board(app).rows) if row.key.endswith(suffix))


def row_state(app: RatApp, suffix: str) -> str | None:
    screen = app.screen
    if not isinstance(screen, BoardScreen):
        return None
    return next((row.state for row in screen.rows if row.key.endswith(suffix)), None)


async def move_to(pilot, app: RatApp, suffix: str) -> None:
    """Walk the board's cursor to the row, one key at a time."""
    target = row_index(app, suffix)
    table = board(app).table
    while table.cursor_row != target:
        await pilot.press("down" if table.cursor_row < target else "up")
        target = row_index(app, suffix)


async def test_three_background_terminals_one_stopped_while_the_turn_goes_on(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    app = RatApp(scripted_named({"turns": [background_tasks(release)]}, tmp_path, "builder"), tmp_path)
    async with app.run_test(size=(140, 36)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await send(pilot, "run the three tasks")
        await until(pilot, lambda: len(session.terminals.running_ids()) == 3 and len(session.state.tool_calls) == 3,
                    "three terminals running, each in its card")
        await pilot.press("f12")
        await until(pilot, lambda: isinstance(app.screen, BoardScreen)
                    and sum(row.kind == "tool" and row.state == WORKING_WORD for row in app.screen.rows) == 3,
                    "the three tasks on the board")
        assert board(app).rows[0].kind == "session" and board(app).rows[0].state == WORKING_WORD
        await move_to(pilot, app, ":tool:task-2")
        await pilot.press("s")
        # The turn goes on: the agent's wait for that terminal returned, it reported the call, and waits on.
        await until(pilot, lambda: row_state(app, ":tool:task-2") == STOPPED, "task 2 stopped by you")
        assert session.busy and len(session.terminals.running_ids()) == 2
        assert row_state(app, ":tool:task-1") == WORKING_WORD and row_state(app, ":tool:task-3") == WORKING_WORD
        release.touch()
        await until(pilot, lambda: session.state.stop_reason == "end_turn", "the turn to end")
        calls = session.state.tool_calls
        assert [calls[f"task-{n}"].status for n in (1, 2, 3)] == ["completed"] * 3
        assert [calls[f"task-{n}"].stopped_by_user for n in (1, 2, 3)] == [False, True, False]
        outputs = [session.state.terminals[item["terminalId"]] for n in (1, 3) for item in calls[f"task-{n}"].content]
        assert all(terminal.exit_code == 0 and "done" in terminal.output for terminal in outputs)
        card = render_tool_call(calls["task-2"], session.state.terminals)
        from rich.console import Console

        console = Console(width=100, record=True)
        console.print(card)
        text = console.export_text()
        assert "stopped by you" in text and "killed by" not in text and "failed" not in text
        assert session.state.status == "ready"  # the stop was never an error
        # The board drops what ended by itself and keeps what the user stopped, saying so.
        await until(pilot, lambda: row_state(app, ":tool:task-1") is None and row_state(app, ":session") != WORKING_WORD,
                    "the finished tasks gone from the board")
        assert row_state(app, ":tool:task-2") == STOPPED
        await move_to(pilot, app, ":tool:task-2")
        await pilot.press("enter")  # goes there: the card, under the transcript's block cursor
        await until(pilot, lambda: not isinstance(app.screen, BoardScreen), "the board closed")
        assert view(app).transcript.cursor_key == calls["task-2"].key and view(app).transcript.has_focus


async def test_a_subagent_stopped_from_the_board(tmp_path: Path, record_file: Path) -> None:
    announce = {"sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "Test writer",
                "description": "general-purpose", "capabilities": {"cancel": {}}, "state": {"state": "running"}}
    release = tmp_path / "release"
    turn = [
        {"update": announce},
        {"chunk": "the parent works on. "},
        {"wait_child_cancel": CHILD},
        {"update": {"sessionUpdate": "subagent_update", "sessionId": CHILD,
                    "state": {"state": "idle", "stopReason": "cancelled"}}},
        {"chunk": "the subagent was stopped; the parent goes on. "},
        {"wait_file": str(release)},
        {"chunk": "parent done"},
    ]
    app = RatApp(scripted_named({"turns": [turn]}, tmp_path, "parent"), tmp_path)
    async with app.run_test(size=(140, 36)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await send(pilot, "write the tests with a subagent")
        await until(pilot, lambda: CHILD in session.state.children and session.state.children[CHILD].running,
                    "the subagent running")
        await pilot.press("f12")
        await until(pilot, lambda: row_state(app, f":child:{CHILD}") == WORKING_WORD, "the subagent on the board")
        await move_to(pilot, app, f":child:{CHILD}")
        await pilot.press("s")
        await until(pilot, lambda: row_state(app, f":child:{CHILD}") == STOPPED, "the subagent stopped by you")
        cancels = [m for m in received(record_file) if m.get("method") == "session/cancel"]
        assert [m["params"]["sessionId"] for m in cancels] == [CHILD]  # the child's, never the parent's turn
        assert session.busy and row_state(app, ":session") == WORKING_WORD
        await pilot.press("enter")  # goes there: the subagent's own session, full screen
        await until(pilot, lambda: isinstance(app.screen, ChildSessionScreen), "the subagent's session shown")
        assert app.screen.child.child_id == CHILD
        await pilot.press("escape")
        release.touch()
        await until(pilot, lambda: session.state.stop_reason == "end_turn", "the parent's turn to end")
        assert session.state.children[CHILD].stopped_by_user


PERMISSION = {
    "sessionId": "$SESSION",
    "toolCall": {"toolCallId": "edit-1", "title": "Edit notes.txt", "kind": "edit", "status": "pending"},
    "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"}],
}


async def test_a_request_in_a_background_tab_answered_from_the_board(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    asking = [{"wait_file": str(release)}, {"request": {"method": "session/request_permission", "params": PERMISSION}},
              {"chunk": "edited"}]
    app = RatApp(scripted_named({"turns": [asking]}, tmp_path, "asker"), tmp_path)
    async with app.run_test(size=(140, 36)) as pilot:
        first = view(app).session
        await until(pilot, lambda: first.state.status == "ready", "first ready")
        await send(pilot, "edit the notes")
        second = await app.open_session(scripted_named({}, tmp_path, "quiet"), tmp_path)
        await until(pilot, lambda: second.state.status == "ready" and app.tabs.active_view.session is second,
                    "the second tab in front")
        await pilot.press("f12")
        await until(pilot, lambda: isinstance(app.screen, BoardScreen) and len(app.screen.rows) == 2, "two sessions")
        release.touch()  # the request comes while the board is open, from the tab behind
        await until(pilot, lambda: row_state(app, f"{id(first):x}:session") == NEEDS_YOU, "the asker needs you")
        assert board(app).rows[0].key == f"{id(first):x}:session"  # needs you comes first
        await move_to(pilot, app, f"{id(first):x}:session")
        await pilot.press("a")
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen), "the request opened from the board")
        await pilot.pause(0.6)  # (the dialog takes no key in its first half second: GRACE_SECONDS)
        await pilot.press("y")
        await until(pilot, lambda: first.state.stop_reason == "end_turn", "the asker's turn to end")
        answers = [m for m in received(record_file) if "result" in m and isinstance(m["result"], dict)
                   and "outcome" in m["result"]]
        assert answers and answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": "allow"}
        await until(pilot, lambda: isinstance(app.screen, BoardScreen), "back on the board")
        await until(pilot, lambda: row_state(app, f"{id(first):x}:session") not in (NEEDS_YOU, None), "answered")
        assert app.tabs.active_view.session is first  # answering showed the asker's tab beneath the board
        await move_to(pilot, app, f"{id(second):x}:session")
        await pilot.press("enter")  # goes there: the quiet tab, in front
        await until(pilot, lambda: not isinstance(app.screen, BoardScreen), "the board closed")
        assert app.tabs.active_view.session is second


async def test_stop_key_on_a_running_command_card(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    turn = [
        {"request": {"method": "terminal/create", "params": {"sessionId": "$SESSION", "command": waits_for(release, "x")}},
         "save": "t"},
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "build", "title": "make watch", "kind": "execute",
                    "status": "in_progress", "content": [{"type": "terminal", "terminalId": "${t.terminalId}"}]}},
        {"request": {"method": "terminal/wait_for_exit", "params": {"sessionId": "$SESSION", "terminalId": "${t.terminalId}"}}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "build", "status": "failed"}},
        {"chunk": "the watcher ended; "},
        {"wait_file": str(release)},
        {"chunk": "done"},
    ]
    app = RatApp(scripted_named({"turns": [turn]}, tmp_path, "watcher"), tmp_path)
    async with app.run_test(size=(120, 32)) as pilot:
        tab = view(app)
        session = tab.session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await send(pilot, "watch")
        await until(pilot, lambda: len(session.terminals.running_ids()) == 1 and "build" in session.state.tool_calls,
                    "the watcher running")
        await pilot.press("ctrl+t")  # to the transcript, where card keys work
        await pilot.press("S")
        await until(pilot, lambda: session.state.tool_calls["build"].status == "failed", "the agent saw it end")
        call = session.state.tool_calls["build"]
        assert call.stopped_by_user and not session.terminals.running_ids()
        assert session.busy  # the turn goes on
        assert tab.composer.text == ""  # the key went to the card, not into the prompt
        release.touch()
        await until(pilot, lambda: session.state.stop_reason == "end_turn", "the turn to end")
        assert session.state.status == "ready"


V2_SCHEMA = Path(__file__).resolve().parent / "fixtures" / "acp-schema" / "v2-preview"


async def test_v2_tool_call_and_terminal_cancelled_from_the_board(
        tmp_path: Path, record_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rat_tui.agents.spec import AgentSpec

    from .helpers.agents import scripted_argv

    monkeypatch.setenv("RAT_ACP_SCHEMA_DIR", str(V2_SCHEMA))  # what rat sends is checked against v2
    release = tmp_path / "release"
    cancel = {"cancel": {}}
    turn = [
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "watch", "title": "Watch the tests",
                    "kind": "other", "status": "in_progress", "capabilities": cancel}},
        {"update": {"sessionUpdate": "terminal_update", "terminalId": "term-9", "command": "npm run dev",
                    "capabilities": cancel}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "serve", "title": "npm run dev",
                    "kind": "execute", "status": "in_progress", "content": [{"type": "terminal", "terminalId": "term-9"}]}},
        {"state": "running", "background": [{"type": "tool_call", "toolCallId": "watch"},
                                            {"type": "terminal", "terminalId": "term-9"}]},
        {"wait_file": str(release)},
        {"chunk": "done"},
    ]
    script = {
        "protocol": 2, "session_id": "sess-v2", "turns": [turn],
        "on_request": {
            "tool_call/cancel": [[{"update": {"sessionUpdate": "tool_call_update", "toolCallId": "watch",
                                              "status": "cancelled"}}]],
            "terminal/cancel": [[{"update": {"sessionUpdate": "terminal_update", "terminalId": "term-9",
                                             "exitStatus": {"exitCode": None, "signal": "SIGTERM"}}}]],
        },
    }
    folder = tmp_path / "v2"
    folder.mkdir()
    spec = AgentSpec(name="fake-v2", argv=scripted_argv(script, folder), env={}, is_demo=False, protocol=2)
    app = RatApp(spec, tmp_path)
    async with app.run_test(size=(140, 36)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await send(pilot, "start the watchers")
        await until(pilot, lambda: len(session.state.background) == 2, "two pieces of background work")
        await pilot.press("f12")
        await until(pilot, lambda: row_state(app, ":tool:watch") == WORKING_WORD
                    and row_state(app, ":tool:serve") == WORKING_WORD, "both on the board")
        assert "background" in next(r.doing for r in board(app).rows if r.key.endswith(":tool:watch"))
        await move_to(pilot, app, ":tool:watch")
        await pilot.press("s")
        await until(pilot, lambda: row_state(app, ":tool:watch") == STOPPED, "the watcher stopped by you")
        await move_to(pilot, app, ":tool:serve")
        await pilot.press("s")
        await until(pilot, lambda: session.state.terminals["term-9"].exited, "the agent's terminal ended")
        await until(pilot, lambda: row_state(app, ":tool:serve") == STOPPED, "the dev server stopped by you")
        sent = [m for m in received(record_file) if m.get("method") in ("tool_call/cancel", "terminal/cancel")]
        assert [(m["method"], m["params"]) for m in sent] == [
            ("tool_call/cancel", {"sessionId": "sess-v2", "toolCallId": "watch"}),
            ("terminal/cancel", {"sessionId": "sess-v2", "terminalId": "term-9"}),
        ]
        assert session.busy
        release.touch()
        await until(pilot, lambda: session.state.stop_reason == "end_turn", "the turn to end")
        assert session.state.status == "ready"


async def test_board_from_the_palette_and_f12_closes_it(tmp_path: Path, record_file: Path) -> None:
    from .helpers.app import palette_offers

    app = RatApp(scripted_named({}, tmp_path, "solo"), tmp_path)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:  # (toasts shown, as for a user)
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await pilot.press("ctrl+p")
        await pilot.press(*"Fleet board")
        await palette_offers(pilot, app, "Fleet board")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, BoardScreen) and len(app.screen.rows) == 1, "the board")
        assert board(app).rows[0].agent == "Scripted fake agent"

        def toast(words: str) -> bool:
            return any(words in str(t.render()) for t in app.screen.query("Toast"))

        await pilot.press("a")  # nothing waits: said so, the board stays
        await until(pilot, lambda: toast("Nothing there waits for an answer."), "the board to say so")
        assert isinstance(app.screen, BoardScreen)
        await pilot.press("s")  # no turn runs: said so, nothing sent
        await until(pilot, lambda: toast("No turn is running there."), "the board to say so")
        assert not [m for m in received(record_file) if m.get("method") == "session/cancel"]
        await pilot.press("f12")
        await until(pilot, lambda: not isinstance(app.screen, BoardScreen), "F12 to close the board")
        assert view(app).composer.text == ""  # none of the board's keys reached the prompt


async def test_a_turn_stopped_from_the_board_reads_stopped_by_you(tmp_path: Path, record_file: Path) -> None:
    turn = [{"chunk": "working on it… "}, {"wait_cancel": True}]
    app = RatApp(scripted_named({"turns": [turn]}, tmp_path, "long"), tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await send(pilot, "take your time")
        await until(pilot, lambda: session.busy and len(session.state.entries) >= 2, "the turn under way")
        await pilot.press("f12")
        await until(pilot, lambda: row_state(app, ":session") == WORKING_WORD, "the session working on the board")
        await pilot.press("s")
        await until(pilot, lambda: row_state(app, ":session") == STOPPED, "the turn stopped by you")
        assert session.state.status == "cancelled" and session.state.stop_reason == "cancelled"
        cancels = [m for m in received(record_file) if m.get("method") == "session/cancel"]
        assert [m["params"]["sessionId"] for m in cancels] == ["sess-1"]


async def test_a_worktree_session_shows_its_branch_on_the_board(tmp_path: Path, record_file: Path) -> None:
    from rat_tui.config import Config, WorktreesConfig

    from .helpers.git import make_repo, run_git

    repo = make_repo(tmp_path / "project")
    config = Config(worktrees=WorktreesConfig(dir=str(tmp_path / "wts")))
    app = RatApp(scripted_named({}, tmp_path, "main"), repo, config=config)
    async with app.run_test(size=(160, 30)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        session = await app.worktree_tabs.open(scripted_named({}, tmp_path, "side"), repo)
        assert session is not None
        await until(pilot, lambda: session.state.status == "ready", "the worktree session ready")
        await pilot.press("f12")
        await until(pilot, lambda: isinstance(app.screen, BoardScreen) and len(app.screen.rows) == 2, "two sessions")
        [branch] = run_git(repo, "branch", "--list", "--format=%(refname:short)", "rat/*").split()
        rows = {row.key: row for row in board(app).rows}
        assert rows[f"{id(session):x}:session"].where == branch and branch.startswith("rat/side-")
        assert rows[f"{id(view(app).session):x}:session"].where == ""


async def test_hostile_names_reach_the_board_cleaned(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    turn = [{"update": {"sessionUpdate": "session_info_update", "title": "evil\x1b]0;pwned\x07 title\x1b[2J"}},
            {"update": {"sessionUpdate": "tool_call", "toolCallId": "t\x1b[31m1", "title": "run \x1b[2J\x9b31m it",
                        "kind": "execute", "status": "in_progress"}},
            {"wait_file": str(release)}]
    app = RatApp(scripted_named({"turns": [turn]}, tmp_path, "evil"), tmp_path)
    async with app.run_test(size=(140, 30)) as pilot:
        session = view(app).session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await send(pilot, "go")
        await until(pilot, lambda: session.state.tool_calls and session.state.title, "the title and the call")
        await pilot.press("f12")
        await until(pilot, lambda: isinstance(app.screen, BoardScreen) and len(app.screen.rows) == 2, "both rows")
        text = " ".join(f"{r.name} {r.doing} {r.key}" for r in board(app).rows)
        assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
        assert "evil" in text and "run" in text
        release.touch()
