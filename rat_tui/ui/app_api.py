"""Provides RatAppAPI: what rat's widgets and screens may ask of the app they run in, typed, and `rat_app`.

A widget reaches the app through `rat_app(self)`: the `RatAppAPI` it runs in, or None when it runs in another
app (a test's host app, a snapshot's). It does not guess at the app's attributes by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.widget import Widget

    from ..config import Config
    from ..session.agent_session import AgentCommand
    from ..session.registry import Sessions
    from .tabs.request_gate import RequestGate
    from .tabs.tab_bar import SessionTabs
    from .tabs.worktree_tabs import WorktreeTabs


class RatAppAPI:
    """The app's side the UI uses (RatApp derives from it; it adds nothing at run time, only the names)."""

    config: Config
    sessions: Sessions  # every open session (and its journal)
    request_gate: RequestGate  # every agent-raised dialog goes through it
    launched: AgentCommand  # the agent command the app was started with
    worktree_tabs: WorktreeTabs  # sessions in a git worktree of their own

    if TYPE_CHECKING:
        @property
        def tabs(self) -> SessionTabs:
            """The session tabs (NoMatches once the app's screen is gone)."""

        def save_ui_setting(self, key: str, value: object) -> None:
            """Save a setting chosen in the UI to config.toml (theme, follow mode, plan panel)."""

        def draw_now(self, widget: Widget) -> None:
            """`widget` shows the end of what the agent sent: its frame comes now (FramesMixin)."""


def rat_app(node: DOMNode) -> RatAppAPI | None:
    """The rat app `node` runs in; None in any other app."""
    app: Any = node.app
    return app if isinstance(app, RatAppAPI) else None
