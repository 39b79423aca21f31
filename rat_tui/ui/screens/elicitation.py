"""Provides ElicitationScreen (a form from the agent's requested schema) and UrlElicitationScreen (a link to visit).

Both dismiss with the answer to send (`{"action": "accept", "content": {...}}`, `{"action": "decline"}`,
`{"action": "cancel"}`) or None, which the broker answers `cancel`. Keyboard only: Tab moves between
fields, Ctrl+S accepts (as does Enter on the Accept button), Esc cancels.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Select, SelectionList, Static

from ...session.elicitation_broker import Elicitation
from ...session.elicitation_form import FormField, check, constraints, content_of
from .dialog import AgentDialog

FORMAT_PLACEHOLDERS = {"email": "name@example.com", "uri": "https://…", "date": "YYYY-MM-DD",
                       "date-time": "YYYY-MM-DDTHH:MM:SSZ"}


DIALOG_CSS = """
    & > #dialog {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 95%;
        padding: 0 1;
        border: round $accent;
        background: $surface;
    }
    & #header { color: $accent; text-style: bold; }
    & #message { margin: 1 0 0 0; }
    & .muted { color: $text-muted; }
    & #buttons { height: auto; margin-top: 1; }
    & #buttons Button { margin-right: 2; }
    & #hint { color: $text-muted; }
"""


FIELD_BATCH = 12  # fields on one page of a long form (a key typed re-lays out the page: keep it small)


_NO_VALUE = object()


def _initial(field: FormField) -> Any:
    """What a field's control holds when built, in the form `raw_values` reports it."""
    if field.kind == "boolean":
        return bool(field.default)
    if field.kind == "enum":
        return field.default
    if field.kind == "multi":
        return list(field.default or ())
    if field.kind in ("string", "number", "integer"):
        return "" if field.default is None else str(field.default)
    return _NO_VALUE  # unsupported: its control is a note, and has no value


