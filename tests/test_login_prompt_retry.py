"""A prompt the agent refuses for want of a login (-32000) is sent again after the login, or given back
to the user when there is none: Pilot against scripted agents over real pipes."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.ui.screens.auth import AuthScreen
from rat_tui.ui.tabs.view import SessionView

from .helpers.agents import AGENT_METHOD, received, sent
from .helpers.app import scripted_named, until

pytestmark = pytest.mark.slow

AUTH_ERROR = {"error": {"code": -32000, "message": "Authentication required"}}
RESENT = "Logged in; sending your prompt again."


async def test_prompt_refused_for_login_is_sent_again_after_authenticate(tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": {"authMethods": [AGENT_METHOD]},
              "turns": [[AUTH_ERROR], [{"chunk": "Here is the answer after the login."}]]}
    app = RatApp(scripted_named(script, tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(SessionView)
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"explain the code", "enter")
        await until(pilot, lambda: isinstance(app.screen, AuthScreen), "the login picker")
        await pilot.press("enter")
        await until(pilot, lambda: "Here is the answer after the login." in view.transcript.plain_text, "the answer")
        await until(pilot, lambda: view.session.state.status == "ready", "ready after the turn")
        text = view.transcript.plain_text
        assert text.index("Logged in with Browser login.") < text.index(RESENT) < text.index("Here is the answer")
        assert view.session.login_prompt is None and view.composer.text == ""
    methods = [m.get("method") for m in received(record_file) if "method" in m]
    assert methods == ["initialize", "session/new", "session/prompt", "authenticate", "session/prompt"]
    first, again = sent(record_file, "session/prompt")
    assert first["params"] == again["params"]
    assert again["params"]["prompt"] == [{"type": "text", "text": "explain the code"}]


async def test_prompt_given_back_when_the_login_is_dismissed(tmp_path: Path, record_file: Path) -> None:
    release = tmp_path / "release"
    script = {"initialize_result": {"authMethods": [AGENT_METHOD]},
              "turns": [[AUTH_ERROR], [{"wait_file": str(release)}, AUTH_ERROR]]}
    app = RatApp(scripted_named(script, tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(SessionView)
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press(*"my precious words", "enter")
        await until(pilot, lambda: isinstance(app.screen, AuthScreen), "the login picker")
        await pilot.press("escape")
        await until(pilot, lambda: view.composer.text == "my precious words", "the prompt back in the composer")
        assert "your prompt is back in the composer" in view.transcript.plain_text
        assert not view.flow.queue and view.session.login_prompt is None

        await pilot.press("alt+l")  # log in by hand; nothing is sent by itself (the words are in the composer)
        await until(pilot, lambda: isinstance(app.screen, AuthScreen), "the login picker by Alt+L")
        await pilot.press("enter")
        await until(pilot, lambda: "Logged in with Browser login." in view.transcript.plain_text, "the login")
        assert RESENT not in view.transcript.plain_text
        await pilot.press("enter")  # refused again once the user has typed a new draft meanwhile
        await until(pilot, lambda: view.session.busy, "the second turn")
        await pilot.press(*"a newer draft")
        release.touch()
        # The user is typing: the login waits, announced, until a deliberate key opens it.
        await until(pilot, lambda: view.status_bar.waiting == 1, "the login announced")
        assert not isinstance(app.screen, AuthScreen)
        await pilot.press("ctrl+g")
        await until(pilot, lambda: isinstance(app.screen, AuthScreen), "the login picker again")
        await pilot.press("escape")
        await until(pilot, lambda: view.flow.queue.texts == ["my precious words"], "the prompt in the queue")
        assert view.composer.text == "a newer draft"
        assert "your prompt is first in the queue" in view.transcript.plain_text
        assert RESENT not in view.transcript.plain_text
    assert len(sent(record_file, "session/prompt")) == 2


async def test_prompt_sent_again_after_a_terminal_login_and_restart(tmp_path: Path, record_file: Path) -> None:
    marker = tmp_path / "logged-in"
    terminal = {"id": "tty", "type": "terminal", "name": "Terminal login",
                "args": ["--write-marker", str(marker)], "env": {"RAT_FAKE_AUTH_ENV": "via-env"}}
    script = {"initialize_result": {"authMethods": [terminal]},
              "turns": [[{"when_missing": str(marker), "steps": [AUTH_ERROR]}]]}
    app = RatApp(scripted_named(script, tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(SessionView)
        session = view.session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await pilot.press(*"after the login", "enter")
        await until(pilot, lambda: isinstance(app.screen, AuthScreen), "the login picker")
        await pilot.press("enter")
        await until(pilot, lambda: session.restarts == 1 and RESENT in view.transcript.plain_text, "the prompt again")
        await until(pilot, lambda: session.state.status == "ready" and not session.busy, "the resent turn done")
        assert session.state.stop_reason == "end_turn"
    prompts = sent(record_file, "session/prompt")
    assert [p["params"]["prompt"] for p in prompts] == [[{"type": "text", "text": "after the login"}]] * 2
    assert not sent(record_file, "authenticate")
