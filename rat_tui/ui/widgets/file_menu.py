"""Provides FileMenu: the `@` file picker a PromptComposer opens, fuzzy over the session's files."""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content
from textual.geometry import Region
from textual.widgets.option_list import Option

from ...attachments import match_paths
from .command_menu import CommandMenu


class FileMenu(CommandMenu):
    """The CommandMenu's overlay and keys, listing paths; images and audio are marked, not hidden."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    @property
    def selected_path(self) -> str | None:
        index = self.highlighted
        if index is None or not 0 <= index < len(self.paths):
            return None
        return self.paths[index]

    @property
    def selected_name(self) -> str | None:  # the composer's generic "is something highlighted"
        return self.selected_path

    def show_files(self, files: list[str], query: str, anchor: Region, kind_of: Callable[[str], str | None]) -> bool:
        """Open with the files matching `query`; `kind_of` names a path's media kind ("image") for its mark."""
        previous = self.selected_path if query == self.query else None
        self.query = query
        self.paths = match_paths(files, query, limit=self.MAX_ROWS * 6)
        self.matches = [{"name": path} for path in self.paths]
        if not self.paths:
            self.close()
            return False
        self.set_options(Option(self._file_prompt(path, kind_of(path))) for path in self.paths)
        self.highlighted = self.paths.index(previous) if previous in self.paths else 0
        self._place(anchor)
        self.display = True
        return True

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
