"""The first screen of a session says what to do (the snapshot is in test_snapshots.py); it leaves at the
first entry; the idle footer offers F1 and no "Cancel turn", which comes back while a turn runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.agents.spec import demo_agent
from rat_tui.app import RatApp
from rat_tui.ui.widgets.welcome import Welcome

from .helpers.app import screen_text, until, view

pytestmark = pytest.mark.slow


def footer(app: RatApp) -> str:
    return screen_text(app).splitlines()[-1]


async def test_the_welcome_names_the_demo_words_and_leaves_at_the_first_prompt(tmp_path: Path) -> None:
    app = RatApp(demo_agent(), tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await until(pilot, lambda: "is ready" in screen_text(app), "the welcome")
        text = screen_text(app)
        assert "F1 lists the keys" in text and "bigdiff" in text and "edit" in text
        line = footer(app)
        assert "Keys" in line and "Cancel turn" not in line, line
        await pilot.press("escape")  # idle: Esc is offered nowhere and does nothing to the draft
        for key in "hi":
            await pilot.press(key)
        await pilot.press("enter")
        await until(pilot, lambda: not view(app).query(Welcome), "the welcome gone")
        await until(pilot, lambda: view(app).session.state.status == "ready", "the turn's end")
        assert "is ready. Type a message" not in screen_text(app)
