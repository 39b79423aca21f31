"""Provides NewSessionScreen: pick an agent and a working directory for a new tab."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Checkbox, Input, Label, OptionList, Static
from textual.widgets.option_list import Option
from .dialog import Dialog


MORE_AGENTS = "more-agents"


class NewSession(NamedTuple):
    agent: Any
    """The agent spec to start."""
    cwd: Path
    """Absolute working directory typed (an existing directory)."""
    worktree: bool = False
    """Start in a fresh git worktree (a new branch) of the repository holding `cwd`."""


class WorktreeBox(Checkbox):
    """The worktree box: Space ticks it, Enter starts (as the hint says everywhere on this screen), not a toggle."""

    BINDINGS = [Binding("enter", "screen.start", "Start", show=False)]


class NewSessionScreen(Dialog[NewSession | None]):
    """Dismisses with a NewSession (agent spec, absolute cwd, in a worktree?), or None when cancelled.

    With `catalog` (a loader of agent_catalog.Catalog), a last row opens the agent picker; the agent
    chosen there starts in the directory typed here.
    """

    DEFAULT_CSS = """
    NewSessionScreen > Vertical {
        width: 80%; max-width: 100; height: auto; max-height: 80%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    NewSessionScreen OptionList { height: auto; max-height: 12; margin-bottom: 1; }
    NewSessionScreen .error { color: $text-error; height: auto; }
    NewSessionScreen .hint { color: $text-muted; }
    NewSessionScreen Checkbox { border: none; padding: 0; margin-top: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="new_session.cancel")]

    def __init__(self, agents: list[Any], cwd: Path, catalog: Callable[[], Any] | None = None,
                 worktree: bool = False) -> None:
        super().__init__()
        self.agents = agents
        self.cwd = cwd
        self.catalog = catalog
        self.worktree = worktree

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("New session", markup=False)
            options = [Option(self._label(spec), id=str(i)) for i, spec in enumerate(self.agents)]
            if self.catalog is not None:
                options.append(Option("More agents…  (the catalog: installed or not)", id=MORE_AGENTS))
            yield OptionList(*options)
            yield Label("Working directory", markup=False)
            yield Input(str(self.cwd), id="cwd")
            yield WorktreeBox("In a fresh git worktree (a new branch of the directory's repository)", self.worktree,
                              id="worktree")
            yield Static("", classes="error", markup=False)
            yield Static("↑↓ pick an agent · Tab to the directory and the worktree box (Space) · Enter starts · "
                         "Esc cancels", classes="hint")

    @staticmethod
    def _label(spec: Any) -> str:
        from ...agents.spec import spec_label

        return spec_label(spec)[:120]

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._start()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._start()

    def action_start(self) -> None:
        self._start()

    def _start(self) -> None:
        index = self.query_one(OptionList).highlighted or 0
        raw = self.query_one("#cwd", Input).value.strip() or str(self.cwd)
        path = Path(os.path.abspath(os.path.expanduser(raw)))
        if not path.is_dir():
            self.query_one(".error", Static).update(f"Not a directory: {path}")
            return
        worktree = self.query_one("#worktree", Checkbox).value
        if index >= len(self.agents) and self.catalog is not None:
            self._pick_from_catalog(path, worktree)
            return
        self.dismiss(NewSession(self.agents[index], path, worktree))

    def _pick_from_catalog(self, path: Path, worktree: bool) -> None:
        from .agent_picker import AgentPickerScreen

        def chosen(spec: Any) -> None:
            if spec is not None:
                self.dismiss(NewSession(spec, path, worktree))

        assert self.catalog is not None
        self.app.push_screen(AgentPickerScreen(self.catalog()), callback=chosen)

    def action_cancel(self) -> None:
        self.dismiss(None)
