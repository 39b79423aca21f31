"""Provides HistoryScreen (past sessions, searchable) and HistoryTranscriptScreen (one, read-only).

The transcript is rebuilt from the journal through the live reducer and shown in a SessionView on a
ReplaySession, so it looks exactly like the live session did. In the list, Alt+A archives the selected
session with its agent (session/archiving.py; an archived one is unarchived) and Alt+H shows archived ones. From there: export Markdown (e),
export the journal as a replayable JSONL file (j), or continue it with the agent (c).
"""

from __future__ import annotations

import logging
import os
import re
import time
from datetime import datetime
from pathlib import Path

from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from ... import paths
from ...history.journal import HistoryJournal, SessionInfo
from ...history.markdown import to_markdown
from ...history.rebuild import rebuild
from ...history.records import dump_recording
from ...session.archiving import archive_record, archiver, recorded_archive
from ...session.replay import ReplaySession
from ..tabs.view import SessionView
from ...protocol.sanitize import clean
from ..widgets.keys_footer import KeysFooter
from ..textual_ext.styled_once import StyledOnce
from ..app_api import RatAppAPI, rat_app

log = logging.getLogger("rat.history")

COLUMNS = (("when", "when"), ("agent", "agent"), ("directory", "cwd"), ("title / first prompt", "title"),
           ("messages", "messages"))  # fmt: skip
SEARCH_DELAY = 0.15  # seconds of quiet typing before the list is searched again


def when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def short_dir(path: str, width: int = 40) -> str:
    """The directory with ~ for home, cut at the front to `width` (its end says most)."""
    home = str(Path.home())
    path = "~" + path[len(home):] if path == home or path.startswith(home + os.sep) else path
    return path if len(path) <= width else "…" + path[-(width - 1):]


def export_dir(app: object) -> Path:
    configured = app.config.history.export_dir if isinstance(app, RatAppAPI) else None
    return Path(configured).expanduser() if configured else paths.data_dir() / "exports"


def export_name(info: SessionInfo, suffix: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(info.created))
    agent = re.sub(r"[^A-Za-z0-9_.-]+", "-", info.agent).strip("-") or "agent"
    return f"rat-{stamp}-{agent}-{info.id}{suffix}"


