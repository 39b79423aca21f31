"""Provides TrafficScreen: the session's JSON-RPC messages, live and filterable, with the JSON of one."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from rich.text import Text
from textual import getters
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.containers import VerticalScroll
from textual.highlight import highlight
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from ...protocol.traffic import TrafficLog, TrafficRecord
from ...protocol.sanitize import clean
from ..widgets.keys_footer import KeysFooter
from ..textual_ext.styled_once import StyledOnce

COLUMNS = (("#", "seq"), ("time", "time"), ("", "dir"), ("method", "method"), ("id", "id"),
           ("bytes", "bytes"), ("latency", "latency"))  # fmt: skip
ARROWS = {"out": "→", "in": "←"}
# A flood of chunks arrives far faster than anyone reads: rows are added this often, in one batch.
FLUSH_SECONDS = 0.1
# Strings in the JSON pane are cut shorter than in --rpc-log: it is read on a screen.
PANE_MAX_STRING = 400
PANE_MAX_LINES = 2_000
# The table keeps at most the ring's records; it trims only past this slack, to rebuild rarely.
TRIM_SLACK = 1.25


def format_time(timestamp: float) -> str:
    """Local wall-clock time to the millisecond, as in the --rpc-log file (which has epoch seconds)."""
    return datetime.fromtimestamp(timestamp).strftime("%H:%M:%S.%f")[:-3]


def matches(record: TrafficRecord, terms: list[str]) -> bool:
    """Every term must match: "in"/"out" the direction, anything else a substring of the method, the id or an
    update's kind (`plan` finds the plan updates)."""
    for term in terms:
        if term in ARROWS:
            if record.direction != term:
                return False
        elif (term not in (record.method or "").lower() and term not in ("" if record.id is None else str(record.id)).lower()
              and term not in (record.update_kind or "")):
            return False
    return True


def pretty_json(record: TrafficRecord) -> str:
    """The redacted message, indented; a malformed line is shown as the text it was."""
    message = record.redacted(max_string=PANE_MAX_STRING)
    if not isinstance(message, (dict, list)):
        return clean(str(message))
    lines = clean(json.dumps(message, indent=2, ensure_ascii=False)).splitlines()  # C1 and DEL are not escaped
    if len(lines) > PANE_MAX_LINES:
        lines = [*lines[:PANE_MAX_LINES], f"… {len(lines) - PANE_MAX_LINES} more lines"]
    return "\n".join(lines)


