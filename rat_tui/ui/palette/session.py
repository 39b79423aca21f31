"""Provides SessionCommandsProvider: command palette entries for screens of the session in view."""

from __future__ import annotations

from textual.command import DiscoveryHit, Hit, Hits, Provider

# (palette text, help, SessionView action name)
ENTRIES = [
    ("MCP servers", "The MCP servers passed to the agent, and those skipped and why (Alt+M)", "show_mcp_servers"),
]


class SessionCommandsProvider(Provider):
    """Runs an action of the session view shown on the screen the palette was opened from."""

    def _view(self):
        from ..tabs.view import SessionView

        shown = [view for view in self.screen.query(SessionView) if view.region.area]
        return shown[0] if shown else None

    async def discover(self) -> Hits:
        view = self._view()
        if view is None:
            return
        for text, help, action in ENTRIES:
            yield DiscoveryHit(text, getattr(view, f"action_{action}"), help=help)

    async def search(self, query: str) -> Hits:
        view = self._view()
        if view is None:
            return
        matcher = self.matcher(query)
        for text, help, action in ENTRIES:
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), getattr(view, f"action_{action}"), text=text, help=help)