class ElicitationScreen(AgentDialog[dict[str, Any] | None]):
    """A form: one row group per property, in the agent's order; messages appear under bad fields."""

    DEFAULT_CSS = """
    ElicitationScreen {
    """ + DIALOG_CSS + """
        & #fields { height: auto; margin-top: 1; }
        & .-last { margin-bottom: 1; }
        & .label { text-style: bold; }
        & .error { color: $text-error; text-style: bold; }
        & Input, & Select, & SelectionList { width: 1fr; }
        & Input { background: $boost; }
        & Checkbox { text-style: bold; }
        & SelectionList { height: auto; max-height: 8; }
        & #blocked { color: $text-warning; }
    }
    """

    BINDINGS = [
        Binding("ctrl+s", "accept", "Accept", id="elicitation.accept", tooltip="Send the form"),
        Binding("escape", "cancel", "Cancel", id="elicitation.cancel", tooltip="Close without answering (cancel)"),
        # Priority: the fields' scroll view would take PgDn first. Only on a form of several pages.
        Binding("pagedown", "page(1)", "Next fields", id="elicitation.next_page", show=False, priority=True,
                tooltip="The next page of fields (a long form is shown FIELD_BATCH fields at a time)"),
        Binding("pageup", "page(-1)", "Previous fields", id="elicitation.previous_page", show=False, priority=True,
                tooltip="The previous page of fields"),
    ]

    def __init__(self, question: Elicitation) -> None:
        super().__init__()
        assert question.form is not None
        self.question = question
        self.form = question.form
        self._tried = False
        # A long form is shown a page of FIELD_BATCH fields at a time (1,000 fields mounted at once took
        # minutes); what the fields off the page hold is kept here, by field index.
        self._page = 0
        self._values: dict[int, Any] = {}
        self._problems: dict[str, str] = {}
        # The page's fields are laid out flat in #fields, without a container each, and a field's message is
        # mounted the first time it has one: fewer widgets to mount, style and lay out as the dialog opens.
        # Per field of the page: its last widget but the message, and its message.
        self._last: dict[int, Widget] = {}
        self._error_widgets: dict[int, Static] = {}

    def compose(self) -> ComposeResult:
        form = self.form
        with Vertical(id="dialog"):
            yield Static(Text(f"? {self.question.agent_name} asks for input"), id="header")
            if self.question.tool_title:
                yield Static(Text(f"for the tool call: {self.question.tool_title}"), classes="muted")
            if form.message:
                yield Static(Text(form.message), id="message")
            if form.title or form.description:
                yield Static(Text("\n".join(t for t in (form.title, form.description) if t)), classes="muted")
            with VerticalScroll(id="fields", can_focus=False):
                yield from self._page_groups()
            pages = Static(self._pages_text(), id="pages", classes="muted")
            pages.display = len(form.fields) > FIELD_BATCH
            yield pages
            if form.blocked_by:
                names = ", ".join(f.title for f in form.blocked_by)
                yield Static(Text(f"This form needs {names}, which rat-tui cannot show: you can only decline or cancel."),
                             id="blocked")
            with Horizontal(id="buttons"):
                yield Button("Accept", id="accept", variant="primary", compact=True, disabled=bool(form.blocked_by))
                yield Button("Decline", id="decline", variant="error", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
            required = " · * required" if any(f.required for f in form.fields) else ""
            yield Static(f"Tab next field · Ctrl+S accept · Esc cancel{required}", id="hint")

    @property
    def _shown(self) -> range:
        """Indexes of the fields on the current page."""
        return range(self._page * FIELD_BATCH, min(len(self.form.fields), (self._page + 1) * FIELD_BATCH))

    def _page_groups(self) -> list[Widget]:
        self._last, self._error_widgets = {}, {}
        widgets: list[Widget] = []
        for index in self._shown:
            widgets.extend(self._field_group(index, self.form.fields[index]))
        return widgets

    def _pages_text(self) -> str:
        shown, total = self._shown, len(self.form.fields)
        return f"Fields {shown.start + 1}–{shown.stop} of {total} · PgDn/PgUp for the others"

    def _field_group(self, index: int, field: FormField) -> list[Widget]:
        """One field's widgets: its label and description, its control (class `field`), its constraints, and
        its message once it has one (`_show_error`); the last of them keeps a line free under the field."""
        children: list[Widget] = []
        if field.kind != "boolean":  # a checkbox carries its own label
            children.append(Static(Text(field.title + (" *" if field.required else "")), classes="label"))
        if field.description:
            children.append(Static(Text(field.description), classes="muted"))
        control = self._control(index, field)
        control.add_class("field")
        children.append(control)
        hint = constraints(field)
        if hint:
            children.append(Static(Text(hint), classes="muted"))
        self._last[index] = children[-1]  # (the line under the field goes under its message when it has one)
        problem = self._problems.get(field.name) if self._tried else None
        if problem:
            self._error_widgets[index] = self._error(index, problem)
            children.append(self._error_widgets[index])
        children[-1].add_class("-last")
        return children

    async def show_page(self, page: int, focus: int | None = None) -> None:
        """Swap the fields on screen for another page's, keeping what the user typed in the ones leaving."""
        page = max(0, min(page, (len(self.form.fields) - 1) // FIELD_BATCH))
        if page != self._page:
            for index in self._shown:
                field = self.form.fields[index]
                value = self._value_of(field, self.query_one(f"#input-{index}"))
                if value is not _NO_VALUE:
                    self._values[index] = value
            self._page = page
            fields = self.query_one("#fields", VerticalScroll)
            await fields.remove_children()
            await fields.mount_all(self._page_groups())
            fields.scroll_home(animate=False)
            self.query_one("#pages", Static).update(self._pages_text())
        target = focus if focus is not None else self._shown.start
        control = self.query_one(f"#input-{target}")
        if control.focusable:
            control.focus()
        control.scroll_visible(animate=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "page":
            return len(self.form.fields) > FIELD_BATCH  # else PgDn/PgUp scroll as usual
        return True

    async def action_page(self, step: int) -> None:
        await self.show_page(self._page + step)

    def _control(self, index: int, field: FormField) -> Widget:
        control_id = f"input-{index}"
        value = self._values.get(index, _initial(field))  # what it held when its page was left, or its default
        if field.kind == "boolean":
            return Checkbox(Content(field.title), value=bool(value), id=control_id, compact=True)
        if field.kind == "enum":
            options = [(Content(c.title + (f" — {c.description}" if c.description else "")), c.value) for c in field.choices]
            return Select(options, value=value if value is not None else Select.NULL,
                          allow_blank=field.default is None, prompt="Choose…", id=control_id, compact=True)
        if field.kind == "multi":
            chosen = set(value or ())
            return SelectionList(*((Content(c.title), c.value, c.value in chosen) for c in field.choices), id=control_id,
                                 compact=True)
        if field.kind in ("string", "number", "integer"):
            default = value
            placeholder = FORMAT_PLACEHOLDERS.get(field.format or "", "") if field.kind == "string" else field.kind
            return Input(default, placeholder=placeholder, id=control_id, compact=True, select_on_focus=False)
        return Static(Text(f"(a field of type {field.raw_type!r}, which rat-tui cannot show; it is left out)"),
                      classes="muted", id=control_id)

    def on_mount(self) -> None:
        self._focus_first()
        self.call_after_refresh(self._fit)

    def _focus_first(self, tries: int = 20) -> None:
        """The first field (else Accept, or Decline when the form cannot be filled) takes the focus.

        Under load the dialog's own children could still be mounting when the screen's Mount came (a
        1,000-field form in the stress bench: `#accept` not there yet, and the app stopped): then it
        tries again after the next refresh.
        """
        controls = [w for w in self.query("#fields *") if w.id and w.id.startswith("input-") and w.focusable]
        target = controls[0] if controls else next(
            iter(self.query("#accept" if not self.form.blocked_by else "#decline")), None)
        if target is not None:
            target.focus()
        elif tries:
            self.call_after_refresh(self._focus_first, tries - 1)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Give the fields what the terminal leaves once the message and buttons are shown, so the
        buttons never fall off a short terminal (CSS cannot say "the rest of an auto-height dialog")."""
        fields = next(iter(self.query("#fields").results(VerticalScroll)), None)
        if fields is None:  # still mounting (see _focus_first)
            self.call_after_refresh(self._fit)
            return
        others = sum(w.outer_size.height + w.styles.margin.top + w.styles.margin.bottom
                     for w in self.query_one("#dialog").children if w is not fields and w.display)
        room = int(self.size.height * 0.95) - 2 - others - 1  # border, the fields' top margin
        fields.styles.max_height = max(3, room)

    # -- values and messages --------------------------------------------------------------------

    def raw_values(self) -> dict[str, Any]:
        """What each control holds, by field name, in the form `check` reads (a field not built yet
        holds what its control would start with)."""
        values: dict[str, Any] = {}
        shown = self._shown
        for index, field in enumerate(self.form.fields):
            if index in shown:
                value = self._value_of(field, self.query_one(f"#input-{index}"))
            else:
                value = self._values.get(index, _initial(field))
            if value is not _NO_VALUE:
                values[field.name] = value
        return values

    def _value_of(self, field: FormField, control: Widget) -> Any:
        if isinstance(control, (Input, Checkbox)):
            return control.value
        if isinstance(control, Select):
            return None if control.value is Select.NULL else control.value
        if isinstance(control, SelectionList):
            return list(control.selected)
        return _NO_VALUE

    @staticmethod
    def _error(index: int, message: str) -> Static:
        return Static(Text(message), id=f"error-{index}", classes="error")

    def _show_error(self, index: int, message: str | None) -> None:
        if index not in self._shown:
            return
        error = self._error_widgets.get(index)
        if error is None:
            if not message:
                return
            error = self._error_widgets[index] = self._error(index, message)
            self.query_one("#fields", VerticalScroll).mount(error, after=self._last[index])
        else:
            error.update(Text(message or ""))
        error.display = bool(message)
        self._last[index].set_class(not message, "-last")
        error.set_class(bool(message), "-last")

    @property
    def errors(self) -> dict[str, str]:
        """The messages now shown, by field name (for tests and the log)."""
        return {self.form.fields[index].name: str(error.render())
                for index, error in self._error_widgets.items() if error.display and index in self._shown}

    def _recheck(self, control: Widget | None) -> None:
        """After a first Accept, a field's message follows its value as the user fixes it."""
        if not self._tried or control is None or not (control.id or "").startswith("input-"):
            return
        index = int((control.id or "").split("-", 1)[1])
        field = self.form.fields[index]
        value = self._value_of(field, control)  # this field only: a form may have 1,000
        _, problem = check(field, None if value is _NO_VALUE else value)
        self._show_error(index, problem)

    @on(Input.Changed)
    @on(Checkbox.Changed)
    @on(Select.Changed)
    @on(SelectionList.SelectedChanged)
    def _changed(self, event: Any) -> None:
        self._recheck(getattr(event, "control", None))

    @on(Input.Submitted)
    def _next_field(self, event: Input.Submitted) -> None:
        event.stop()
        self.focus_next()

    # -- answering ------------------------------------------------------------------------------

    async def action_accept(self) -> None:
        if self.form.blocked_by:
            self.app.bell()
            return
        self._tried = True
        content, problems = content_of(self.form, self.raw_values())
        self._problems = problems
        first = next((i for i, f in enumerate(self.form.fields) if f.name in problems), None)
        if first is not None and first not in self._shown:
            await self.show_page(first // FIELD_BATCH, focus=first)  # the first bad field must be on screen
        for index in self._shown:
            self._show_error(index, problems.get(self.form.fields[index].name))
        if first is not None:
            self.app.bell()
            control = self.query_one(f"#input-{first}")
            if control.focusable:
                control.focus()
            control.scroll_visible()
            return
        self.dismiss({"action": "accept", "content": content})

    def action_cancel(self) -> None:
        self.dismiss({"action": "cancel"})

    @on(Button.Pressed)
    async def _button(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "accept":
            await self.action_accept()
        elif event.button.id == "decline":
            self.dismiss({"action": "decline"})
        else:
            self.action_cancel()


class UrlElicitationScreen(AgentDialog[dict[str, Any] | None]):
    """A link the agent wants the user to visit; stays open until the agent completes it or the user answers."""

    DEFAULT_CSS = """
    UrlElicitationScreen {
    """ + DIALOG_CSS + """
        & #url { margin-top: 1; padding: 0 1; background: $boost; text-style: bold; }
        & #host { color: $text-warning; }
        & #waiting { margin-top: 1; color: $text-muted; }
    }
    """

    BINDINGS = [
        Binding("o", "open", "Open link", id="elicitation.open_url", tooltip="Open the link in the web browser"),
        Binding("c", "copy", "Copy link", id="elicitation.copy_url", tooltip="Copy the link to the clipboard"),
        Binding("d", "done", "Done", id="elicitation.url_done", tooltip="Tell the agent you have finished"),
        Binding("n", "decline", "Decline", id="elicitation.url_decline", tooltip="Decline the request"),
        Binding("escape", "cancel", "Cancel", id="elicitation.url_cancel", tooltip="Close without answering (cancel)"),
    ]

    def __init__(self, question: Elicitation) -> None:
        super().__init__()
        self.question = question
        self.url = question.url

    @property
    def host(self) -> str:
        parts = urlparse(self.url)
        return parts.hostname or ""

    @property
    def openable(self) -> bool:
        return urlparse(self.url).scheme in ("http", "https") and bool(self.host)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text(f"↗ {self.question.agent_name} asks you to visit a link"), id="header")
            if self.question.tool_title:
                yield Static(Text(f"for the tool call: {self.question.tool_title}"), classes="muted")
            if self.question.message:
                yield Static(Text(self.question.message), id="message")
            yield Static(Text(self.url), id="url")
            if self.openable:
                yield Static(Text(f"Opens {self.host} — check that you trust it."), id="host")
            else:
                yield Static(Text("Not a web link: rat-tui will not open it, but you can copy it."), id="host")
            yield Static("Waiting for the agent to confirm that you are done…", id="waiting")
            with Horizontal(id="buttons"):
                yield Button("Open link", id="open", variant="primary", compact=True, disabled=not self.openable)
                yield Button("Copy link", id="copy", compact=True)
                yield Button("Done", id="done", compact=True)
                yield Button("Decline", id="decline", variant="error", compact=True)
            yield Static("o open · c copy · d done · n decline · Esc cancel", id="hint")

    def on_mount(self) -> None:
        self.query_one("#open" if self.openable else "#copy", Button).focus()

    def action_open(self) -> None:
        if not self.openable:
            self.notify("rat-tui opens only http and https links; copy this one instead.", severity="warning")
            return
        self.app.open_url(self.url)
        self.query_one("#waiting", Static).update("Opened in your browser. Waiting for the agent to confirm…")

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.url)
        self.notify("Link copied.", timeout=2)

    def action_done(self) -> None:
        self.dismiss({"action": "accept"})

    def action_decline(self) -> None:
        self.dismiss({"action": "decline"})

    def action_cancel(self) -> None:
        self.dismiss({"action": "cancel"})

    @on(Button.Pressed)
    def _button(self, event: Button.Pressed) -> None:
        event.stop()
        {"open": self.action_open, "copy": self.action_copy, "done": self.action_done,
         "decline": self.action_decline}.get(event.button.id or "", self.action_cancel)()
