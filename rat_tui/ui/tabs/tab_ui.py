"""Provides TabUI: the SessionUI a tab gives its session — the screen side of the engine's questions.

Made before its session (the engine takes it at construction) and bound to the tab's view once that is
mounted: until then, questions wait for the view (the agent may ask before the first frame), and
messages go to the log.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...protocol.sanitize import clean
from ..toasts import Toasts

if TYPE_CHECKING:
    from textual.app import App

    from ...client_tools.tools import ToolsUI
    from ...session.elicitation_broker import Elicitation
    from .view import SessionView

log = logging.getLogger("rat.ui")


class TabUI:
    """One per session; `bind(view)` when its SessionView mounts."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.view: SessionView | None = None
        self._bound = asyncio.Event()
        self.toasts = Toasts(app)  # the toasts about the session's state (`tell(about_state=True)`)
        self._state_seen: tuple[str, str] | None = None  # (status, detail) they told of

    def bind(self, view: SessionView) -> None:
        first = self.view is None
        self.view = view
        self._bound.set()
        if first:
            view.session.store.subscribe(lambda batch: self._state_changed())

    def _state_changed(self) -> None:
        """A toast about the session's state is stale once the state changes: it goes."""
        assert self.view is not None
        state = self.view.session.state
        now = (state.status, state.status_detail)
        if now != self._state_seen:
            self._state_seen = now
            self.toasts.withdraw_all(self)

    async def bound_view(self) -> SessionView:
        """The tab's view, once it is bound (a question may come before the tab mounts)."""
        await self._bound.wait()
        assert self.view is not None
        return self.view

    async def ask_permission(self, request: dict[str, Any], tool_call: dict[str, Any]) -> dict[str, Any] | None:
        from . import children_ui

        view = await self.bound_view()
        title = str(tool_call.get("title") or "a tool call")
        asker = children_ui.asking_name(view, request)  # a subagent's request names it
        self.app.notify_event("permission", view.session, f"Asks permission: {title}")
        try:
            return await self.app.permission_queue.ask(view, request, tool_call, agent_name=asker)
        finally:
            self.app.update_title()

    async def ask_elicitation(self, elicitation: Elicitation) -> dict[str, Any] | None:
        view = await self.bound_view()
        self.app.notify_event("question", view.session,
                            f"Asks: {elicitation.message or elicitation.url or 'a question'}")
        try:
            return await self.app.elicitation_queue.ask(view, elicitation)
        finally:
            self.app.update_title()

    async def ask_outside(self, path: Path, access: str) -> bool:
        """An agent dialog like a permission request: through the request gate (request_gate.py)."""
        view = await self.bound_view()
        question = (f"The agent wants to {access} {clean(str(path))}, which is outside the session's directories. "
                    "Allow it this once?")
        title = "File access outside the project"
        from ..screens.confirm import AgentConfirmScreen  # not before the first frame (RatApp._warm_up)

        return bool(await self.app.request_gate.ask(view, "file access", lambda: AgentConfirmScreen(title, question)))

    def login_needed(self, methods: list[dict[str, Any]]) -> None:
        from . import lifecycle_actions

        if self.view is not None:  # agent-raised: through the request gate
            self.view.call_later(lifecycle_actions.show_auth_picker, self.view, "The agent needs you to log in.", True)

    def give_back(self, text: str) -> bool:
        view = self.view
        if view is None or view.composer.text.strip():
            return False
        view.composer.load_text(text)
        return True

    def prompts_changed(self) -> None:
        if self.view is not None:
            self.view.flow.queue_changed()

    def tell(self, text: str, severity: str = "information", title: str = "", timeout: float = 3,
             about_state: bool = False) -> None:
        if self.view is None:
            log.info("%s", text)
            return
        if not about_state:
            self.view.notify(text, title=title, severity=severity, timeout=timeout)  # type: ignore[arg-type]
            return
        state = self.view.session.state
        self._state_seen = (state.status, state.status_detail)
        # (Not markup: the text may carry the agent's own words, a failed start's reason.)
        self.toasts.show(text, title=title, severity=severity, timeout=timeout, markup=False,  # type: ignore[arg-type]
                         key=(self, text))

    @property
    def tools(self) -> ToolsUI | None:
        return _ToolsForTab(self)


class _ToolsForTab:
    """rat-tui's own tools on this tab's screen (SessionToolsUI), found when a tool is called."""

    def __init__(self, tab: TabUI) -> None:
        self.tab = tab
        self._tools: Any = None

    async def _ui(self) -> Any:
        if self._tools is None:
            from .client_tools_ui import SessionToolsUI

            self._tools = SessionToolsUI(await self.tab.bound_view())
        return self._tools

    def _now(self) -> Any:
        if self._tools is None and self.tab.view is not None:
            from .client_tools_ui import SessionToolsUI

            self._tools = SessionToolsUI(self.tab.view)
        return self._tools

    async def ask_user(self, question: str, choices: list[str]) -> str | None:
        tools = await self._ui()
        app = self.tab.app
        app.notify_event("question", tools.view.session, f"Asks: {question}")
        return await tools.ask_user(question, choices)

    def show_file(self, path: str, line: int | None) -> None:
        if (tools := self._now()) is not None:
            tools.show_file(path, line)

    def notify(self, message: str, bell: bool) -> None:
        if (tools := self._now()) is not None:
            tools.notify(message, bell)

    def list_sessions(self) -> list[dict[str, str]]:
        tools = self._now()
        return tools.list_sessions() if tools is not None else []

    def read_session(self, session_id: str) -> str | None:
        tools = self._now()
        return tools.read_session(session_id) if tools is not None else None
