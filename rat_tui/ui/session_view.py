"""Provides SessionView: one session's transcript, composer and status bar, fed by its store."""

from __future__ import annotations

import json
import logging

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.worker import Worker, WorkerState

from ..agent_session import AgentSession
from ..state import reducer
from ..state.models import (
    Change,
    EntryAdded,
    EntryChanged,
    FieldChanged,
    GenericEntry,
    MessageEntry,
    NoticeEntry,
    TextAppended,
    ToolCallEntry,
)
from .widgets.plan_panel import PlanPanel
from .widgets.prompt import PromptComposer
from .widgets.status_bar import StatusBar
from .widgets.tool_call import render_tool_call
from .widgets.transcript import Transcript

log = logging.getLogger("rat.ui")


class SessionView(Vertical):
    """Widgets subscribe to the session's store on mount; the agent runs in this view's worker."""

    DEFAULT_CSS = """
    SessionView {
        height: 1fr;
    }
    SessionView > Transcript {
        height: 1fr;
    }
    """

    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel turn", id="session.cancel", tooltip="Cancel the running turn"),
        Binding("ctrl+t", "focus_transcript", "Transcript", id="session.focus_transcript", show=False),
        Binding("ctrl+p", "focus_prompt", "Prompt", id="session.focus_prompt", show=False),
        Binding("f2", "toggle_plan", "Plan", id="session.toggle_plan", tooltip="Show or hide the plan"),
    ]

    def __init__(self, session: AgentSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session
        self._unsubscribe = lambda: None

    def compose(self) -> ComposeResult:
        yield Transcript()
        yield PlanPanel()
        yield PromptComposer(id="composer")
        yield StatusBar()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def composer(self) -> PromptComposer:
        return self.query_one(PromptComposer)

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def plan_panel(self) -> PlanPanel:
        return self.query_one(PlanPanel)

    def on_mount(self) -> None:
        store = self.session.store
        store.flush()  # pending appends are already in the entries' text shown below
        for entry in store.state.entries:  # anything already in the store (a restored session)
            self._add_entry(entry, entry.text if isinstance(entry, MessageEntry) else "")
        self._unsubscribe = store.subscribe(self._on_changes)
        self.status_bar.show(store.state)
        self.composer.focus()
        self._run_agent()

    def on_unmount(self) -> None:
        self._unsubscribe()

    @work(group="agent", exit_on_error=False, name="agent session")
    async def _run_agent(self) -> None:
        await self.session.run()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "agent" and event.state == WorkerState.ERROR:
            error = event.worker.error
            log.error("agent session failed", exc_info=error)
            self.session.store.dispatch(reducer.add_notice, f"Internal error in the session: {error!r}", "error")
            self.session.store.dispatch(reducer.set_status, "error", str(error))

    # -- store -> widgets -----------------------------------------------------------------------

    def _on_changes(self, batch: list[Change]) -> None:
        transcript = self.transcript
        status_dirty = plan_dirty = False
        for change in batch:
            if isinstance(change, TextAppended):
                transcript.append_text(change.key, change.text)
            elif isinstance(change, EntryAdded):
                entry = change.entry
                # Later chunks of this batch follow as TextAppended: start from the first part only.
                first = entry.parts[0] if isinstance(entry, MessageEntry) and entry.parts else ""
                self._add_entry(entry, first)
            elif isinstance(change, EntryChanged):
                entry = self.session.state.by_key.get(change.key)
                if isinstance(entry, ToolCallEntry):
                    transcript.set_renderable(entry.key, render_tool_call(entry))
            elif isinstance(change, FieldChanged):
                status_dirty = True
                plan_dirty = plan_dirty or change.name == "plan"
        if plan_dirty:
            self.plan_panel.show_plan(self.session.state.plan)
        if status_dirty:
            self.status_bar.show(self.session.state)

    def _add_entry(self, entry: object, text: str) -> None:
        transcript = self.transcript
        if isinstance(entry, MessageEntry):
            transcript.add_entry(entry.key, entry.role, text)
        elif isinstance(entry, ToolCallEntry):
            transcript.set_renderable(entry.key, render_tool_call(entry))
        elif isinstance(entry, NoticeEntry):
            transcript.add_entry(entry.key, "notice", entry.text, title=entry.severity)
        elif isinstance(entry, GenericEntry):
            title = f"{entry.kind}" + (f" — {entry.problem}" if entry.problem else "")
            transcript.add_entry(entry.key, "generic", json.dumps(entry.raw, indent=2, ensure_ascii=False), title=title)

    # -- user actions ---------------------------------------------------------------------------

    @on(PromptComposer.Submitted)
    def _submit(self, event: PromptComposer.Submitted) -> None:
        why = self.session.can_prompt()
        if why is not None:
            self.notify(why, severity="warning")
            return
        if self.session.start_prompt(event.text.rstrip("\n")) is not None:
            event.composer.clear()

    async def action_cancel_turn(self) -> None:
        if not await self.session.cancel():
            self.notify("No turn is running.", timeout=2)

    def action_toggle_plan(self) -> None:
        self.plan_panel.toggle()

    def action_focus_transcript(self) -> None:
        self.transcript.focus()

    def action_focus_prompt(self) -> None:
        self.composer.focus()
