"""Provides the command palette Providers: the session's slash commands."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..widgets.command_menu import command_hint
from ..widgets.prompt import PromptComposer


class SlashCommandsProvider(Provider):
    """The agent's slash commands; choosing one puts `/name ` at the start of the composer.

    The composer is the one focused when the palette opened, else the first one shown on the screen
    the palette was opened from (other session tabs are hidden, so they have no region). Its commands
    are whatever the session view last passed to `PromptComposer.set_commands`.
    """

    def _composer(self) -> PromptComposer | None:
        if isinstance(self.focused, PromptComposer):
            return self.focused
        shown = [c for c in self.screen.query(PromptComposer) if c.region.area]
        return shown[0] if shown else None

    def _entries(self) -> list[tuple[PromptComposer, str, str]]:
        composer = self._composer()
        if composer is None:
            return []
        entries = []
        for command in composer.commands:
            hint = command_hint(command)
            label = f"/{command['name']}" + (f" {hint}" if hint else "")
            entries.append((composer, str(command["name"]), label))
        return entries

    def _help(self, composer: PromptComposer, name: str) -> str:
        command = next((c for c in composer.commands if c.get("name") == name), {})
        lines = str(command.get("description") or "").strip().splitlines()
        return lines[0] if lines else ""

    async def discover(self) -> Hits:
        for composer, name, label in self._entries():
            yield DiscoveryHit(label, partial(composer.insert_command, name), help=self._help(composer, name))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query.removeprefix("/") or query)
        for composer, name, label in self._entries():
            score = matcher.match(f"/{name}")
            if score > 0:
                yield Hit(score, matcher.highlight(label), partial(composer.insert_command, name),
                          text=label, help=self._help(composer, name))
