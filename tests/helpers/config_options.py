"""Session config options as agents send them (recorded and schema-only), and a host app for the controls screens."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from textual.app import ComposeResult
from textual.widgets import Static

from rat_tui.session.agent_session import AgentSession
from rat_tui.state import reducer
from rat_tui.ui.widgets.status_bar import StatusBar

from .harness import RatThemedApp


# From claude-agent-acp.jsonl (session/new), descriptions shortened.
MODE_OPTION = {
    "id": "mode", "name": "Mode", "description": "Session permission mode", "category": "mode", "type": "select",
    "currentValue": "default",
    "options": [
        {"value": "default", "name": "Default", "description": "Prompts for dangerous operations"},
        {"value": "acceptEdits", "name": "Accept Edits", "description": "Auto-accept file edit operations"},
        {"value": "plan", "name": "Plan Mode", "description": "No actual tool execution"},
    ],
}
MODEL_OPTION = {
    "id": "model", "name": "Model", "description": "AI model to use", "category": "model", "type": "select",
    "currentValue": "default",
    "options": [
        {"value": "default", "name": "Default (recommended)", "description": "Sonnet 4.6"},
        {"value": "opus[1m]", "name": "Opus (1M context)", "description": "Most capable for complex work"},
        {"value": "haiku", "name": "Haiku", "description": "Fastest for quick answers"},
    ],
}
# Grouped select options and a boolean: what the schema allows and no recorded agent sends yet.
EFFORT_OPTION = {
    "id": "effort", "name": "Reasoning effort", "category": "thought_level", "type": "select", "currentValue": "medium",
    "options": [
        {"group": "fast", "name": "Fast", "options": [{"value": "low", "name": "Low"}]},
        {"group": "deep", "name": "Thorough", "options": [
            {"value": "medium", "name": "Medium"}, {"value": "high", "name": "High", "description": "Slow"}]},
    ],
}
WEB_OPTION = {"id": "web", "name": "Web search", "description": "Let the agent search the web", "type": "boolean",
              "currentValue": True}
OPTIONS = [MODE_OPTION, MODEL_OPTION, EFFORT_OPTION, WEB_OPTION]

LEGACY_MODES = {"currentModeId": "default", "availableModes": [
    {"id": "default", "name": "Default"}, {"id": "acceptEdits", "name": "Accept Edits"}, {"id": "plan", "name": "Plan Mode"}]}
LEGACY_MODELS = {"currentModelId": "default", "availableModels": [
    {"modelId": "default", "name": "Default (recommended)"}, {"modelId": "haiku", "name": "Haiku", "description": "Fast"}]}


def with_value(option: dict, value: Any) -> dict:
    return {**copy.deepcopy(option), "currentValue": value}


class ControlsApp(RatThemedApp):
    """The screen over a status bar fed by the same store."""

    def __init__(self, session: AgentSession, screen_factory) -> None:
        super().__init__()
        self.session = session
        self.screen_factory = screen_factory
        self.results: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Static("The session would be here.")
        yield StatusBar()

    def on_mount(self) -> None:
        self.use_rat_theme()
        self.query_one(StatusBar).show(self.session.state)
        self.session.store.subscribe(lambda _batch: self.query_one(StatusBar).show(self.session.state))
        self.push_screen(self.screen_factory(self.session), self.results.append)


def offline_session(tmp_path: Path, result: dict) -> AgentSession:
    """A session whose state says what `session/new` answered, without an agent (for pixels)."""
    session = AgentSession(SimpleNamespace(name="claude-agent-acp", argv=["true"], env={}), tmp_path)
    session.store.dispatch(reducer.set_session, "s", result)
    session.store.state.cwd = "/home/user/project"
    session.store.flush()
    return session
