"""Provides RatApp: themes, keymap and the session screen; everything else lives in its widgets."""

from __future__ import annotations

import logging
from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer

from .agent_session import AgentCommand, AgentSession
from .config import Config
from .protocol.rpc_log import RpcLog
from .themes import THEME_VARIABLE_DEFAULTS, load_themes
from .ui.session_view import SessionView

log = logging.getLogger("rat.app")


class RatApp(App[None]):
    """The terminal client: one session for now, several tabs later."""

    TITLE = "rat"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
    ]

    def __init__(
        self,
        command: AgentCommand,
        cwd: Path,
        config: Config | None = None,
        rpc_log_path: Path | None = None,
        problems: list[str] | None = None,
    ) -> None:
        self.config = config or Config()
        self._problems = list(problems or [])
        self._themes, theme_problems = load_themes()
        self._problems.extend(theme_problems)
        super().__init__()
        self.rpc_log = RpcLog(rpc_log_path) if rpc_log_path else None
        self.session = AgentSession(command, cwd, rpc_log=self.rpc_log)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield SessionView(self.session, id="session")
        yield Footer()

    def on_mount(self) -> None:
        for theme in self._themes:
            self.register_theme(theme)
        if self.config.theme in self.available_themes:
            self.theme = self.config.theme
        else:
            self._problems.append(f"Unknown theme {self.config.theme!r}; using the default.")
            self.theme = "rat-dark" if "rat-dark" in self.available_themes else "textual-dark"
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        for problem in self._problems:
            log.warning("%s", problem)
            self.notify(problem, title="Configuration", severity="warning", timeout=10)

    async def on_unmount(self) -> None:
        await self.session.stop()
        if self.rpc_log:
            self.rpc_log.close()
