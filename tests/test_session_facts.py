"""Usage, titles and notices end to end: a scripted agent over real pipes drives the status bar, tab and toasts."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp

from .helpers.app import labels, scripted, until, view

pytestmark = pytest.mark.slow


def toasts(app: RatApp) -> list[tuple[str, str, str]]:
    return [(n.title, n.message, n.severity) for n in app._notifications]


async def test_usage_title_and_notice_from_the_agent(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [
        [{"update": {"sessionUpdate": "session_info_update", "title": "Fix the login bug"}},
         {"update": {"sessionUpdate": "usage_update", "used": 170_000, "size": 200_000,
                     "cost": {"amount": 3.5, "currency": "USD"}}},
         {"update": {"sessionUpdate": "notice", "severity": "warning", "title": "Rate limited",
                     "description": "Retrying in 30 s."}},
         {"chunk": "one"}],
        [{"update": {"sessionUpdate": "session_info_update", "title": None}}, {"chunk": "two"}],
    ]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(140, 30), notifications=True) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press(*"please look at auth.py", "enter")
        await until(pilot, lambda: "one" in view(app).transcript.plain_text, "the first turn")
        await until(pilot, lambda: app.session.state.status == "ready", "the end of the first turn")
        bar = view(app).status_bar
        assert bar.usage_text == "ctx ▰▰▰▰▱ 85% 170k/200k  $3.50" and bar.context_level == "warning"
        # (a label of a new width waits until the agent is quiet: SessionTabs._put_off)
        await until(pilot, lambda: "Fix the login bug" in labels(app)[0], "the title in the tab")
        assert "Fix the login bug" in str(bar.render())
        # The notice: a line in the transcript and a toast.
        assert "Rate limited\nRetrying in 30 s." in view(app).transcript.plain_text
        assert ("Scripted fake agent: Rate limited", "Retrying in 30 s.", "warning") in toasts(app)
        await pilot.press(*"again", "enter")
        await until(pilot, lambda: "two" in view(app).transcript.plain_text, "the second turn")
        await until(pilot, lambda: app.session.state.title is None, "the title cleared")
        # A null title clears it: the tab falls back to the first prompt, the status bar drops it.
        await until(pilot, lambda: "Fix the login bug" not in labels(app)[0] and "please look at auth.py" in
                    labels(app)[0], "the tab's label back to the first prompt")
        assert "Fix the login bug" not in str(view(app).status_bar.render())
