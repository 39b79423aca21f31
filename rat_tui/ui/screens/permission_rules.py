"""Provides PermissionRulesScreen: the remembered "always" answers, to review, edit or revoke."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from ...state.permission_policy import PermissionPolicy, PermissionRule
from ..textual_ext.styled_once import StyledOnce
from ..widgets.keys_footer import KeysFooter

COLUMNS = ("agent", "kind", "pattern", "decision", "created")


class PermissionRulesScreen(StyledOnce, Screen[None]):
    """Rules answer requests silently, so the user needs one place to see and undo them."""

    DEFAULT_CSS = """
    PermissionRulesScreen > Vertical { height: 1fr; padding: 0 1; }
    PermissionRulesScreen #rules-title { text-style: bold; color: $accent; margin-bottom: 1; }
    PermissionRulesScreen #problems { color: $text-warning; }
    PermissionRulesScreen #empty { color: $text-muted; }
    PermissionRulesScreen DataTable { height: 1fr; }
    PermissionRulesScreen #pattern-editor { display: none; }
    PermissionRulesScreen #pattern-editor.-editing { display: block; }
    """

    BINDINGS = [
        Binding("d", "revoke", "Revoke", id="rules.revoke", tooltip="Forget the selected rule"),
        Binding("delete", "revoke", "Revoke", id="rules.revoke_delete", show=False),
        Binding("e", "edit", "Edit pattern", id="rules.edit", tooltip="Edit the selected rule's pattern (* matches anything)"),
        Binding("escape", "close", "Close", id="rules.close", tooltip="Close, or stop editing"),
    ]

    def __init__(self, policy: PermissionPolicy) -> None:
        super().__init__()
        self.policy = policy
        self._editing: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Permission rules", id="rules-title")
            if self.policy.problems:
                yield Static("\n".join(self.policy.problems), id="problems")
            yield Static("No rules yet: answer a request with an “always” option to add one.", id="empty")
            yield DataTable(cursor_type="row", zebra_stripes=True)
            yield Input(placeholder="pattern (* matches anything)", id="pattern-editor")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        self.refresh_rows()
        table.focus()

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    @property
    def editor(self) -> Input:
        return self.query_one("#pattern-editor", Input)

    def refresh_rows(self, select: str | None = None) -> None:
        """Rebuild the table from the policy (a handful of rows; no need to patch cells)."""
        table = self.table
        table.clear()
        for rule in self.policy.rules:
            table.add_row(*_cells(rule), key=rule.id)
        self.query_one("#empty").display = not self.policy.rules
        if select is not None:
            try:
                table.move_cursor(row=table.get_row_index(select))
            except Exception:  # noqa: BLE001 - the row may be gone; the cursor then stays put
                pass

    def selected_rule(self) -> PermissionRule | None:
        table = self.table
        if not self.policy.rules or table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        try:
            return self.policy.get(str(key))
        except KeyError:
            return None

    def action_revoke(self) -> None:
        rule = self.selected_rule()
        if rule is None:
            self.app.bell()
            return
        row = self.table.cursor_row
        self.policy.revoke(rule.id)
        self.refresh_rows()
        if self.policy.rules:
            self.table.move_cursor(row=min(row, len(self.policy.rules) - 1))
        self.notify(f"Revoked: {rule.decision} {rule.pattern or 'anything'} ({rule.agent})", timeout=3)

    def action_edit(self) -> None:
        rule = self.selected_rule()
        if rule is None:
            self.app.bell()
            return
        self._editing = rule.id
        editor = self.editor
        editor.value = rule.pattern or "*"
        editor.add_class("-editing")
        editor.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._editing is None:
            return
        value = event.value.strip()
        if not value:
            # An empty pattern would read as "anything": make the user say so with `*`.
            self.app.bell()
            self.notify("Empty pattern: use * to match anything.", severity="warning", timeout=4)
            return
        rule_id, self._editing = self._editing, None
        try:
            self.policy.update(rule_id, pattern=value)
        except KeyError:
            self.notify("That rule was revoked meanwhile.", severity="warning", timeout=4)
        self._stop_editing()
        self.refresh_rows(select=rule_id)

    def _stop_editing(self) -> None:
        self._editing = None
        self.editor.remove_class("-editing")
        self.table.focus()

    def action_close(self) -> None:
        if self._editing is not None:
            self._stop_editing()
        else:
            self.dismiss()


def _cells(rule: PermissionRule) -> tuple[str, ...]:
    return (
        rule.agent,
        rule.kind or "—",
        rule.pattern if rule.pattern is not None else "(anything)",
        rule.decision,
        rule.created.replace("T", " ").removesuffix("+00:00"),
    )
