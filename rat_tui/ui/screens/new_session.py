"""Provides NewSessionScreen: pick an agent and a working directory for a new tab."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option


MORE_AGENTS = "more-agents"


class NewSessionScreen(ModalScreen[tuple[Any, Path] | None]):
    """Dismisses with (agent spec, absolute cwd), or None when cancelled.

    With `catalog` (a loader of agent_catalog.Catalog), a last row opens the agent picker; the agent
    chosen there starts in the directory typed here.
    """

    DEFAULT_CSS = """
    NewSessionScreen { align: center middle; }
    NewSessionScreen > Vertical {
        width: 80%; max-width: 100; height: auto; max-height: 80%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    NewSessionScreen OptionList { height: auto; max-height: 12; margin-bottom: 1; }
    NewSessionScreen .error { color: $text-error; height: auto; }
    NewSessionScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="new_session.cancel")]

    def __init__(self, agents: list[Any], cwd: Path, catalog: Callable[[], Any] | None = None) -> None:
        super().__init__()
        self.agents = agents
        self.cwd = cwd
        self.catalog = catalog

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("New session", markup=False)
            options = [Option(self._label(spec), id=str(i)) for i, spec in enumerate(self.agents)]
            if self.catalog is not None:
                options.append(Option("More agents…  (the catalog: installed or not)", id=MORE_AGENTS))
            yield OptionList(*options)
            yield Label("Working directory", markup=False)
            yield Input(str(self.cwd), id="cwd")
            yield Static("", classes="error", markup=False)
            yield Static("↑↓ pick an agent · Tab to the directory · Enter starts · Esc cancels", classes="hint")

    @staticmethod
    def _label(spec: Any) -> str:
        return f"{spec.name}  —  {' '.join(spec.argv)}"[:120]

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._start()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._start()

    def _start(self) -> None:
        index = self.query_one(OptionList).highlighted or 0
        raw = self.query_one("#cwd", Input).value.strip() or str(self.cwd)
        path = Path(os.path.abspath(os.path.expanduser(raw)))
        if not path.is_dir():
            self.query_one(".error", Static).update(f"Not a directory: {path}")
            return
        if index >= len(self.agents) and self.catalog is not None:
            self._pick_from_catalog(path)
            return
        self.dismiss((self.agents[index], path))

    def _pick_from_catalog(self, path: Path) -> None:
        from .agent_picker import AgentPickerScreen

        def chosen(spec: Any) -> None:
            if spec is not None:
                self.dismiss((spec, path))

        assert self.catalog is not None
        self.app.push_screen(AgentPickerScreen(self.catalog()), callback=chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)
