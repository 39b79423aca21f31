"""Snapshots of layout at the extremes: a command's card shown from its end, a 250-column terminal with
the readable width, a collapsed plan, the status bar at 80 columns, the footer under a dialog."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp

from .helpers.app import scripted_named as scripted
from .helpers.app import send, steady, until, view

pytestmark = pytest.mark.slow

TEST_LOG = "\n".join(f"tests/test_module_{n}.py ........" for n in range(30)) + (
    "\nFAILED tests/test_module_7.py::test_parse - AssertionError: expected the parser to keep the indent of a"
    " wrapped line, got column 0 instead\n1 failed, 239 passed in 4.20s\n")
EXECUTE_TURN = [
    {"update": {"sessionUpdate": "tool_call", "toolCallId": "run-1", "title": "pytest -q", "kind": "execute",
                "status": "failed", "content": [{"type": "content", "content": {"type": "text", "text": TEST_LOG}}]}},
    {"chunk": "One test fails: the parser drops the indent of wrapped lines."},
]


def test_snapshot_tail_first_execute_card(snap_compare, tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": [EXECUTE_TURN]}, tmp_path), Path("/"))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "run the tests")
        await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn")
        await until(pilot, lambda: "One test fails" in view(app).transcript.visible_text(), "the answer drawn")
        steady(app)

    assert snap_compare(app, terminal_size=(80, 30), run_before=run_before)


WIDE_ANSWER = (
    "## What I changed\n\n"
    "The parser kept the indent of the first line only; a wrapped line started again at column 0, so "
    "long lines in tool cards and quotes looked like new paragraphs. It now carries the indent over "
    "to every wrapped line, and the tests cover lines of every length up to twice the width.\n\n"
    "| file | lines |\n| --- | --- |\n| parser.py | +12 −4 |\n| test_parser.py | +30 |\n\n"
    "```python\ndef wrap(line: str, width: int, indent: int) -> list[str]:\n    return textwrap.wrap(line, width,"
    " subsequent_indent=' ' * indent)\n```\n"
)
WIDE_TURN = [
    {"update": {"sessionUpdate": "tool_call", "toolCallId": "edit-1", "title": "Edit parser.py", "kind": "edit",
                "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text":
                    "Replaced the wrapping loop: " + " ".join(f"token{n}" for n in range(40))}}]}},
    {"chunk": WIDE_ANSWER},
]


def test_snapshot_readable_width_on_a_250_column_terminal(snap_compare, tmp_path: Path) -> None:
    from rat_tui.config import Config, UiConfig

    app = RatApp(scripted({"turns": [WIDE_TURN]}, tmp_path), Path("/"), Config(ui=UiConfig(max_width=120)))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "fix the wrapping")
        await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn")
        await until(pilot, lambda: "subsequent_indent" in view(app).transcript.visible_text(), "the answer drawn")
        steady(app)

    assert snap_compare(app, terminal_size=(250, 40), run_before=run_before)


def test_snapshot_status_bar_at_80_columns(snap_compare, tmp_path: Path) -> None:
    from .helpers.config_options import LEGACY_MODELS, LEGACY_MODES

    release = tmp_path / "release"
    script = {"new_session_result": {"modes": LEGACY_MODES, "models": LEGACY_MODELS}, "turns": [[
        {"update": {"sessionUpdate": "session_info_update", "title": "Fix the flaky login test on CI"}},
        {"update": {"sessionUpdate": "usage_update", "used": 124_000, "size": 200_000,
                    "cost": {"amount": 0.42, "currency": "USD"}}},
        {"chunk": "Looking at the login test."},
        {"wait_file": str(release)},
        {"request": {"id": "perm-1", "method": "session/request_permission", "params": {
            "sessionId": "$SESSION", "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
            "toolCall": {"toolCallId": "rm-1", "title": "rm -rf build", "kind": "execute"}}}},
    ]]}
    app = RatApp(scripted(script, tmp_path), Path("/"))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "fix it")
        await until(pilot, lambda: "Looking at" in view(app).transcript.visible_text(), "the answer")
        await pilot.press(*"and the")  # a draft: the request waits, announced
        release.touch()
        await until(pilot, lambda: view(app).status_bar.waiting == 1, "the request announced")
        app.clear_notifications()  # the toast saying the same would cover the status bar
        steady(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 20), run_before=run_before)


DONE_PLAN = [{"content": f"Step {n}", "priority": "medium", "status": "completed"} for n in range(7)]


def test_snapshot_folded_plan(snap_compare, tmp_path: Path) -> None:
    turn = [{"update": {"sessionUpdate": "plan", "entries": DONE_PLAN}}, {"chunk": "Every step is done."}]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), Path("/"))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "finish the plan")
        await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn")
        await until(pilot, lambda: view(app).plan_panel.folded, "the plan folded")
        await until(pilot, lambda: "Every step" in view(app).transcript.visible_text(), "the answer drawn")
        steady(app)

    assert snap_compare(app, terminal_size=(80, 20), run_before=run_before)


def test_snapshot_footer_under_a_dialog(snap_compare, tmp_path: Path) -> None:
    from rat_tui.ui.screens.permission import PermissionScreen

    turn = [{"request": {"id": "perm-1", "method": "session/request_permission", "params": {
        "sessionId": "$SESSION",
        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "reject", "name": "Reject", "kind": "reject_once"}],
        "toolCall": {"toolCallId": "rm-1", "title": "rm -rf build", "kind": "execute"}}}}]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), Path("/"))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "clean up")
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen), "the dialog")
        await until(pilot, lambda: "Pick" in app.screen.query_one("Footer").query("FooterKey").last().description,
                    "the dialog's footer")
        steady(app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_the_text_is_a_centred_column_on_a_wide_terminal_and_fills_a_narrow_one(tmp_path: Path) -> None:
    from rat_tui.config import Config, UiConfig

    app = RatApp(scripted({"turns": [WIDE_TURN]}, tmp_path), tmp_path, Config(ui=UiConfig(max_width=120)))
    async with app.run_test(size=(250, 40)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        transcript = view(app).transcript
        await until(pilot, lambda: transcript.styles.padding.left > 0, "the column centred")
        left = transcript.styles.padding.left  # blank columns left of the text, and right of it (a 120 column)
        right = transcript.scrollable_content_region.width - 120 + transcript.styles.scrollbar_size_vertical
        assert abs(left - right) <= 2, (left, right)
        await pilot.resize_terminal(100, 40)
        await until(pilot, lambda: transcript.styles.padding.left == 0, "the whole width again")
