"""Provides BoardScreen: the fleet board, every session of every tab on one screen, live.

One row per session, subagent, open tool call and running terminal (session/fleet.py builds them): name,
agent, worktree branch, state (needs you · working · error · disconnected · idle, or stopped by you), what it
does now, for how long, usage and cost. Tabs that need you come first. Enter goes there, `a` opens the request
waiting there, `s` stops the row's work (the turn, the subagent, the tool call or the terminal).

It stays cheap however many sessions stream: it reads the sessions on a timer (REFRESH_SECONDS), never on
their chunks, compares the rows with the last refresh, and changes only the cells that differ; the table is
built again only when rows come, go or change places.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Static

from ...session import session_status, stopping
from ...session.fleet import (
    DISCONNECTED,
    ERROR_WORD,
    IDLE,
    NEEDS_YOU,
    STOPPED,
    WORKING_WORD,
    Row,
    Seat,
    board_rows,
    duration,
)
from ..textual_ext.styled_once import StyledOnce
from ..app_api import RatAppAPI, rat_app
from ..widgets.keys_footer import KeysFooter

log = logging.getLogger("rat.board")

REFRESH_SECONDS = 0.5
# `a` and `s` act only when typed on their own: no other printable key within this long before or after.
# A person typing a sentence with the board open (keys ~120 ms apart) never opens a request nor stops work
# by the letters of their words (README "Approvals only on purpose"); a deliberate key acts this much later.
TYPING_GAP = 0.5
# session/status is asked as the board opens, then this often: each check is a message in every journal.
STATUS_SECONDS = 30.0
# What matters most first: a narrow terminal scrolls the table sideways, the name and state stay in sight.
COLUMNS = (("name", "Name"), ("state", "State"), ("doing", "Doing now"), ("for", "For"), ("usage", "Usage"),
           ("agent", "Agent"), ("where", "Where"))
STATE_MARKS = {NEEDS_YOU: ("⚠", "warning"), WORKING_WORD: ("◐", "accent"), ERROR_WORD: ("✗", "error"),
               DISCONNECTED: ("✗", "error"), STOPPED: ("⏹", "text-muted"), IDLE: ("●", "text-muted")}
KIND_MARKS = {"session": "", "child": "⑂ ", "tool": "⚙ ", "terminal": "", "more": ""}


class BoardScreen(StyledOnce, Screen[None]):
    """The fleet board (F12): watch every agent at once, jump to one, answer it or stop its work."""

    DEFAULT_CSS = """
    BoardScreen > Vertical { height: 1fr; padding: 0 1; }
    BoardScreen #board-title { text-style: bold; color: $accent; }
    BoardScreen #board-hint { color: $text-muted; }
    BoardScreen #board-summary { margin-bottom: 1; }
    BoardScreen DataTable { height: 1fr; }
    """

    BINDINGS = [
        # (priority: ahead of the table's own Enter, so F1 and the footer name it as what it does)
        Binding("enter", "go", "Go there", id="board.go", priority=True,
                tooltip="Show the row's tab (its subagent, its card)"),
        Binding("a", "answer", "Answer", id="board.answer", tooltip="Open the request waiting there"),
        Binding("s", "stop", "Stop", id="board.stop",
                tooltip="Stop the row's work: the turn, the subagent, the tool call or the terminal"),
        Binding("escape", "close", "Close", id="board.close"),
    ]

    def __init__(self, seats: Any, clock: Any = time.monotonic) -> None:
        """`seats`: a callable giving the tabs as `Seat`s (read again at every refresh); `clock`: what the
        rows' durations are measured against (the states' own `time.monotonic` stamps)."""
        super().__init__()
        self.seats = seats
        self.clock = clock
        self.rows: list[Row] = []
        self.refreshes = 0  # (bench/ reads how many refreshes ran and what they cost)
        self.printables = 0  # printable keys typed on the board, and when the last one and the one before came
        self.printable_at = -1e9
        self.previous_printable_at = -1e9
        self.refresh_seconds = 0.0

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Fleet board", id="board-title")
            yield Static("↑↓ choose · Enter go there · a answer its request · s stop it · Esc close", id="board-hint")
            yield Static("", id="board-summary")
            yield DataTable(cursor_type="row", zebra_stripes=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.table
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.update_rows()
        table.focus()
        self.set_interval(REFRESH_SECONDS, self.update_rows)
        self.ask_status()
        self.set_interval(STATUS_SECONDS, self.ask_status)

    def ask_status(self) -> None:
        """`session/status` of every idle session whose agent offers it (session/session_status.py)."""
        for seat in self.seats():
            if seat.session.supports("status") and not seat.session.busy:
                self.run_worker(session_status.check(seat.session), group="session-status", exit_on_error=False)

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    # -- rows -------------------------------------------------------------------------------------

    def _cells(self, row: Row, now: float) -> tuple[Any, ...]:
        mark, variable = STATE_MARKS.get(row.state, ("?", "text-muted"))
        colour = self.app.theme_variables.get(variable, "")
        indent = "  " * row.depth
        name = Text(f"{indent}{KIND_MARKS.get(row.kind, '')}{row.name}",
                    style="bold" if row.kind == "session" else "")
        state = Text(f"{mark} {row.state}", style=colour)
        where = f"⎇ {row.where}" if row.where and row.kind == "session" else ""
        agent = row.agent if row.kind == "session" else ""
        return (name, state, row.doing, duration(row.since, now), row.usage, agent, where)

    def update_rows(self) -> None:
        """Read the sessions and change what differs since the last refresh."""
        began = time.perf_counter()
        try:
            rows = board_rows(list(self.seats()))
        except Exception:  # a tab closing as it is read: the next refresh reads it again
            log.exception("the board could not read the sessions")
            return
        now = self.clock()
        table = self.table
        old = self.rows
        if [row.key for row in rows] != [row.key for row in old]:
            cursor = old[table.cursor_row].key if old and 0 <= table.cursor_row < len(old) else None
            table.clear()
            for row in rows:
                table.add_row(*self._cells(row, now), key=row.key)
            keys = [row.key for row in rows]
            if cursor in keys:
                table.move_cursor(row=keys.index(cursor), animate=False)
        else:
            for before, row in zip(old, rows):
                cells = self._cells(row, now)
                if before != row:
                    for (column, _label), value in zip(COLUMNS, cells):
                        table.update_cell(row.key, column, value)
                elif row.since:  # only the time it has held its state moved on
                    table.update_cell(row.key, "for", cells[3])
        self.rows = rows
        self._summary(rows)
        self.refreshes += 1
        self.refresh_seconds += time.perf_counter() - began

    def _summary(self, rows: list[Row]) -> None:
        sessions = [row for row in rows if row.kind == "session"]
        counts: dict[str, int] = {}
        for row in sessions:
            counts[row.state] = counts.get(row.state, 0) + 1
        words = [f"{counts[state]} {state}" for state in (NEEDS_YOU, WORKING_WORD, ERROR_WORD, DISCONNECTED, STOPPED, IDLE)
                 if counts.get(state)]
        running = sum(1 for row in rows if row.kind in ("tool", "terminal") and row.state == WORKING_WORD)
        text = f"{len(sessions)} session{'s' if len(sessions) != 1 else ''}: " + (", ".join(words) or "none")
        if running:
            text += f" · {running} tool call{'s' if running != 1 else ''} and terminals running"
        self.query_one("#board-summary", Static).update(text)

    def selected(self) -> Row | None:
        index = self.table.cursor_row
        return self.rows[index] if self.rows and 0 <= index < len(self.rows) else None

    # -- actions ----------------------------------------------------------------------------------


    def action_close(self) -> None:
        self.dismiss(None)

    def action_go(self) -> None:
        row = self.selected()
        if row is None or row.target is None:
            self.app.bell()
            return
        seat: Seat = row.target[1]
        view = seat.view
        self.dismiss(None)
        app = rat_app(self)
        if app is not None and view is not None:
            app.tabs.show_view(view)
        kind = row.target[0]
        if kind == "child":
            from ..tabs.children_ui import open_child

            open_child(view, _top_card(view.session.state, row.target[2]))
        elif kind in ("tool", "terminal") and view is not None:
            session_id = row.target[3]
            if session_id is not None:  # a subagent's call: its session shows it
                from ...state import children as state_children
                from ..tabs.children_ui import open_child

                child = state_children.find(view.session.state, session_id)
                if child is not None:
                    open_child(view, _top_card(view.session.state, child))
                return
            key = row.target[2].key if kind == "tool" else _card_of_terminal(view.session.state, row.target[2])
            if key is not None:
                view.transcript.focus()
                view.transcript.put_cursor(key)

    def on_key(self, event: events.Key) -> None:
        """Note printable keys (before the bindings act on them): what tells a deliberate `a` or `s` from typing."""
        if event.is_printable:
            self.printables += 1
            self.previous_printable_at, self.printable_at = self.printable_at, event.time

    def _on_purpose(self, what: str, act: Any) -> None:
        """Run `act` once the key that asked for it proves deliberate: nothing printable typed just before it,
        nor within TYPING_GAP after it; otherwise it was part of typing, and nothing happens but a word."""
        if self.printable_at - self.previous_printable_at < TYPING_GAP:
            self._typing(what)
            return
        count = self.printables

        def settled() -> None:
            if self.printables != count:
                self._typing(what)
            elif self.is_current:
                act()

        self.set_timer(TYPING_GAP, settled)

    def _typing(self, what: str) -> None:
        self.app.bell()
        self.notify(f"That looked like typing: nothing {what}. Press the key on its own.", severity="warning",
                    timeout=4)

    def action_answer(self) -> None:
        row = self.selected()  # the row the key was pressed on, whatever the cursor does meanwhile
        self._on_purpose("opened", lambda: self._answer(row))

    def _answer(self, row: Row | None) -> None:
        if row is None or row.target is None:
            self.app.bell()
            return
        view = row.target[1].view
        app = rat_app(self)
        gate = app.request_gate if app is not None else None
        showing = gate.showing if gate is not None else None
        if showing is not None and showing.view is view:  # its dialog is open beneath the board
            self.dismiss(None)
            return
        if showing is not None:
            self.notify("Another request is open: answer it first (it is beneath the board).", timeout=4)
            return
        if gate is None or view is None or not gate.open_for(view):
            self.notify("Nothing there waits for an answer.", timeout=3)

    def action_stop(self) -> None:
        row = self.selected()
        self._on_purpose("stopped", lambda: self.run_worker(self._stop(row), group="board-stop", exit_on_error=False))

    async def _stop(self, row: Row | None) -> None:
        if row is None or row.target is None:
            self.app.bell()
            return
        kind, seat = row.target[0], row.target[1]
        session = seat.session
        try:
            if kind == "session":
                result = await stopping.stop_turn(session)
            elif kind == "child":
                result = await stopping.stop_child(session, row.target[2])
            elif kind == "tool":
                result = await stopping.stop_tool_call(session, row.target[2], row.target[3])
            else:
                result = await stopping.stop_terminal(session, row.target[2], row.target[3])
        except Exception as error:  # never a traceback: the board stays, the log has the details
            log.exception("stopping %s failed", row.key)
            self.notify(f"Could not stop it: {error}", severity="error", timeout=5)
            return
        log.info("board stop %s: %s", row.key, result.message)
        self.notify(result.message, severity="information" if result.ok else "warning", timeout=4)
        self.update_rows()


def _top_card(state: Any, child: Any) -> Any:
    """The card in the tab's own transcript holding `child` (itself, or the ancestor that spawned it)."""
    top = child
    while top.state.parent is not None and top.state.parent is not state and top.state.parent.owner is not None:
        top = top.state.parent.owner
    return top


def _card_of_terminal(state: Any, terminal_id: str) -> str | None:
    for call in state.tool_calls.values():
        if any(isinstance(item, dict) and item.get("terminalId") == terminal_id for item in call.content):
            return call.key
    return None


def seats_of(app: Any) -> list[Seat]:
    """The app's tabs as the board's seats: session, tab number, worktree branch, requests waiting."""
    if not isinstance(app, RatAppAPI):
        return []
    tabs, gate = app.tabs, app.request_gate
    seats = []
    for number, (pane, view) in enumerate(tabs.panes_and_views(), start=1):
        waiting = gate.waiting(view) + (gate.showing is not None and gate.showing.view is view) if gate else 0
        seats.append(Seat(view.session, number, tabs.branch_of(pane.id or ""), waiting, view))
    return seats
