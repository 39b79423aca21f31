"""After an agent fails to start, a prompt typed says what failed and what to do next, and keeps the prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.agents.spec import AgentSpec
from rat_tui.app import RatApp

from .helpers.app import until

pytestmark = pytest.mark.slow


async def test_a_prompt_after_a_failed_start_says_what_to_do_next(tmp_path: Path) -> None:
    missing = AgentSpec(name="claude-agent-acpx", argv=["claude-agent-acpx"], env={}, is_demo=False)
    app = RatApp(missing, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "error", "the failed start")
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: any("did not start" in n.message for n in app._notifications), "the notice")
        [notice] = [n.message for n in app._notifications if "did not start" in n.message]
        assert "not found on PATH: claude-agent-acpx" in notice
        assert "Alt+R" in notice and "Ctrl+N" in notice
        assert app.tabs.active_view.composer.text == "hello"
