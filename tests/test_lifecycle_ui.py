"""The lifecycle in the real app, driven with Pilot against scripted agents over real pipes: the session
browser, restart after a crash, hang reports, and logins (agent and terminal methods)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import OptionList

from rat_tui.app import RatApp
from rat_tui.config import Config
from rat_tui.ui.screens.auth import AuthScreen
from rat_tui.ui.screens.confirm import ConfirmScreen
from rat_tui.ui.screens.session_browser import SessionBrowserScreen
from rat_tui.ui.tabs.view import SessionView

from .helpers.agents import AGENT_METHOD, received, sent
from .helpers.app import delivered, palette_offers, scripted_named, until
from .helpers.harness import RatThemedApp

pytestmark = pytest.mark.slow


def browser_text(screen: SessionBrowserScreen) -> str:
    options = screen.query_one(OptionList)
    lines = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    return "\n".join(lines) + "\n" + str(screen.query_one(".message").render())


LISTING = {"loadSession": True, "sessionCapabilities": {"list": {}, "delete": {}}}


async def test_browse_page_filter_open_and_delete(tmp_path: Path, record_file: Path) -> None:
    here = str(tmp_path)
    page1 = {"sessions": [{"sessionId": "s-a", "cwd": here, "title": "Fix the parser", "updatedAt": "2026-05-01T10:00:00Z"},
                          {"sessionId": "s-b", "cwd": here, "title": "Write docs"}], "nextCursor": "page-2"}
    page2 = {"sessions": [{"sessionId": "s-c", "cwd": here, "title": "Old work"}]}
    everywhere = {"sessions": [{"sessionId": "s-z", "cwd": "/", "title": "Elsewhere"}]}
    script = {"initialize_result": {"agentCapabilities": LISTING},
              "on_request": {"session/list": [[{"respond": page1}], [{"respond": page2}], [{"respond": everywhere}],
                                              [{"respond": page1}]],
                             "session/load": [[{"replay": 6}]]}}
    app = RatApp(scripted_named(script, tmp_path), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(app.screen, SessionBrowserScreen), "the browser")
        browser = app.screen
        await until(pilot, lambda: "more available" in browser_text(browser), "the first page")
        assert "Fix the parser" in browser_text(browser) and "Old work" not in browser_text(browser)
        await pilot.press("m")
        await until(pilot, lambda: "Old work" in browser_text(browser), "the second page")
        assert "Load more" not in browser_text(browser)
        await pilot.press("a")
        await until(pilot, lambda: "Elsewhere" in browser_text(browser), "all directories")
        assert "Fix the parser" not in browser_text(browser)
        await pilot.press("a")
        await until(pilot, lambda: "Fix the parser" in browser_text(browser), "this directory again")
        await pilot.pause()  # the list lays out its new lines before the cursor can move over them
        await pilot.press("down", "d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the delete question")
        await pilot.press("y")
        await until(pilot, lambda: "Deleted Write docs" in browser_text(browser), "the deletion")
        await pilot.press("up", "enter")
        await until(pilot, lambda: len(app.tabs.views) == 2, "a second tab")
        reopened = app.session
        await until(pilot, lambda: reopened.state.status == "ready", "the loaded session")
        assert reopened.session_id == "s-a"
        view = app.tabs.active_view
        await until(pilot, lambda: "answer 2" in view.transcript.plain_text, "the replay on screen")
    params = [m["params"] for m in sent(record_file, "session/list")]
    assert params == [{"cwd": here}, {"cwd": here, "cursor": "page-2"}, {}, {"cwd": here}]
    assert sent(record_file, "session/delete")[0]["params"] == {"sessionId": "s-b"}
    assert sent(record_file, "session/load")[0]["params"]["sessionId"] == "s-a"


async def test_browser_without_list_says_so(tmp_path: Path, record_file: Path) -> None:
    app = RatApp(scripted_named({}, tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press("ctrl+b")
        await until(pilot, lambda: isinstance(app.screen, SessionBrowserScreen), "the browser")
        await pilot.pause()
        assert "does not list its sessions" in browser_text(app.screen)
        await pilot.press("escape")
    assert not sent(record_file, "session/list")


async def test_crash_mid_turn_keeps_draft_then_restart_reattaches(tmp_path: Path, record_file: Path) -> None:
    killed = tmp_path / "killed"
    turn = [{"when_missing": str(killed), "steps": [{"chunk": "half an answer"}, {"stderr": "segfault-ish"}, {"sleep": 60}]},
            {"chunk": "after restart"}]
    script = {"initialize_result": {"agentCapabilities": {"sessionCapabilities": {"resume": {}}}}, "turns": [turn]}
    app = RatApp(scripted_named(script, tmp_path), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(SessionView)
        session = view.session
        await until(pilot, lambda: session.state.status == "ready", "ready")
        await pilot.press(*"first question", "enter")
        await until(pilot, lambda: "half an answer" in view.transcript.plain_text, "the first chunk")
        await pilot.press(*"my unsent draft")
        os.killpg(session.process.pid, signal.SIGKILL)
        killed.write_text("")
        await until(pilot, lambda: session.state.status == "exited", "the exit")
        await until(pilot, lambda: "Alt+R restarts it" in view.transcript.plain_text, "the exit notice")
        text = view.transcript.plain_text
        assert "The running turn failed." in text and "segfault-ish" in text and "killed by SIGKILL (exit code -9)" in text
        assert session.state.stop_reason == "failed"
        assert view.composer.text == "my unsent draft"
        await pilot.press("alt+r")
        await until(pilot, lambda: session.state.status == "ready" and delivered(session), "ready again")
        assert "resumed" in view.transcript.plain_text and "half an answer" in view.transcript.plain_text
        assert view.composer.text == "my unsent draft"
        await pilot.press(*" now", "enter")
        await until(pilot, lambda: "after restart" in view.transcript.plain_text, "a turn after the restart")
    [resume] = sent(record_file, "session/resume")
    assert resume["params"]["sessionId"] == "sess-1"
    assert sent(record_file, "session/prompt")[-1]["params"]["prompt"][0]["text"] == "my unsent draft now"


async def test_unanswered_request_reported_and_cancelled_with_escape(tmp_path: Path, record_file: Path) -> None:
    modes = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]}
    script = {"new_session_result": {"modes": modes}, "on_request": {"session/set_mode": [[{"hang": True}]]}}
    app = RatApp(scripted_named(script, tmp_path), tmp_path, config=Config(request_timeout_seconds=0.3))
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(SessionView)
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await pilot.press("f9")  # the next mode: session/set_mode, which the agent never answers
        await until(pilot, lambda: "has not answered session/set_mode" in view.transcript.plain_text, "the notice")
        assert "Esc cancels the request; Alt+R restarts the agent." in view.transcript.plain_text
        await pilot.press("escape")
        await until(pilot, lambda: "Cancelled the unanswered session/set_mode" in view.transcript.plain_text,
                    "the cancel notice")
        assert view.session.state.status == "ready"
    [request] = sent(record_file, "session/set_mode")
    assert sent(record_file, "$/cancel_request")[0]["params"] == {"requestId": request["id"]}


async def test_login_picker_after_auth_required_then_retry(tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": {"authMethods": [AGENT_METHOD]},
              "on_request": {"session/new": [[{"error": {"code": -32000, "message": "Authentication required"}}], []]}}
    app = RatApp(scripted_named(script, tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, AuthScreen), "the login picker")
        assert app.session.state.status_detail == "login required"
        await pilot.press("enter")
        await until(pilot, lambda: app.session.state.status == "ready" and delivered(app.session), "ready after the login")
        assert "Logged in with Browser login." in app.query_one(SessionView).transcript.plain_text
    methods = [m.get("method") for m in received(record_file) if "method" in m]
    assert methods == ["initialize", "session/new", "authenticate", "session/new"]


async def test_terminal_login_runs_the_agent_command_then_restarts(tmp_path: Path, record_file: Path) -> None:
    marker = tmp_path / "logged-in"
    terminal = {"id": "tty", "type": "terminal", "name": "Terminal login", "description": "Log in interactively",
                "args": ["--write-marker", str(marker)], "env": {"RAT_FAKE_AUTH_ENV": "via-env"}}
    script = {"initialize_result": {"authMethods": [terminal]},
              "on_request": {"session/new": [[{"when_missing": str(marker), "steps": [
                  {"error": {"code": -32000, "message": "Authentication required"}}]}]]}}
    app = RatApp(scripted_named(script, tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        session = app.session
        await until(pilot, lambda: isinstance(app.screen, AuthScreen), "the login picker")
        first = session.process
        await pilot.press("enter")
        await until(pilot, lambda: session.state.status == "ready" and delivered(session),
                    "ready after the login and restart")
        assert session.process is not first and session.restarts == 1
        assert "fake login done" in app.query_one(SessionView).transcript.plain_text
    assert marker.read_text() == "logged in via-env\n"
    assert [m.get("method") for m in received(record_file) if "method" in m].count("initialize") == 2
    assert not sent(record_file, "authenticate")  # terminal methods never go through authenticate


METHODS = [
    AGENT_METHOD,
    {"id": "tty", "type": "terminal", "name": "Terminal login", "description": "Runs the agent's own login flow",
     "args": ["--login"], "env": {"LOGIN_MODE": "device"}},
    {"id": "key", "type": "env_var", "name": "API key", "vars": [{"name": "EXAMPLE_API_KEY"}],
     "link": "https://example.com/keys"},
    {"id": "sso", "type": "saml_sso", "name": "Company SSO", "description": "A method type rat does not know"},
]


class AuthPickerApp(RatThemedApp):
    def on_mount(self) -> None:
        self.use_rat_theme()
        self.push_screen(AuthScreen("Scripted agent", METHODS, ["my-agent", "--acp"], "The agent needs you to log in."))


def test_snapshot_auth_picker(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await pilot.press("down")
        await pilot.pause()

    assert snap_compare(AuthPickerApp(), terminal_size=(100, 30), run_before=run_before)


async def palette_names(app: RatApp) -> list[str]:
    return [command.title for command in app.get_system_commands(app.screen)]


async def test_palette_entries_and_logout_only_when_advertised(tmp_path: Path, record_file: Path) -> None:
    plain = RatApp(scripted_named({}, tmp_path, "plain"), tmp_path)
    async with plain.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: plain.session.state.status == "ready", "ready")
        names = await palette_names(plain)
        assert {"Agent sessions", "Restart the agent", "Log in to the agent"} <= set(names)
        assert "Log out of the agent" not in names
    script = {"initialize_result": {"agentCapabilities": {"auth": {"logout": {}}}}}
    app = RatApp(scripted_named(script, tmp_path, "logout"), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        assert "Log out of the agent" in await palette_names(app)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"Log out")
        await palette_offers(pilot, app, "Log out")
        await pilot.press("enter")
        await until(pilot, lambda: "Logged out" in app.query_one(SessionView).transcript.plain_text, "the logout")
    assert sent(record_file, "logout")
