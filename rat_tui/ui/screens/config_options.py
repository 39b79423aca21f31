"""Provides ConfigOptionsScreen (every session option the agent declares) and QuickPickScreen (one of them)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, OptionList, Static, Switch
from textual.widgets.option_list import Option

from ...session.agent_session import AgentSession
from ...session.controls import (
    Choice,
    category_choices,
    find_category,
    legacy_mode_choices,
    legacy_model_choices,
    option_choices,
    set_category,
    set_config_option,
)
from ...state.models import Change, FieldChanged
from .dialog import Dialog

# Store fields whose change redraws these screens.
WATCHED = {"config", "mode", "models", "session"}
CATEGORY_TITLES = {"mode": "Mode", "model": "Model", "thought_level": "Thought level", "speed": "Speed"}


def choice_prompt(choice: Choice, current: bool) -> Content:
    """One row: a mark on the current value, the name, then the description muted."""
    parts: list[Any] = [("● ", "$accent") if current else "  ", (choice.name, "bold" if current else "")]
    if choice.description:
        parts.append(("  " + choice.description, "$text-muted"))
    return Content.assemble(*parts)


def option_heading(option: dict[str, Any]) -> Content:
    """The option's name in bold, then its description muted, on one line."""
    name = str(option.get("name") or option.get("id"))
    description = option.get("description")
    parts: list[Any] = [(name, "bold")]
    if isinstance(description, str) and description:
        parts.append(("  " + description, "$text-muted"))
    return Content.assemble(*parts)


class ChoiceList(OptionList):
    """The values of one option, group headings shown (disabled rows), the current value highlighted.

    `key` says what it sets: "config:<configId>", "mode" or "model" (the legacy fields).
    """

    DEFAULT_CSS = """
    ChoiceList {
        height: auto;
        max-height: 10;
        margin-bottom: 1;
        padding: 0 1;
        border: none;
        border-left: tall $border-blurred;
        &:focus { border: none; border-left: tall $accent; }
        & > .option-list--option-disabled { color: $text-muted; text-style: bold; }
    }
    """
    BINDINGS = [
        Binding("up", "cursor_up", "Up", id="choice.up", show=False),
        Binding("down", "cursor_down", "Down", id="choice.down", show=False),
        Binding("enter", "select", "Choose", id="choice.choose", tooltip="Set the highlighted value"),
    ]

    def __init__(self, key: str, choices: list[Choice], current: Any, *, id: str | None = None) -> None:
        self.key = key
        self.values: list[str | None] = []  # per option index; None for a group heading
        self.current_index: int | None = None
        options: list[Option] = []
        group: str | None = None
        for choice in choices:
            if choice.group is not None and choice.group != group:
                options.append(Option(Content(choice.group), disabled=True))
                self.values.append(None)
            group = choice.group
            if choice.value == current:
                self.current_index = len(options)
            options.append(Option(choice_prompt(choice, choice.value == current)))
            self.values.append(choice.value)
        super().__init__(*options, id=id, classes="control")

    def on_mount(self) -> None:
        if self.current_index is not None:
            self.highlighted = self.current_index

    def value_at(self, index: int) -> str | None:
        return self.values[index] if 0 <= index < len(self.values) else None


class OptionSwitch(Switch):
    """A boolean config option: one row, the focus shown like a ChoiceList's."""

    DEFAULT_CSS = """
    OptionSwitch {
        border: none;
        border-left: tall $border-blurred;
        padding: 0 1;
        &:focus { border: none; border-left: tall $accent; }
    }
    """

    def __init__(self, key: str, value: bool, *, id: str | None = None) -> None:
        super().__init__(value, id=id, classes="control")
        self.key = key