class TrafficScreen(StyledOnce, Screen[None]):
    """Lists the messages of one connection as they pass; Enter shows the selected one's JSON."""

    DEFAULT_CSS = """
    TrafficScreen #traffic-status { background: $panel; color: $text; padding: 0 1; }
    TrafficScreen #traffic-filter { border: none; height: 1; padding: 0 1; }
    TrafficScreen #traffic-filter:focus { background: $boost; }
    TrafficScreen #traffic-table { height: 1fr; }
    TrafficScreen #traffic-detail { height: 2fr; border-top: solid $primary-muted; }
    TrafficScreen #traffic-json { padding: 0 1; }
    TrafficScreen #traffic-json.-empty { color: $text-muted; }
    """
    BINDINGS = [
        Binding("slash", "focus_filter", "Filter", id="traffic.filter", tooltip="Filter by method, id, in or out"),
        Binding("f", "toggle_follow", "Follow", id="traffic.follow", tooltip="Keep the newest message in view"),
        Binding("escape", "back", "Clear/close", id="traffic.close",
                tooltip="Clear the filter, or close the inspector"),
    ]

    table = getters.query_one("#traffic-table", DataTable)
    filter_input = getters.query_one("#traffic-filter", Input)
    status = getters.query_one("#traffic-status", Static)
    detail = getters.query_one("#traffic-json", Static)

    def __init__(self, traffic: TrafficLog, *, name: str | None = None, id: str | None = None) -> None:
        super().__init__(name=name, id=id)
        self.traffic = traffic
        self.follow = True
        self.selected: TrafficRecord | None = None
        self._rows: list[TrafficRecord] = []  # what the table shows, row for row
        self._pending: list[TrafficRecord] = []
        self._flush_scheduled = False
        self._terms: list[str] = []
        self._follow_row: int | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="traffic-status", markup=False)
        yield Input(placeholder="/ filter: method, id, in, out", id="traffic-filter")
        yield DataTable(id="traffic-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="traffic-detail"):
            yield Static("Enter on a message shows its JSON here (secrets redacted).", id="traffic-json",
                         classes="-empty", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        for label, key in COLUMNS:
            self.table.add_column(label, key=key)
        self._unsubscribe = self.traffic.subscribe(self._heard)
        self._rebuild()
        self.table.focus()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- live rows ------------------------------------------------------------------------------

    def _heard(self, record: TrafficRecord) -> None:
        """Called by the TrafficLog for every message: queue it; the table catches up in batches."""
        self._pending.append(record)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.set_timer(FLUSH_SECONDS, self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        pending, self._pending = self._pending, []
        shown = [record for record in pending if matches(record, self._terms)]
        if len(self._rows) + len(shown) > self.traffic.limit * TRIM_SLACK:
            self._rebuild()
            return
        table = self.table
        for record in shown:
            table.add_row(*self._cells(record), key=str(record.seq))
        self._rows.extend(shown)
        self._show_status()
        if shown and self.follow:
            self._go_to_end()

    def _rebuild(self) -> None:
        """Refill the table from the ring (on mount, a new filter, or when it outgrew the ring)."""
        self._pending.clear()
        table = self.table
        keep = self.selected.seq if self.selected is not None else None
        table.clear()
        self._rows = [record for record in self.traffic.records if matches(record, self._terms)]
        for record in self._rows:
            table.add_row(*self._cells(record), key=str(record.seq))
        self._show_status()
        if self.follow:
            self._go_to_end()
        elif keep is not None and any(record.seq == keep for record in self._rows):
            table.move_cursor(row=table.get_row_index(str(keep)), animate=False)

    def _go_to_end(self) -> None:
        if self._rows:
            self._follow_row = len(self._rows) - 1
            self.table.move_cursor(row=self._follow_row, animate=False)

    def _cells(self, record: TrafficRecord) -> tuple[Any, ...]:
        variables = self.app.theme_variables
        arrow = Text(ARROWS.get(record.direction, "?"), style=variables.get("text-primary" if record.direction == "out" else "text-accent", ""))
        method = Text(clean(record.method or ("(malformed)" if record.is_malformed else "?")))
        if record.is_error:
            method.stylize(variables.get("text-error", ""))
        latency = Text(f"{record.latency_ms:,.1f} ms" if record.latency_ms is not None else "", justify="right")
        return (
            Text(str(record.seq), justify="right"),
            format_time(record.time),
            arrow,
            method,
            "" if record.id is None else clean(str(record.id)),
            Text(f"{record.size:,}", justify="right"),
            latency,
        )

    def _show_status(self) -> None:
        held = len(self.traffic)
        parts = [f"{len(self._rows):,} shown" if self._terms else f"{held:,} messages"]
        if self._terms:
            parts.append(f"of {held:,}")
        if self.traffic.dropped:
            parts.append(f"· {self.traffic.dropped:,} older dropped")
        parts.append("· following" if self.follow else "· paused (f follows)")
        version = self.traffic.protocol_version  # what `initialize` settled; None before it answered
        self.status.update(("Traffic  " if version is None else f"Traffic (ACP v{version})  ") + " ".join(parts))

    # -- events and actions ---------------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # The user moved off the newest row: stop dragging the cursor back down.
        if self.follow and event.cursor_row != self._follow_row and event.cursor_row < len(self._rows) - 1:
            self.follow = False
            self._show_status()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self._rows):
            self.show_record(self._rows[event.cursor_row])

    def show_record(self, record: TrafficRecord) -> None:
        self.selected = record
        direction = "agent → client" if record.direction == "in" else "client → agent"
        latency = f" · {record.latency_ms:,.1f} ms" if record.latency_ms is not None else ""
        title = f"#{record.seq} {direction} · {record.method or '?'} · {record.size:,} bytes{latency}\n"
        body = pretty_json(record)
        language = "json" if body.startswith(("{", "[")) else "text"
        self.detail.remove_class("-empty")
        self.detail.update(Content.styled(title, "bold") + highlight(body, language=language))
        self.query_one("#traffic-detail", VerticalScroll).scroll_home(animate=False)

    def on_input_changed(self, event: Input.Changed) -> None:
        self._terms = event.value.lower().split()
        self._rebuild()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.table.focus()

    def action_focus_filter(self) -> None:
        self.filter_input.focus()

    def action_toggle_follow(self) -> None:
        self.follow = not self.follow
        if self.follow:
            self._go_to_end()
        self._show_status()

    def action_back(self) -> None:
        if self.filter_input.value:
            self.filter_input.value = ""
            self.table.focus()
        elif self.filter_input.has_focus:
            self.table.focus()
        else:
            self.dismiss(None)
