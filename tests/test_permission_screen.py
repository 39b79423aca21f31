"""Tests PermissionScreen (keys, outside dismissal, what it shows) and PermissionRulesScreen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from rat_tui.session.permission_rules_file import load_policy
from rat_tui.state.permission_policy import PermissionPolicy
from rat_tui.ui.screens.permission import PermissionScreen, compact_diff
from rat_tui.ui.screens.permission_rules import PermissionRulesScreen
from .helpers.app import screen_text
from .helpers.harness import RatThemedApp

CLAUDE_OPTIONS = [
    {"kind": "allow_always", "name": "Always Allow", "optionId": "allow_always"},
    {"kind": "allow_once", "name": "Allow", "optionId": "allow"},
    {"kind": "reject_once", "name": "Reject", "optionId": "reject"},
]
GEMINI_OPTIONS = [
    {"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
    {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
    {"optionId": "cancel", "name": "Reject", "kind": "reject_once"},
]
CODEX_EDIT_OPTIONS = [
    {"optionId": "approved", "name": "Yes", "kind": "allow_once"},
    {"optionId": "abort", "name": "No, provide feedback", "kind": "reject_once"},
]
SHELL = "echo harness-shell-ok | tee shell-out.txt && ls"

# From claude-agent-acp.jsonl: an execute request with a command.
CLAUDE_EXECUTE = {
    "sessionId": "s1",
    "options": CLAUDE_OPTIONS,
    "toolCall": {
        "toolCallId": "toolu_2",
        "rawInput": {"command": SHELL, "timeout": 60000, "description": "Run harness command"},
        "title": SHELL,
        "kind": "execute",
        "content": [{"type": "content", "content": {"type": "text", "text": "Run harness command"}}],
    },
}
# From gemini.jsonl: an edit request with a diff, the first sight of the call.
OLD = "".join(f"line {i}\n" for i in range(1, 13))
GEMINI_EDIT = {
    "sessionId": "s2",
    "options": GEMINI_OPTIONS,
    "toolCall": {
        "toolCallId": "replace_1",
        "status": "pending",
        "title": "notes.txt: line 5 => LINE FIVE",
        "content": [
            {
                "type": "diff",
                "path": "/home/user/project/notes.txt",
                "oldText": OLD,
                "newText": OLD.replace("line 5\n", "LINE FIVE\n").replace("line 11\n", ""),
            }
        ],
        "locations": [{"path": "/home/user/project/notes.txt"}],
        "kind": "edit",
    },
}
NEW_FILE = {
    "sessionId": "s3",
    "options": CODEX_EDIT_OPTIONS,
    "toolCall": {
        "toolCallId": "call_21",
        "kind": "edit",
        "status": "pending",
        "title": "Edit /home/user/project/created.txt",
        "content": [{"type": "diff", "path": "/home/user/project/created.txt", "newText": "created by the fake model\nline two\n"}],
        "locations": [{"path": "/home/user/project/created.txt"}],
    },
}
UNKNOWN_KINDS = {
    "sessionId": "s4",
    "options": [
        {"optionId": "go", "name": "Go ahead", "kind": "yolo"},
        {"optionId": "stop", "name": "Stop right there"},
    ],
    "toolCall": {"toolCallId": "t9", "title": "Do [bold]something[/] odd", "kind": "[x]"},
}


class PermissionApp(RatThemedApp):
    """Pushes one PermissionScreen and records what it dismissed with."""

    def __init__(self, request: dict, **kwargs: Any) -> None:
        super().__init__()
        self.request = request
        self.kwargs = {"agent_name": "claude", **kwargs}
        self.results: list[dict | None] = []
        self.permission: PermissionScreen | None = None

    def compose(self) -> ComposeResult:
        yield Static("The session would be here.")

    def on_mount(self) -> None:
        self.use_rat_theme()
        self.permission = PermissionScreen(self.request, **self.kwargs)
        self.push_screen(self.permission, self.results.append)


async def answer(request: dict, *keys: str, **kwargs: Any) -> list[dict | None]:
    app = PermissionApp(request, **kwargs)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause()
        assert isinstance(app.screen, PermissionScreen) != bool(app.results)
    return app.results


def ids(results: list[dict | None]) -> list[str | None]:
    return [r["optionId"] if r else None for r in results]


@pytest.mark.parametrize(
    ("keys", "claude", "gemini"),
    [
        (("1", "enter"), "allow_always", "proceed_always"),  # "always" takes Enter to confirm
        (("2",), "allow", "proceed_once"),
        (("3",), "reject", "cancel"),
        (("y",), "allow", "proceed_once"),
        (("a", "enter"), "allow_always", "proceed_always"),
        (("n",), "reject", "cancel"),
        (("enter",), "allow", "proceed_once"),  # initially the first allow_once
        (("down", "enter"), "reject", "cancel"),
        (("up", "enter", "enter"), "allow_always", "proceed_always"),
        (("down", "down", "down", "enter"), "reject", "cancel"),  # stops at the last
        (("escape",), "reject", "cancel"),
    ],
)
async def test_keys_pick_by_position_and_kind(keys: tuple[str, ...], claude: str, gemini: str) -> None:
    assert ids(await answer(CLAUDE_EXECUTE, *keys)) == [claude]
    assert ids(await answer(GEMINI_EDIT, *keys, agent_name="gemini")) == [gemini]


async def test_missing_kind_key_rings_and_keeps_the_dialog() -> None:
    app = PermissionApp(NEW_FILE, agent_name="codex")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("a", "4")  # Codex offers no "always" for edits; there is no option 4
        await pilot.pause()
        assert app.results == [] and isinstance(app.screen, PermissionScreen)
        assert any("no “allow · always” option" in str(n.message) for n in app._notifications)
        shown = screen_text(app)
        assert "a always" not in shown and "a Always" not in shown  # neither the hint nor the footer offers it
        await pilot.press("2")
        await pilot.pause()
    assert ids(app.results) == ["abort"]


async def test_unknown_kinds_are_shown_and_picked_by_number() -> None:
    app = PermissionApp(UNKNOWN_KINDS, agent_name="odd-agent")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "Go ahead" in seen and "Stop right there" in seen and "unknown kind" in seen
        assert "Do [bold]something[/] odd" in seen and "[x] · pending" in seen  # agent text is not markup
        await pilot.press("y", "n")  # no such kinds: nothing happens
        await pilot.pause()
        assert app.results == []
        await pilot.press("2")
        await pilot.pause()
    assert ids(app.results) == ["stop"]
    assert ids(await answer(UNKNOWN_KINDS, "enter")) == ["go"]  # the first option is highlighted
    assert ids(await answer(UNKNOWN_KINDS, "escape")) == [None]  # no reject_once: closes with None


async def test_dismiss_from_outside_returns_none_once() -> None:
    app = PermissionApp(CLAUDE_EXECUTE)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.permission.dismiss(None)
        await pilot.pause()
        assert app.results == [None] and not isinstance(app.screen, PermissionScreen)
        app.permission.dismiss(None)  # a late second cancel must not pop the main screen
        await pilot.press("y")
        await pilot.pause()
        assert app.results == [None] and len(app.screen_stack) == 1


async def test_dismiss_from_outside_while_another_screen_is_on_top() -> None:
    app = PermissionApp(GEMINI_EDIT)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        top = Screen()
        await app.push_screen(top)
        await app.permission.dismiss(None)
        await pilot.pause()
        assert app.results == [None]
        assert app.screen is top and all(not isinstance(s, PermissionScreen) for s in app.screen_stack)
        app.pop_screen()
        await pilot.pause()
        assert len(app.screen_stack) == 1


async def test_user_answer_then_outside_cancel_gives_one_result() -> None:
    app = PermissionApp(CLAUDE_EXECUTE)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("y")
        app.permission.dismiss(None)
        await pilot.pause()
        assert ids(app.results) == ["allow"] and len(app.screen_stack) == 1


async def test_command_diff_and_context_are_visible() -> None:
    app = PermissionApp(CLAUDE_EXECUTE, queue_position=(2, 3))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "claude asks for permission" in seen and "request 2 of 3" in seen
        assert f"$ {SHELL}" in seen and "execute · pending" in seen and "Run harness command" in seen
        assert "1  ✓✓ Always Allow  [allow · always]" in seen and "3  ✗  Reject  [reject · once]" in seen

    app = PermissionApp(GEMINI_EDIT, agent_name="gemini", tool_call={"toolCallId": "replace_1", "status": "in_progress"})
    async with app.run_test(size=(100, 31)) as pilot:  # the diff whole above the dialog's footer
        await pilot.pause()
        seen = screen_text(app)
        assert "/home/user/project/notes.txt" in seen and "@@ -2," in seen  # three lines of context, as the diff viewer
        assert "−line 5" in seen and "+LINE FIVE" in seen and "−line 11" in seen
        assert "edit · pending" in seen  # the request's status wins over what was known
        assert "↳ /home/user/project/notes.txt" in seen

    app = PermissionApp(NEW_FILE, agent_name="codex", tool_call={"toolCallId": "call_21", "rawInput": {"cwd": "/p"}})
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        seen = screen_text(app)
        assert "created.txt  (new file)" in seen and "+created by the fake model" in seen


def test_compact_diff_cuts_long_diffs() -> None:
    lines, cut = compact_diff(None, "".join(f"{i}\n" for i in range(100)))
    assert len(lines) == 40 and lines[0] == "@@ -0,0 +1,100 @@" and cut == 61


# -- the rules screen ----------------------------------------------------------------------------


class RulesApp(RatThemedApp):
    def __init__(self, policy: PermissionPolicy) -> None:
        super().__init__()
        self.policy = policy
        self.closed = False

    def on_mount(self) -> None:
        self.push_screen(PermissionRulesScreen(self.policy), lambda _: setattr(self, "closed", True))


def make_policy(tmp_path: Path) -> PermissionPolicy:
    policy = load_policy(tmp_path / "rules.json")
    policy.remember("claude", CLAUDE_EXECUTE["toolCall"], "allow")
    policy.remember("gemini", GEMINI_EDIT["toolCall"], "reject")
    return policy


async def test_rules_screen_lists_edits_and_revokes(tmp_path: Path) -> None:
    policy = make_policy(tmp_path)
    app = RulesApp(policy)
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert table.row_count == 2
        assert table.get_row_at(0)[:4] == ["claude", "execute", SHELL, "allow"]
        await pilot.press("e")
        editor = app.screen.query_one(Input)
        assert editor.has_focus and editor.value == SHELL
        editor.value = ""
        await pilot.press("d", "e")  # typed into the editor, not revoke/edit again
        await pilot.pause()
        assert editor.value == "de" and len(policy.rules) == 2
        editor.value = "  "
        await pilot.press("enter")  # an empty pattern is refused, the editor stays
        await pilot.pause()
        assert editor.has_focus and policy.rules[0].pattern == SHELL
        editor.value = "echo *"
        await pilot.press("enter")
        await pilot.pause()
        assert policy.rules[0].pattern == "echo *" and table.get_row_at(0)[2] == "echo *"
        assert load_policy(policy.path).rules[0].pattern == "echo *"
        await pilot.press("down", "d")
        await pilot.pause()
        assert [r.agent for r in policy.rules] == ["claude"] and table.row_count == 1
        await pilot.press("delete")
        await pilot.pause()
        assert policy.rules == [] and table.row_count == 0
        await pilot.press("d")  # nothing left: a bell, no error
        await pilot.press("escape")
        await pilot.pause()
        assert app.closed


async def test_rules_screen_escape_cancels_an_edit_first(tmp_path: Path) -> None:
    policy = make_policy(tmp_path)
    app = RulesApp(policy)
    async with app.run_test(size=(100, 20)) as pilot:
        await pilot.press("e")
        await pilot.press("x", "escape")
        await pilot.pause()
        assert not app.closed and policy.rules[0].pattern == SHELL
        assert app.screen.query_one(DataTable).has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert app.closed


# -- snapshots -----------------------------------------------------------------------------------


def test_snapshot_execute_request(snap_compare) -> None:
    assert snap_compare(PermissionApp(CLAUDE_EXECUTE, queue_position=(1, 2)), terminal_size=(100, 30))


def test_snapshot_edit_request_with_diff(snap_compare) -> None:
    assert snap_compare(PermissionApp(GEMINI_EDIT, agent_name="gemini"), terminal_size=(100, 30))


async def test_long_diff_and_many_options_stay_reachable() -> None:
    request = {
        "sessionId": "s",
        "options": [{"optionId": f"o{i}", "name": f"Choice {i}", "kind": "allow_once"} for i in range(11)],
        "toolCall": {"toolCallId": "t", "kind": "edit", "title": "Write big",
                     "content": [{"type": "diff", "path": "/x", "oldText": None, "newText": "".join(f"l{i}\n" for i in range(100))}]},
    }
    app = PermissionApp(request)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert "… 61 more lines" not in screen_text(app) and "Choice 0" in screen_text(app)
        await pilot.press(*["pagedown"] * 6)
        await pilot.pause()
        assert "… 61 more lines" in screen_text(app) and "1–11 pick · y allow ·" in screen_text(app)
        await pilot.press(*["down"] * 10)
        await pilot.pause()
        assert "Choice 10" in screen_text(app)
        await pilot.press("enter")
        await pilot.pause()
    assert ids(app.results) == ["o10"]