class _ControlsScreen(Dialog[Any]):
    """Shared by both screens: follows the store, applies values in an app worker, shows errors."""

    def __init__(self, session: AgentSession) -> None:
        super().__init__()
        self.session = session
        self._unsubscribe = lambda: None
        self.busy = False

    def on_mount(self) -> None:
        self._unsubscribe = self.session.store.subscribe(self._on_changes)
        self._focus_first()

    def on_unmount(self) -> None:
        self._unsubscribe()

    def _on_changes(self, batch: list[Change]) -> None:
        if any(isinstance(c, FieldChanged) and c.name in WATCHED for c in batch):
            self.call_later(self.rebuild)

    async def rebuild(self) -> None:
        """Redraw from the store, keeping the focus on the control of the same option."""
        if not self.is_attached:
            return
        focused = getattr(self.focused, "key", None)
        message = self.query_one("#message", Static)
        text, classes = message.content, message.classes
        await self.recompose()
        self.query_one("#message", Static).update(text)
        self.query_one("#message", Static).set_classes(classes)
        for control in self.query(".control"):
            if getattr(control, "key", None) == focused:
                control.focus()
                return
        self._focus_first()

    def _focus_first(self) -> None:
        controls = self.query(".control")
        if controls:
            controls.first().focus()

    def say(self, text: str, error: bool = False) -> None:
        if self.is_attached:
            message = self.query_one("#message", Static)
            message.update(Content(text))
            message.set_class(error, "-error")

    def apply(self, key: str, value: str | bool, label: str) -> None:
        """Send the change in an app worker: closing the screen must not cancel a request in flight."""
        self.busy = True
        self.say(f"Setting {label}…")
        self.app.run_worker(self._apply(key, value, label), group="session-controls", exit_on_error=False)

    async def _apply(self, key: str, value: str | bool, label: str) -> None:
        try:
            if key.startswith("config:"):
                error = await set_config_option(self.session, key[len("config:"):], value)
            else:  # "mode", "model" (legacy or by category) or another category
                error = await set_category(self.session, key, str(value))
        finally:
            self.busy = False
        if error is not None:
            self.say(error, error=True)
            await self.rebuild()  # a switch the user flipped goes back to the agent's value
        else:
            self.say("")
            self.done(value)

    def done(self, value: str | bool) -> None:
        """After a successful change (QuickPickScreen closes)."""

    def action_close(self) -> None:
        self.dismiss(None)

    def action_move(self, step: int) -> None:
        """Up/down off a switch moves to the previous/next control (lists move their own cursor)."""
        if step > 0:
            self.focus_next()
        else:
            self.focus_previous()


