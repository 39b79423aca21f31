"""Provides LifecycleCommandsProvider: palette entries for the agent's sessions, restart, login and logout."""

from __future__ import annotations

from collections.abc import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider


class LifecycleCommandsProvider(Provider):
    """Acts on the active tab's session; "Log out" is offered only when the agent advertises it."""

    def _entries(self) -> list[tuple[str, Callable[[], object], str]]:
        app = self.app
        tabs = getattr(app, "tabs", None)
        view = tabs.active_view if tabs is not None else None
        if view is None:
            return []
        entries: list[tuple[str, Callable[[], object], str]] = [
            ("Agent sessions", app.action_agent_sessions,  # type: ignore[attr-defined]
             "Browse, open or delete the agent's saved sessions (Ctrl+B)"),
            ("Restart the agent", view.action_restart_agent,
             "A new agent process for this tab; the transcript stays (Alt+R)"),
            ("Log in to the agent", view.action_authenticate, "Pick one of the agent's login methods (Alt+L)"),
        ]
        if view.session.supports("logout"):
            entries.append(("Log out of the agent", view.action_logout, "Send logout to the agent"))
        return entries

    async def discover(self) -> Hits:
        for name, callback, help_text in self._entries():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self._entries():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, text=name, help=help_text)
