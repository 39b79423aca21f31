"""Ctrl+N's new-session screen: every profile is a choice, named by its title; Enter on the worktree box starts
the session in a fresh worktree, as the hint says (it used to untick the box and start nothing)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rat_tui.agents.spec import demo_agent
from rat_tui.app import RatApp
from rat_tui.config import AgentProfile, Config, WorktreesConfig
from rat_tui.ui.screens.new_session import NewSessionScreen
from textual.widgets import Checkbox, OptionList

from .helpers.app import until
from .helpers.git import make_repo

pytestmark = pytest.mark.slow

# One command line, two profiles: only the protocol differs, so both must be offered.
COMMAND = str(Path(sys.prefix) / "lib" / "node_modules" / "claude-agent-acp" / "dist" / "index.js")


def config(tmp_path: Path) -> Config:
    return Config(worktrees=WorktreesConfig(dir=str(tmp_path / "wts")), agents={
        "claude": AgentProfile(command="node", args=[COMMAND], title="Claude Code"),
        "claude2": AgentProfile(command="node", args=[COMMAND], title="Claude Code (v2)", protocol=2),
    })


def rows(screen: NewSessionScreen) -> list[str]:
    options = screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_profiles_of_one_command_line_are_both_offered_by_title(tmp_path: Path) -> None:
    app = RatApp(demo_agent(), tmp_path, config=config(tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press("ctrl+n")
        await until(pilot, lambda: isinstance(app.screen, NewSessionScreen), "the new-session screen")
        listed = rows(app.screen)
        assert [row.split("  —  ")[0] for row in listed[1:3]] == ["Claude Code", "Claude Code (v2)"], listed
        assert listed[1].endswith("—  node index.js") and listed[2].endswith("node index.js  · ACP v2"), listed
        assert not any(COMMAND in row for row in listed)  # the file name, not the install path


async def test_enter_on_the_ticked_worktree_box_starts_the_session(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    app = RatApp(demo_agent(), repo, config=config(tmp_path))
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press("ctrl+n")
        await until(pilot, lambda: isinstance(app.screen, NewSessionScreen), "the new-session screen")
        screen = app.screen
        await pilot.press("down")  # the demo agent
        await pilot.press("tab", "tab", "space")  # to the box, tick it
        assert screen.query_one("#worktree", Checkbox).value is True
        await pilot.press("enter")
        await until(pilot, lambda: len(app.tabs.views) == 2, "the worktree tab")
        assert app.worktree_tabs.of(app.session) is not None
