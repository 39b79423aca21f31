"""Provides NewSessionScreen: pick an agent and a working directory for a new tab."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option


class NewSessionScreen(ModalScreen[tuple[Any, Path] | None]):
    """Dismisses with (agent spec, absolute cwd), or None when cancelled."""

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

    def __init__(self, agents: list[Any], cwd: Path) -> None:
        super().__init__()
        self.agents = agents
        self.cwd = cwd

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("New session", markup=False)
            yield OptionList(*(Option(self._label(spec), id=str(i)) for i, spec in enumerate(self.agents)))
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
        self.dismiss((self.agents[index], path))

    def action_cancel(self) -> None:
        self.dismiss(None)
