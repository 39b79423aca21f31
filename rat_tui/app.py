"""Provides RatApp: themes, keymap and the session screen; everything else lives in its widgets."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer

from .agent_session import AgentCommand, AgentSession
from .config import Config
from .protocol.rpc_log import RpcLog
from .state.permission_policy import PermissionPolicy
from .themes import THEME_VARIABLE_DEFAULTS, load_themes
from .ui.permission_queue import PermissionQueue
from .ui.screens.confirm import ConfirmScreen
from .ui.screens.permission_rules import PermissionRulesScreen
from .ui.session_view import SessionView

log = logging.getLogger("rat.app")


class RatApp(App[None]):
    """The terminal client: one session for now, several tabs later."""

    TITLE = "rat"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding("f4", "permission_rules", "Rules", id="app.permission_rules",
                tooltip="List, edit and revoke remembered permission rules"),
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
        self.policy = PermissionPolicy()
        self._problems.extend(self.policy.problems)
        self.permission_queue = PermissionQueue(self)
        ask_outside = self.ask_outside if self.config.outside_files == "ask" else None
        self.session = AgentSession(command, cwd, rpc_log=self.rpc_log, policy=self.policy, ask_outside=ask_outside)

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

    async def ask_outside(self, path: Path, access: str) -> bool:
        """The agent wants a file outside the session's directories: ask before allowing it once."""
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        question = f"The agent wants to {access} {path}, which is outside the session's directories. Allow it this once?"
        self.push_screen(ConfirmScreen("File access outside the project", question),
                         callback=lambda yes: answer.done() or answer.set_result(bool(yes)))
        return await answer

    def action_permission_rules(self) -> None:
        self.push_screen(PermissionRulesScreen(self.policy))

    async def on_unmount(self) -> None:
        await self.session.stop()
        if self.rpc_log:
            self.rpc_log.close()
