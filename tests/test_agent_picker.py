"""The agent picker: installed and missing agents from the catalog, started in a real tab over real pipes.

An agent is made "installed" by putting an executable of its program's name on PATH: a shell script
that execs the scripted fake agent. PATH holds only that folder, so every other agent is missing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from textual.widgets import Static

from rat_tui.agents.catalog import load_catalog
from rat_tui.app import RatApp
from rat_tui.agents.spec import demo_agent
from rat_tui.config import validate_config
from rat_tui.ui.screens.agent_picker import AgentPickerScreen
from rat_tui.ui.screens.new_session import NewSessionScreen

from .helpers.agents import AGENTS, received
from .helpers.app import palette_offers, until
from .helpers.harness import RatThemedApp

pytestmark = pytest.mark.slow


def fake_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, program: str, script: dict) -> Path:
    """PATH = one folder holding `program`, which runs the scripted agent; returns the folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script_file = tmp_path / f"{program}-script.json"
    script_file.write_text(json.dumps(script))
    exe = bin_dir / program
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{AGENTS / "scripted_agent.py"}" "{script_file}"\n')
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def picker_ready(app: RatApp) -> bool:
    return isinstance(app.screen, AgentPickerScreen) and bool(app.screen.query("#agents"))


def option_texts(screen: AgentPickerScreen) -> dict[str, str]:
    options = screen.query_one("#agents").options
    return {str(option.id): str(option.prompt) for option in options}


def highlight(screen: AgentPickerScreen, agent_id: str) -> None:
    option_list = screen.query_one("#agents")
    option_list.highlighted = option_list.get_option_index(agent_id)


async def test_picker_lists_installed_and_missing_and_starts_the_installed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_file: Path
) -> None:
    script = {"initialize_result": {"agentInfo": {"name": "goose", "title": "Fake Goose", "version": "1"}},
              "turns": [[{"chunk": "honk from the fake goose"}]]}
    fake_on_path(tmp_path, monkeypatch, "goose", script)
    app = RatApp(demo_agent(), tmp_path)
    async with app.run_test(size=(130, 50)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "the demo ready")
        app.action_agents()
        await until(pilot, lambda: picker_ready(app), "the picker")
        picker = app.screen
        texts = option_texts(picker)
        assert texts["goose"].startswith("✓ Goose") and "installed" in texts["goose"]
        assert "$ goose acp" in texts["goose"]
        assert texts["gemini"].startswith("✗ Gemini CLI") and "not installed" in texts["gemini"]
        assert "install: npm install -g @google/gemini-cli" in texts["gemini"]
        assert "install:" not in texts["goose"]
        assert "1 of 8 can start here" in str(picker.query_one("Label").render())

        # Enter on a missing agent keeps the picker open and says what to run
        highlight(picker, "gemini")
        await pilot.press("enter")
        message = str(picker.query_one("#message").render())
        assert "Gemini CLI is not installed" in message and "npm install -g @google/gemini-cli" in message
        assert app.screen is picker and len(app.tabs.views) == 1
        await pilot.press("c")
        assert "Copied: npm install -g @google/gemini-cli" in str(picker.query_one("#message").render())

        # Enter on the installed one opens a tab that really starts it
        highlight(picker, "goose")
        await pilot.press("enter")
        await until(pilot, lambda: len(app.tabs.views) == 2, "a second tab")
        session = app.session
        assert session.command.argv == ["goose", "acp"]
        await until(pilot, lambda: session.state.status == "ready", "the fake goose ready")
        assert session.state.agent_name == "Fake Goose"
        await pilot.press(*"hello goose", "enter")
        await until(pilot, lambda: "honk from the fake goose" in app.tabs.active_view.transcript.plain_text, "answer")
    assert "session/prompt" in [m.get("method") for m in received(record_file)]


async def test_new_session_screen_opens_the_picker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_on_path(tmp_path, monkeypatch, "kimi", {"turns": []})
    project = tmp_path / "project"
    project.mkdir()
    app = RatApp(demo_agent(), tmp_path)
    async with app.run_test(size=(130, 50)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "the demo ready")
        await pilot.press("ctrl+n")
        await until(pilot, lambda: isinstance(app.screen, NewSessionScreen), "the new-session screen")
        await pilot.press("tab")  # to the directory
        app.screen.query_one("#cwd").value = str(project)
        app.screen.query_one("OptionList").highlighted = app.screen.query_one("OptionList").option_count - 1
        await pilot.press("enter")
        await until(pilot, lambda: picker_ready(app), "the picker")
        highlight(app.screen, "kimi")
        await pilot.press("enter")
        await until(pilot, lambda: len(app.tabs.views) == 2, "a second tab")
        assert app.session.command.argv == ["kimi", "--acp"] and app.session.cwd == project
        await until(pilot, lambda: app.session.state.status == "ready", "the fake kimi ready")


async def test_palette_agents_command_opens_the_picker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing installed
    (tmp_path / "config").mkdir()
    user_agents = tmp_path / "xdg_config" / "rat-tui" / "agents"
    user_agents.mkdir(parents=True)
    (user_agents / "broken.json").write_text("{nope")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg_config"))
    app = RatApp(demo_agent(), tmp_path)
    async with app.run_test(size=(130, 50)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "the demo ready")
        await pilot.press("ctrl+p")
        await pilot.press(*"Agents")
        await palette_offers(pilot, app, "Agents")
        await pilot.press("enter")
        await until(pilot, lambda: picker_ready(app), "the picker")
        assert "0 of 8 can start here" in str(app.screen.query_one("Label").render())
        problems = str(app.screen.query_one("#problems").render())
        assert "broken.json: not valid JSON" in problems and "skipped" in problems
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, AgentPickerScreen), "the picker to close")
        assert len(app.tabs.views) == 1


class PickerApp(RatThemedApp):
    """The picker alone over a placeholder, with a catalog and a PATH fixed by the test."""

    def __init__(self, catalog, which) -> None:
        super().__init__()
        self.catalog, self.which = catalog, which

    def compose(self):
        yield Static("The session would be here.")

    def on_mount(self) -> None:
        self.use_rat_theme()
        self.push_screen(AgentPickerScreen(self.catalog, self.which))


def test_snapshot_agent_picker(snap_compare, tmp_path: Path) -> None:
    """A config profile first, then the catalog: installed (✓), through npx (↓) and missing (✗) with its hint."""
    config, _ = validate_config({"agents": {"mine": {"command": "my-agent", "args": ["--acp"], "title": "My agent"}}})
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "broken.json").write_text("{")
    catalog = load_catalog(config, user_dir=folder)
    catalog.problems[:] = [problem.replace(str(folder), "~/.config/rat-tui/agents") for problem in catalog.problems]
    which = lambda program: f"/usr/bin/{program}" if program in ("my-agent", "goose", "npx") else None  # noqa: E731
    assert snap_compare(PickerApp(catalog, which), terminal_size=(110, 60))
