"""Provides AgentsCommandProvider: the palette's "Agents" command, which opens the agent picker."""

from __future__ import annotations

from textual.command import DiscoveryHit, Hit, Hits, Provider

TITLE = "Agents"
HELP = "Every known ACP agent: which are installed, start one in a new tab, how to install the others"


class AgentsCommandProvider(Provider):
    """One command; the app's `action_agents` does the work."""

    async def _open(self) -> None:
        await self.app.run_action("agents")

    async def discover(self) -> Hits:
        yield DiscoveryHit(TITLE, self._open, help=HELP)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text in (TITLE, "Agent picker", "Install agents"):
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), self._open, text=text, help=HELP)
                return