class ConfigOptionsScreen(_ControlsScreen):
    """Every config option of the session in the agent's order; else the legacy modes and models.

    A select is a ChoiceList (Enter sets the highlighted value), a boolean a Switch (Enter/Space).
    The agent's answer carries the complete new option list, which the store takes; this screen
    redraws from the store, so options that appear or vanish after a change show at once.
    """

    DEFAULT_CSS = """
    ConfigOptionsScreen > #dialog {
        width: 90%;
        max-width: 90;
        height: auto;
        max-height: 95%;
        padding: 0 1;
        border: round $accent;
        background: $surface;
    }
    ConfigOptionsScreen #title { text-style: bold; color: $accent; margin-bottom: 1; }
    ConfigOptionsScreen #controls { height: auto; max-height: 1fr; }
    ConfigOptionsScreen #controls > .name { text-wrap: nowrap; text-overflow: ellipsis; }
    ConfigOptionsScreen .boolean { height: auto; margin-bottom: 1; }
    ConfigOptionsScreen .boolean > .name { width: 1fr; padding-left: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    ConfigOptionsScreen .unsupported { color: $text-muted; margin-bottom: 1; }
    ConfigOptionsScreen #empty { color: $text-muted; margin: 1 0; }
    ConfigOptionsScreen #message { color: $text-muted; height: auto; }
    ConfigOptionsScreen #message.-error { color: $text-error; }
    ConfigOptionsScreen #hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", id="config_options.close", tooltip="Close the session options"),
        Binding("up", "move(-1)", "Up", id="config_options.up", show=False),
        Binding("down", "move(1)", "Down", id="config_options.down", show=False),
    ]

    def compose(self) -> ComposeResult:
        state = self.session.state
        with Vertical(id="dialog"):
            yield Label(Content(f"Session options · {state.agent_name}"), id="title")
            with VerticalScroll(id="controls"):
                if state.config_options:
                    for index, option in enumerate(state.config_options):
                        yield from self._option(index, option)
                else:
                    yield from self._legacy()
            yield Static("", id="message")
            yield Static("↑↓ move · Enter choose · Space toggle · Tab next option · Esc close", id="hint")

    def _option(self, index: int, option: dict[str, Any]) -> ComposeResult:
        key = f"config:{option.get('id')}"
        heading = option_heading(option)
        if option.get("type") == "boolean":
            with Horizontal(classes="boolean"):
                yield OptionSwitch(key, option.get("currentValue") is True, id=f"option-{index}")
                yield Static(heading, classes="name")
            return
        yield Static(heading, classes="name")
        if option.get("type", "select") == "select":
            yield ChoiceList(key, option_choices(option), option.get("currentValue"), id=f"option-{index}")
        else:  # a newer option type: say so rather than guess how to set it
            yield Static(Content(f"({option.get('type')} options are not supported yet)"), classes="unsupported")

    def _legacy(self) -> ComposeResult:
        state = self.session.state
        modes = legacy_mode_choices(state)
        models = legacy_model_choices(state)
        if modes:
            yield Static(Content.styled("Mode", "bold"), classes="name")
            yield ChoiceList("mode", modes, state.current_mode_id, id="legacy-mode")
        if models:
            yield Static(Content.styled("Model", "bold"), classes="name")
            current = state.models.get("currentModelId") if isinstance(state.models, dict) else None
            yield ChoiceList("model", models, current, id="legacy-model")
        if not modes and not models:
            yield Static("This agent declares no session options.", id="empty")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        control = event.option_list
        if not isinstance(control, ChoiceList):
            return
        value = control.value_at(event.option_index)
        if value is None or event.option_index == control.current_index:
            return
        self.apply(control.key, value, self._label(control.key))

    def on_switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        switch = event.switch
        if not isinstance(switch, OptionSwitch):
            return
        option = self._config(switch.key)
        if option is None or (option.get("currentValue") is True) == event.value:
            return  # a redraw set it to the agent's value: nothing to send
        self.apply(switch.key, event.value, self._label(switch.key))

    def _config(self, key: str) -> dict[str, Any] | None:
        config_id = key[len("config:"):]
        return next((o for o in self.session.state.config_options if str(o.get("id")) == config_id), None)

    def _label(self, key: str) -> str:
        option = self._config(key) if key.startswith("config:") else None
        return str(option.get("name") or option.get("id")) if option else CATEGORY_TITLES.get(key, key)


class QuickPickScreen(_ControlsScreen):
    """One category ("model", "mode", "thought_level", ...): pick a value; dismisses with it once the agent took it.

    Uses the config option of that category, else the legacy modes or models. Escape dismisses with None.
    """

    DEFAULT_CSS = """
    QuickPickScreen > #dialog {
        width: 80%;
        max-width: 80;
        height: auto;
        max-height: 90%;
        padding: 0 1;
        border: round $accent;
        background: $surface;
    }
    QuickPickScreen #title { text-style: bold; color: $accent; margin-bottom: 1; }
    QuickPickScreen ChoiceList { max-height: 20; margin-bottom: 0; }
    QuickPickScreen #empty { color: $text-muted; }
    QuickPickScreen #message { color: $text-muted; height: auto; }
    QuickPickScreen #message.-error { color: $text-error; }
    QuickPickScreen #hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", id="quick_pick.close", tooltip="Close without changing anything"),
    ]

    def __init__(self, session: AgentSession, category: str) -> None:
        super().__init__(session)
        self.category = category

    def compose(self) -> ComposeResult:
        state = self.session.state
        option = find_category(state, self.category)
        title = str(option.get("name") or "") if option else ""
        title = title or CATEGORY_TITLES.get(self.category, self.category)
        choices, current = category_choices(state, self.category)
        with Vertical(id="dialog"):
            yield Label(Content(title), id="title")
            if choices:
                yield ChoiceList(self.category, choices, current, id="choices")
            else:
                yield Static(Content(f"This agent offers no {title.lower()} choice."), id="empty")
            yield Static("", id="message")
            yield Static("↑↓ move · Enter choose · Esc close", id="hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        control = event.option_list
        if not isinstance(control, ChoiceList) or self.busy:
            return
        value = control.value_at(event.option_index)
        if value is None:
            return
        if event.option_index == control.current_index:
            self.dismiss(value)
            return
        self.apply(self.category, value, CATEGORY_TITLES.get(self.category, self.category))

    def done(self, value: str | bool) -> None:
        if self.is_attached and self.app.screen is self:
            self.dismiss(value)

