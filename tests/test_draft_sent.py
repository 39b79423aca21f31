"""A draft is what was typed and not sent: a prompt once sent is no draft, so continuing its session from the
history brings back an empty composer (not the sent prompt, which Enter would send again glued to new words);
a draft that was not sent comes back, marked, with the cursor at its end."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp

from .helpers.app import until
from .helpers.history import continue_from_history, prompt, scripted_in

pytestmark = pytest.mark.slow

SCRIPT = {"initialize_result": {"agentCapabilities": {"loadSession": True}},
          "turns": [[{"chunk": "first answer"}]]}


async def test_continuing_a_session_whose_prompt_was_sent_leaves_the_composer_empty(tmp_path: Path) -> None:
    agent = scripted_in(SCRIPT, tmp_path / "agent")
    app = RatApp(agent, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await prompt(pilot, app, "delete the build directory", "first answer")
        assert view.composer.text == ""
    # a later run, whose own new session is another one (the first is not open in a tab)
    app = RatApp(scripted_in({**SCRIPT, "session_id": "sess-2"}, tmp_path / "agent"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.tabs.active_view.session.state.status == "ready", "ready")
        continued = await continue_from_history(pilot, app)
        await until(pilot, lambda: continued.session.state.status == "ready", "the load")
        await pilot.press(*"now ")
        assert continued.composer.text == "now "
        assert continued.composer.border_title is None  # nothing was restored


async def test_an_unsent_draft_comes_back_with_the_cursor_at_its_end(tmp_path: Path) -> None:
    agent = scripted_in(SCRIPT, tmp_path / "agent")
    app = RatApp(agent, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.tabs.active_view
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await prompt(pilot, app, "hello", "first answer")
        await pilot.press(*"half a thought")
        await until(pilot, lambda: app.sessions.journal(view.session).draft == "half a thought", "the draft journaled")
    app = RatApp(scripted_in({**SCRIPT, "session_id": "sess-2"}, tmp_path / "agent"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.tabs.active_view.session.state.status == "ready", "ready")
        continued = await continue_from_history(pilot, app)
        await until(pilot, lambda: continued.composer.text == "half a thought", "the draft restored")
        assert continued.composer.border_title == "draft restored"
        await pilot.press(*" more")
        assert continued.composer.text == "half a thought more"
        await pilot.press("enter")
        await until(pilot, lambda: continued.composer.text == "", "the draft sent")
        assert continued.composer.border_title is None
        await until(pilot, lambda: app.sessions.journal(continued.session).draft == "", "the sent draft unjournaled")
