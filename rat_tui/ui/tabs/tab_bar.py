"""Provides SessionTabs: one tab per session, labelled with its agent, title and a state badge."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.widgets import TabbedContent, TabPane, Tabs

from ...session.agent_session import AgentSession
from ...state import children
from ...state.models import MessageEntry, SessionState
from ..textual_ext.keys import relabel
from .view import SessionView
from ..app_api import rat_app

MAX_TITLE = 28


# A tab without a badge keeps its place blank: a badge coming and going (◐ as a turn starts, gone as it ends)
# then keeps the label's width, and the tab is drawn again instead of the whole screen being laid out twice
# (Textual lays it out again for the tab's new size): 4 layouts in a 2,000-chunk answer's turn.
NO_BADGE = "  "
# A label that changes width (a session's first prompt or a new title) lays the whole screen out twice:
# it waits until the agent has sent nothing for QUIET_RELABEL (checked that often) and what it sent
# is drawn, so that it does not hold up an answer streaming in, nor the drawing of its end; it comes
# MAX_RELABEL_DELAY late at most in an answer that never pauses.
QUIET_RELABEL = 0.05
MAX_RELABEL_DELAY = 1.0


def tab_label(state: SessionState, unseen: bool, waiting: int = 0) -> str:
    """Badge (or its blank place), agent, title: the title from `session_info_update`, else the first prompt.

    `waiting`: the tab's agent requests waiting for the user (ui/tabs/request_gate.py)."""
    if state.pending_permissions or waiting or children.waiting(state):  # a subagent requiring action too
        badge = "⚠ "
    elif state.status == "working":
        badge = "◐ "
    elif state.status in ("error", "exited"):
        badge = "✗ "
    elif state.status == "disconnected":
        badge = "↯ "  # the network, not the agent: it reconnects by itself
    elif state.status == "cancelled" and unseen:
        badge = "⊘ "  # the user stopped it: not a failure
    elif unseen:
        badge = "✓ "
    else:
        badge = NO_BADGE
    title = state.title or next(
        (e.text for e in state.entries if isinstance(e, MessageEntry) and e.role == "user"), ""
    )
    title = " ".join(title.split())
    if len(title) > MAX_TITLE:
        title = title[: MAX_TITLE - 1] + "…"
    running = children.running_count(state)  # subagents at work
    badge += f"⑂{running} " if running else ""
    if state.shell_running is not None:  # a `!command` runs in the tab's shell
        badge = "$ " if badge == NO_BADGE else badge + "$ "
    where = f"@{state.host}" if state.host else ""  # a remote agent says where it runs
    return f"{badge}{state.agent_name}{where}" + (f" · {title}" if title else "")


