"""Provides FileMenu: the `@` file picker a PromptComposer opens, fuzzy over the session's files."""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content
from textual.geometry import Region

from ...session.attachments import match_paths
from .command_menu import CommandMenu


class FileMenu(CommandMenu):
    """The CommandMenu's overlay and keys, listing paths; images and audio are marked, not hidden."""

    @property
    def paths(self) -> list[str]:
        return [match["name"] for match in self.matches]

    @property
    def selected_path(self) -> str | None:
        return self.selected_name

    def show_files(self, files: list[str], query: str, anchor: Region, kind_of: Callable[[str], str | None]) -> bool:
        """Open with the files matching `query`; `kind_of` names a path's media kind ("image") for its mark."""
        matches = [{"name": path} for path in match_paths(files, query, limit=self.MAX_ROWS * 6)]
        return self._show(query, matches, lambda match: self._file_prompt(match["name"], kind_of(match["name"])),
                          anchor)

    @staticmethod
    def _file_prompt(path: str, kind: str | None) -> Content:
        folder, _, name = path.rpartition("/")
        parts: list[tuple[str, str] | str] = []
        if folder:
            parts.append((folder + "/", "$text-muted"))
        parts.append((name, "bold $text-accent"))
        if kind:
            parts.append((f"  {kind}", "italic $text-muted"))
        return Content.assemble(*parts)