class HistoryScreen(StyledOnce, Screen[None]):
    """Past sessions, newest first; type to search (text, `agent:`, `cwd:`, `date:`), Enter opens one."""

    DEFAULT_CSS = """
    HistoryScreen #history-status { background: $panel; color: $text; padding: 0 1; }
    HistoryScreen #history-search { border: none; height: 1; padding: 0 1; }
    HistoryScreen #history-search:focus { background: $boost; }
    HistoryScreen #history-table { height: 1fr; }
    """
    AUTO_FOCUS = "#history-search"
    BINDINGS = [
        Binding("escape", "back", "Close", id="history.close", tooltip="Clear the search, or close the history"),
        Binding("slash", "focus_search", "Search", id="history.search", show=False,
                tooltip="Search by text, agent:NAME, cwd:DIR, date:YYYY-MM-DD"),
        Binding("delete", "delete", "Delete", id="history.delete", tooltip="Delete the selected session"),
        # Alt: printable keys type into the search box.
        Binding("alt+a", "archive", "Archive", id="history.archive",
                tooltip="Archive the selected session with its agent (session/archive), or unarchive it"),
        Binding("alt+h", "toggle_archived", "Show archived", id="history.toggle_archived",
                tooltip="Show or hide the sessions archived with their agent"),
        # From the search box too (the table has its own): the selection moves while the focus stays where
        # typing refines the search, so Enter opens the session ↓ chose, not the top one.
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("pagedown", "move(10)", "Page down", show=False),
        Binding("pageup", "move(-10)", "Page up", show=False),
    ]

    table = getters.query_one("#history-table", DataTable)
    search = getters.query_one("#history-search", Input)
    status = getters.query_one("#history-status", Static)

    def __init__(self, journal: HistoryJournal) -> None:
        super().__init__()
        self.journal = journal
        self.rows: list[SessionInfo] = []
        self.show_archived = False
        self._archivable: dict[int, bool] = {}  # record id: whether its agent archives (asked once per record)
        self._timer = None

    def compose(self) -> ComposeResult:
        yield Static("", id="history-status", markup=False)
        yield Input(placeholder="search: words in the messages, agent:NAME, cwd:DIR, date:2026-11", id="history-search")
        yield DataTable(id="history-table", cursor_type="row", zebra_stripes=True)
        yield KeysFooter()

    def on_mount(self) -> None:
        for label, key in COLUMNS:
            self.table.add_column(label, key=key)
        self.refresh_rows()
        self.search.focus()

    def refresh_rows(self) -> None:
        self.journal.flush(wait=True)  # what this very process has queued shows too
        query = self.search.value.strip()
        try:
            self.rows = self.journal.sessions(query, include_empty=False, include_archived=self.show_archived)
        except Exception as error:
            log.exception("history search failed")
            self.rows = []
            self.notify(f"Search failed: {error}", severity="error")
        chosen = self.selected
        self.table.clear()
        for info in self.rows:
            label = clean(info.label[:80]) or "(no prompt)"
            self.table.add_row(when(info.updated), clean(info.agent_title or info.agent), clean(short_dir(info.cwd)),
                               f"archived · {label}" if info.archived else label, str(info.messages), key=str(info.id))
        # The session chosen before stays chosen while it is still listed (a search refined, or Enter on it).
        kept = next((i for i, info in enumerate(self.rows) if chosen is not None and info.id == chosen.id), 0)
        if self.rows:
            self.table.move_cursor(row=kept, animate=False)
        found = f"{len(self.rows)} session{'' if len(self.rows) == 1 else 's'}"  # never-prompted ones are not listed
        archived = " (archived shown)" if self.show_archived else ""
        self.status.update(f"History · {found}{archived}" + (f" matching {query!r}" if query else "")
                           + " · Enter opens · Del deletes · Alt+H archived · Esc closes")

    @on(Input.Changed, "#history-search")
    def _search_changed(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(SEARCH_DELAY, self.refresh_rows)

    @on(Input.Submitted, "#history-search")
    def _search_submitted(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self.refresh_rows()
        info = self.selected
        if info is not None:  # the list is live: Enter opens the highlighted (top) session
            self.open(info)

    @on(DataTable.RowHighlighted, "#history-table")
    def _row_highlighted(self) -> None:
        self.refresh_bindings()  # Alt+A is offered for the records whose agent archives

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "archive":
            info = self.selected
            return info is not None and self._offers_archive(info)
        return True

    def _offers_archive(self, info: SessionInfo) -> bool:
        """Whether the record's agent archives: an open tab of it says so, else its recorded `initialize`."""
        if info.id not in self._archivable:
            app = rat_app(self)
            open_one = archiver(app.sessions, info.argv) if app is not None else None
            try:
                self._archivable[info.id] = open_one is not None or recorded_archive(self.journal, info.id)
            except Exception:  # an unreadable record: not offered, the log says why
                log.exception("reading the record's capabilities failed")
                self._archivable[info.id] = False
        return self._archivable[info.id]

    @on(DataTable.RowSelected, "#history-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        info = self.selected
        if info is not None:
            self.open(info)

    @property
    def selected(self) -> SessionInfo | None:
        if not self.rows or self.table.cursor_row < 0 or self.table.cursor_row >= len(self.rows):
            return None
        return self.rows[self.table.cursor_row]

    def open(self, info: SessionInfo) -> None:
        self.journal.flush(wait=True)
        fresh = self.journal.session(info.id) or info
        self.app.push_screen(HistoryTranscriptScreen(self.journal, fresh))

    def action_move(self, rows: int) -> None:
        if self.rows:
            self.table.move_cursor(row=max(0, min(len(self.rows) - 1, self.table.cursor_row + rows)), animate=False)

    def action_focus_search(self) -> None:
        self.search.focus()

    def action_back(self) -> None:
        if self.search.value:
            self.search.value = ""
            self.refresh_rows()
        else:
            self.dismiss()

    def action_delete(self) -> None:
        info = self.selected
        if info is None:
            return
        app = rat_app(self)
        if app is not None and any(journal.id == info.id for journal in app.sessions.journals.values()):
            self.notify("That session is open in a tab: close it first.", severity="warning")
            return
        self.journal.delete(info.id)
        self.notify(f"Deleted the session of {when(info.created)}.")
        self.refresh_rows()

    def action_toggle_archived(self) -> None:
        self.show_archived = not self.show_archived
        self.refresh_rows()

    def action_archive(self) -> None:
        info = self.selected
        app = rat_app(self)
        if info is None or app is None or not self._offers_archive(info):
            return
        if any(journal.id == info.id for journal in app.sessions.journals.values()):
            # Archiving closes the agent's session: the tab showing it would lose it under the user.
            self.notify("That session is open in a tab: close it first.", severity="warning")
            return
        self._archive(info, not info.archived)

    @work(group="history-archive", exit_on_error=False)
    async def _archive(self, info: SessionInfo, archived: bool) -> None:
        app = rat_app(self)
        done, message = await archive_record(self.journal, app.sessions if app is not None else (), info, archived)
        if not done:
            log.warning("%s", message)
        self.notify(message, severity="information" if done else "warning")
        if done:
            self.refresh_rows()


class HistoryTranscriptScreen(StyledOnce, Screen[None]):
    """One past session, read-only, in the live session's widgets; e, j and c act on it."""

    DEFAULT_CSS = """
    HistoryTranscriptScreen #history-info { background: $panel; color: $text; padding: 0 1; }
    HistoryTranscriptScreen PromptComposer { display: none; }
    """
    BINDINGS = [
        # Priority: the session view below binds Esc to "cancel the turn", which a record has none of.
        Binding("escape", "back", "Back", id="history.back", priority=True, tooltip="Back to the list of sessions"),
        Binding("e", "export_markdown", "Export Markdown", id="history.export_markdown",
                tooltip="Write the transcript as a Markdown file"),
        Binding("j", "export_journal", "Export journal", id="history.export_journal",
                tooltip="Write the raw messages as a JSONL file that `rat replay FILE` plays"),
        Binding("c", "continue_session", "Continue", id="history.continue",
                tooltip="Reopen the session with its agent (session/load or session/resume)"),
    ]

    def __init__(self, journal: HistoryJournal, info: SessionInfo) -> None:
        super().__init__()
        self.journal = journal
        self.info = info
        self.records = journal.records(info.id)
        self.session = ReplaySession(self.records, info.agent_title or info.agent, info.cwd, title=info.title)

    @property
    def view(self) -> SessionView:
        return self.query_one(SessionView)

    def compose(self) -> ComposeResult:
        info = self.info
        yield Static(clean(f"{info.agent_title or info.agent} · {short_dir(info.cwd, 80)} · {when(info.created)} · "
                           f"{info.messages} messages · e Markdown · j journal · c continue · Esc back"),
                     id="history-info", markup=False)
        yield SessionView(self.session)
        yield KeysFooter()

    def on_mount(self) -> None:
        self.call_after_refresh(lambda: self.view.transcript.focus())

    def action_back(self) -> None:
        self.dismiss()

    def _write(self, suffix: str, text: str) -> Path | None:
        from ..tabs.export_ui import write_export

        return write_export(self, export_name(self.info, suffix), text)

    def markdown(self) -> str:
        state = rebuild(self.records).store.state  # the whole session, even if the view is still playing
        return to_markdown(state, self.info.header())

    def action_export_markdown(self) -> None:
        path = self._write(".md", self.markdown())
        if path is not None:
            self.notify(f"Markdown written to {path}", title="Exported", timeout=10)

    def action_export_journal(self) -> None:
        path = self._write(".jsonl", dump_recording(self.records, self.info.header()))
        if path is not None:
            self.notify(f"Journal written to {path}; play it with: rat replay {path}", title="Exported", timeout=10)

    def continue_problem(self) -> str | None:
        """None when the session can be continued, else why not (shown to the user)."""
        if not self.info.agent_session_id:
            return ("This session cannot be continued: the journal has no agent session id "
                    "(the agent never answered session/new).")
        if not self.info.argv:
            return "This session cannot be continued: the journal does not say how its agent was started."
        if not os.path.isdir(self.info.cwd):
            return f"This session cannot be continued: its directory {self.info.cwd} no longer exists."
        if not self.session.builder.can_continue and self.session.done:
            return (f"{self.info.agent_title or self.info.agent} cannot continue sessions: it announced "
                    "neither session/load nor session/resume.")
        return None

    def action_continue_session(self) -> None:
        problem = self.continue_problem()
        if problem is not None:
            self.notify(problem, severity="warning", timeout=8)
            return
        from ...agents.spec import agent_choices
        from ...session.remote_side import continued_spec

        app = rat_app(self)
        choices = agent_choices(app.config, app.launched) if app is not None else []
        spec, warning = continued_spec(self.info.agent, self.info.argv, self.info.settings, choices,
                                       self.session.builder.protocol_version)
        if warning:
            self.notify(warning, severity="warning", timeout=10)
        cwd, attach = Path(self.info.cwd), self.info.agent_session_id
        journal, info = self.journal, self.info

        async def reopen() -> None:
            if info.archived:  # ACP: unarchive before a load or resume; without its agent open, it goes on archived
                done, message = await archive_record(journal, app.sessions, info, False)
                if not done:
                    log.warning("%s", message)
                    app.notify(f"{message} Continuing it archived.", severity="warning", timeout=8)
            await app.open_session(spec, cwd, attach_session_id=attach)

        while isinstance(app.screen, (HistoryTranscriptScreen, HistoryScreen)):
            app.pop_screen()
        app.call_later(reopen)