class SessionTabs(TabbedContent):
    """Sessions run side by side: each view owns its agent's worker, so a busy tab slows no other."""

    DEFAULT_CSS = """
    SessionTabs { height: 1fr; }
    SessionTabs > ContentSwitcher { height: 1fr; }
    SessionTabs TabPane { padding: 0; height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__(id="tabs")
        self._count = 0
        self._unsubscribe: dict[str, Callable[[], None]] = {}
        self._unseen: set[str] = set()
        self._branches: dict[str, str] = {}  # pane id -> git branch of a session in its own worktree
        self._deferred: dict[str, float] = {}  # pane id -> when its label's change of width was first put off
        self._retrying: set[str] = set()  # pane ids with a retry of that change set

    @staticmethod
    def pane(session: AgentSession, number: int) -> TabPane:
        return TabPane(tab_label(session.state, False), SessionView(session), id=f"session-{number}")

    def compose(self) -> ComposeResult:
        # The tab strip takes no focus: Tab moves between the prompt and the transcript (README), and
        # tabs switch with Alt+1..9 / Ctrl+PgUp/PgDn or a click. Set before it mounts: focusable then,
        # it took the screen's first focus and restyled itself twice as the composer took it over.
        for widget in super().compose():
            if isinstance(widget, Tabs):
                widget.can_focus = False
            yield widget

    def on_mount(self) -> None:
        for pane in self.query(TabPane):
            self._watch(pane)
        app = rat_app(self)
        if app is not None:
            app.request_gate.on_change.append(self._relabel_all)

    def _relabel_all(self) -> None:
        for pane in self.query(TabPane):
            try:
                self._relabel(pane.id or "", pane.query_one(SessionView).session.state)
            except Exception:  # being removed
                pass

    def _watch(self, pane: TabPane) -> None:
        view = pane.query_one(SessionView)
        pane_id = pane.id or ""
        self._count = max(self._count, int(pane_id.rsplit("-", 1)[-1]))
        was_working = [False]

        def changed(_batch) -> None:
            state = view.session.state
            if was_working[0] and state.status != "working" and self.active != pane_id:
                self._unseen.add(pane_id)
            was_working[0] = state.status == "working"
            self._relabel(pane_id, state)

        self._unsubscribe[pane_id] = view.session.store.subscribe(changed)

    def _relabel(self, pane_id: str, state: SessionState) -> None:
        try:
            tab = self.get_tab(pane_id)
            app = rat_app(self)
            waiting = app.request_gate.waiting(self.get_pane(pane_id).query_one(SessionView)) if app is not None else 0
            label = tab_label(state, pane_id in self._unseen, waiting)
            if branch := self._branches.get(pane_id):
                slot = len(NO_BADGE)  # (after the badge's place: every badge is as wide)
                label = f"{label[:slot]}⎇ {branch} · {label[slot:]}"
            if str(tab.label) == label:  # a new label re-lays out the tab bar: not on every streamed batch
                self._deferred.pop(pane_id, None)
                return
            if cell_len(tab.label.plain) != cell_len(label) and self._put_off(pane_id):
                return
            self._deferred.pop(pane_id, None)
            relabel(tab, label)
        except Exception:  # the tab is being removed
            pass

    def _put_off(self, pane_id: str) -> bool:
        """Whether a label that changes width waits: at least QUIET_RELABEL, then until the agent has been
        quiet that long, MAX_RELABEL_DELAY at most. True when it waits (a retry is set)."""
        now = time.monotonic()
        first = self._deferred.setdefault(pane_id, now)
        if now - first >= MAX_RELABEL_DELAY:
            return False
        if now - first >= QUIET_RELABEL:
            view = self.get_pane(pane_id).query_one(SessionView)
            if view.session.reader_activity.quiet_for(QUIET_RELABEL) and not view.transcript.pending:  # (what came last is drawn first)
                return False
        if pane_id not in self._retrying:
            self._retrying.add(pane_id)
            self.set_timer(QUIET_RELABEL, lambda: self._retry_relabel(pane_id))
        return True

    def _retry_relabel(self, pane_id: str) -> None:
        self._retrying.discard(pane_id)
        try:
            state = self.get_pane(pane_id).query_one(SessionView).session.state
        except Exception:  # the tab was closed meanwhile
            self._deferred.pop(pane_id, None)
            return
        self._relabel(pane_id, state)

    async def open(self, session: AgentSession, after: str | None = None, branch: str | None = None) -> str:
        """A tab for `session`, last or right `after` that pane; `branch` shows in its label (a worktree)."""
        self._count += 1
        pane = self.pane(session, self._count)
        await self.add_pane(pane, after=after)
        self._watch(pane)
        if branch:
            self._branches[pane.id or ""] = branch
            self._relabel(pane.id or "", session.state)
        self.active = pane.id or ""
        return self.active

    def branch_of(self, pane_id: str) -> str | None:
        """The git branch of the pane's session when it runs in its own worktree (the board shows it)."""
        return self._branches.get(pane_id)

    def panes_and_views(self) -> list[tuple[TabPane, SessionView]]:
        return [(pane, view) for pane in self.query(TabPane) if (view := _view_of(pane)) is not None]

    @property
    def views(self) -> list[SessionView]:
        return list(self.query(SessionView))

    @property
    def active_view(self) -> SessionView | None:
        pane = self.active_pane
        return _view_of(pane) if pane is not None else None

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        pane_id = event.pane.id or ""
        self._unseen.discard(pane_id)
        view = event.pane.query_one(SessionView)
        self._relabel(pane_id, view.session.state)
        view.composer.focus()

    async def close(self, pane_id: str) -> None:
        pane = self.get_pane(pane_id)
        view = pane.query_one(SessionView)
        unsubscribe = self._unsubscribe.pop(pane_id, None)
        self._branches.pop(pane_id, None)
        if unsubscribe:
            unsubscribe()
        await view.session.close()
        await self.remove_pane(pane_id)

    def select(self, index: int) -> None:
        panes = list(self.query(TabPane))
        if 0 <= index < len(panes):
            self.active = panes[index].id or ""

    def show_view(self, view: SessionView) -> None:
        for pane in self.query(TabPane):
            if view in pane.query(SessionView):
                self.active = pane.id or ""
                return

    def step(self, delta: int) -> None:
        panes = list(self.query(TabPane))
        ids = [p.id for p in panes]
        if self.active in ids and panes:
            self.active = ids[(ids.index(self.active) + delta) % len(ids)] or ""


def _view_of(pane: TabPane) -> SessionView | None:
    """The pane's session view; None for a pane being torn down (the app quitting), not an error."""
    views = list(pane.query(SessionView))
    return views[0] if views else None
