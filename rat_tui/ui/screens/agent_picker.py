"""Provides AgentPickerScreen: every catalog agent and config profile, installed or not, and how to start it."""

from __future__ import annotations

import logging
import shutil
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from ...agents.catalog import Availability, Catalog, CatalogAgent, Which, check, spec_for
from .dialog import Dialog

log = logging.getLogger("rat.picker")


def agent_prompt(agent: CatalogAgent, availability: Availability) -> Content:
    """Three or four lines: mark, name, id and status; description; command line; install hint if missing."""
    mark = ("✓ ", "$text-success") if availability.status == "installed" else (
        ("↓ ", "$text-warning") if availability.runnable else ("✗ ", "$text-error"))
    source = "  [config]" if agent.source == "config" else ""
    parts: list[Any] = [mark, (agent.name, "bold"), (f"  {agent.id}{source}", "$text-muted"),
                        (f"  {availability.label}", "$text-muted")]
    if agent.description:
        parts.append(("\n  " + agent.description, ""))
    launch = availability.launch or (agent.launches[0] if agent.launches else None)
    if launch is not None:
        parts.append(("\n  $ " + launch.command_line, "$text-muted"))
    if not availability.runnable:
        parts.append(("\n  install: " + agent.install_hint, "$text-warning"))
    return Content.assemble(*parts)


class AgentPickerScreen(Dialog[Any]):
    """Dismisses with the AgentSpec to start (cli.AgentSpec), or None when closed.

    Enter on an agent that is not installed keeps the screen open and says what to run; `c`
    copies that install command to the clipboard.
    """

    DEFAULT_CSS = """
    AgentPickerScreen > Vertical {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    AgentPickerScreen OptionList { height: auto; max-height: 30; margin-bottom: 1; }
    AgentPickerScreen #message { height: auto; color: $text-warning; }
    AgentPickerScreen #problems { height: auto; color: $text-error; }
    AgentPickerScreen .hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", id="agent_picker.close"),
        Binding("c", "copy_install", "Copy install command", id="agent_picker.copy_install", show=False),
    ]

    def __init__(self, catalog: Catalog, which: Which = shutil.which) -> None:
        super().__init__()
        self.which = which
        self.catalog = catalog
        self.rows = [(agent, check(agent, which)) for agent in catalog.agents]

    def _title(self) -> str:
        installed = sum(1 for _, availability in self.rows if availability.runnable)
        return f"Agents — {installed} of {len(self.rows)} can start here · {self.catalog.source_note}"

    def _options(self) -> list[Option | None]:
        options: list[Option | None] = []
        for agent, availability in self.rows:
            if options:
                options.append(None)  # a separator line between agents
            options.append(Option(agent_prompt(agent, availability), id=agent.id))
        return options

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self._title(), markup=False, id="title")
            yield OptionList(*self._options(), id="agents")
            yield Static("", id="message", markup=False)
            if self.catalog.problems:
                yield Static("\n".join(self.catalog.problems), id="problems", markup=False)
            yield Static("↑↓ choose · Enter starts it in a new tab · c copies the install command · Esc closes",
                         classes="hint")

    def set_catalog(self, catalog: Catalog) -> None:
        """A newer catalog (the registry fetched meanwhile): the list is redrawn, the highlight kept."""
        if not self.is_attached:
            return
        options = self.query_one("#agents", OptionList)
        current = options.highlighted_option.id if options.highlighted_option is not None else None
        self.catalog = catalog
        self.rows = [(agent, check(agent, self.which)) for agent in catalog.agents]
        options.clear_options()
        options.add_options(self._options())
        ids = [agent.id for agent, _ in self.rows]
        options.highlighted = ids.index(current) * 2 if current in ids else (0 if ids else None)
        self.query_one("#title", Label).update(self._title())

    def on_mount(self) -> None:
        options = self.query_one("#agents", OptionList)
        if self.rows:
            options.highlighted = 0
        options.focus()

    def _current(self) -> tuple[CatalogAgent, Availability] | None:
        option = self.query_one("#agents", OptionList).highlighted_option
        return next((row for row in self.rows if option is not None and row[0].id == option.id), None)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        row = self._current()
        if row is None:
            return
        agent, availability = row
        spec = spec_for(agent, availability)
        if spec is None:
            message = f"{agent.name} is not installed. To install it: {agent.install_hint}"
            log.info("%s", message)
            self.query_one("#message", Static).update(message)
            return
        self.dismiss(spec)

    def action_copy_install(self) -> None:
        row = self._current()
        if row is None:
            return
        agent, _ = row
        if not agent.install:
            self.query_one("#message", Static).update(f"No install command is known for {agent.name}.")
            return
        self.app.copy_to_clipboard(agent.install)
        self.query_one("#message", Static).update(f"Copied: {agent.install}")

    def action_close(self) -> None:
        self.dismiss(None)
