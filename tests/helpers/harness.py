"""Test harness shared by the widget and session tests: a themed host app and AgentSession helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from textual.app import App

from rat_tui.ui.screens.dialog import KeyGuard
from rat_tui.session.agent_session import AgentSession
from rat_tui.themes import THEME_VARIABLE_DEFAULTS, load_themes

from .agents import scripted_argv


class RatThemedApp(KeyGuard, App):
    """Hosts one widget or screen alone, with rat's theme variables and RatApp's key guard for agent
    dialogs (rat_tui/ui/screens/dialog.py); `use_rat_theme` picks a theme."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def use_rat_theme(self, name: str = "rat-dark") -> None:
        for theme in load_themes()[0]:
            self.register_theme(theme)
        self.theme = name


async def start_session(script: dict, tmp_path: Path, **kwargs) -> tuple[AgentSession, asyncio.Task]:
    """An AgentSession on the scripted agent, run until its handshake is over (ready or failed)."""
    command = SimpleNamespace(name="fake", argv=scripted_argv(script, tmp_path), env={})
    session = AgentSession(command, tmp_path, **kwargs)
    task = asyncio.create_task(session.run())
    await wait_for(lambda: session.state.status != "starting", what="handshake")
    return session, task


async def wait_for(predicate: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def finish(session: AgentSession, task: asyncio.Task) -> None:
    await session.stop()
    await asyncio.wait_for(task, 10)
