"""Snapshots of layout at the extremes: a command's card shown from its end, a 250-column terminal with
the readable width, a collapsed plan, the status bar at 80 columns, the footer under a dialog."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp

from .helpers.app import scripted_named as scripted
from .helpers.app import send, steady_cursors, until, view

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
    app = RatApp(scripted({"turns": [EXECUTE_TURN]}, tmp_path), tmp_path)

    async def run_before(pilot) -> None:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "run the tests")
        await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn")
        await until(pilot, lambda: "One test fails" in view(app).transcript.visible_text(), "the answer drawn")
        steady_cursors(app)

    assert snap_compare(app, terminal_size=(80, 30), run_before=run_before)
