"""Provides SessionToolsUI: what rat-tui's own MCP tools need from the screen, for one session view.

`ask_user` shows AskUserScreen (one question at a time per session; a cancelled call closes it),
`show_file` opens the view's file preview, `notify` toasts (and rings the bell), and the session
tools read the app's other open sessions.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ...client_tools.tools import transcript_markdown
from ..screens.modal_answer import modal_answer
from ..screens.ask_user import AskUserScreen
from ..app_api import rat_app

if TYPE_CHECKING:
    from .view import SessionView


class SessionToolsUI:
    def __init__(self, view: SessionView) -> None:
        self.view = view
        self._one_at_a_time = asyncio.Lock()

    async def ask_user(self, question: str, choices: list[str]) -> str | None:
        async with self._one_at_a_time:
            agent_name = self.view.session.state.agent_name
            app = rat_app(self.view)
            if app is None:  # an app without tabs
                return await modal_answer(self.view.app, AskUserScreen(question, choices, agent_name=agent_name))
            return await app.request_gate.ask(self.view, "question",
                                          lambda: AskUserScreen(question, choices, agent_name=agent_name))

    def show_file(self, path: str, line: int | None) -> None:
        self.view.preview.show(path, line)

    def notify(self, message: str, bell: bool) -> None:
        self.view.notify(message, title=self.view.session.state.agent_name, timeout=8, markup=False)
        if bell:
            self.view.app.bell()

    def _others(self) -> list[tuple[str, Any]]:
        app = rat_app(self.view)
        sessions = app.sessions if app is not None else []
        return [(session.session_id or f"tab-{number}", session)
                for number, session in enumerate(sessions, start=1) if session is not self.view.session]

    def list_sessions(self) -> list[dict[str, str]]:
        return [{"id": key, "title": session.state.title or "", "agent": session.state.agent_name,
                 "cwd": session.state.cwd} for key, session in self._others()]

    def read_session(self, session_id: str) -> str | None:
        session = dict(self._others()).get(session_id)
        return transcript_markdown(session.state) if session is not None else None
