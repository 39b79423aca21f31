"""Provides ChildSessionScreen: one subagent's session full screen, live: its transcript, tool calls, plan.

The child's state lives inside the parent's (state/children.py); this screen listens to the parent's
store and takes the `ChildChanged` events of its child (at any depth), so it needs no store of its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from ...state.models import (
    Change,
    ChildChanged,
    ChildSessionEntry,
    CompactionEntry,
    EntryAdded,
    EntryChanged,
    FieldChanged,
    GenericEntry,
    MessageEntry,
    NoticeEntry,
    TextAppended,
    ToolCallEntry,
)
from ..widgets.child_card import child_state_words, render_child_card, render_compaction
from ..widgets.plan_panel import PlanPanel
from ..widgets.tool_call import render_tool_call
from ..widgets.transcript import Transcript
from ..textual_ext.styled_once import StyledOnce
from ..widgets.keys_footer import KeysFooter

CARD_COLOURS = ("tool-pending", "tool-running", "tool-completed", "tool-failed", "diff-added", "diff-removed")


def child_changes(batch: list[Change], path: tuple[str, ...]) -> list[Change]:
    """The changes of the child at `path` (card keys from the top session down) within a parent's batch."""
    found: list[Change] = []
    for change in batch:
        if isinstance(change, ChildChanged) and change.key == path[0]:
            inner = list(change.changes)
            found.extend(inner if len(path) == 1 else child_changes(inner, path[1:]))
    return found


class EntryFeeder:
    """Shows a SessionState's entries in a Transcript and keeps it current from change events."""

    def __init__(self, transcript: Transcript, colours: Callable[[], dict[str, str]]) -> None:
        self.transcript = transcript
        self.colours = colours

    def add(self, entry: object, text: str | None = None) -> None:
        transcript = self.transcript
        if isinstance(entry, MessageEntry):
            transcript.add_entry(entry.key, entry.role, entry.text if text is None else text)
        elif isinstance(entry, NoticeEntry):
            transcript.add_entry(entry.key, "notice", entry.text, title=entry.severity)
        elif isinstance(entry, GenericEntry):
            transcript.add_entry(entry.key, "generic", json.dumps(entry.raw, indent=2, ensure_ascii=False), title=entry.kind)
        else:
            self.refresh_card(entry)

    def refresh_card(self, entry: object, terminals: dict[str, Any] | None = None) -> None:
        colours = self.colours()
        if isinstance(entry, ToolCallEntry):
            self.transcript.set_renderable(entry.key, render_tool_call(entry, terminals or {}, colours))
        elif isinstance(entry, ChildSessionEntry):
            self.transcript.set_renderable(entry.key, render_child_card(entry, colours))
        elif isinstance(entry, CompactionEntry):
            self.transcript.set_renderable(entry.key, render_compaction(entry, colours))
        elif isinstance(entry, MessageEntry):  # a session_message replaced whole
            self.transcript.add_entry(entry.key, entry.role, entry.text)

    def apply(self, changes: list[Change], state: Any) -> bool:
        """Feed the changes; True if a session-level field (plan, status…) changed."""
        fields = False
        for change in changes:
            if isinstance(change, TextAppended):
                self.transcript.append_text(change.key, change.text)
            elif isinstance(change, EntryAdded):
                entry = change.entry
                self.add(entry, entry.parts[0] if isinstance(entry, MessageEntry) and entry.parts else "")
            elif isinstance(change, EntryChanged):
                entry = state.by_key.get(change.key)
                if entry is not None:
                    self.refresh_card(entry, state.terminals)
            elif isinstance(change, FieldChanged):
                fields = True
        return fields


class ChildSessionScreen(StyledOnce, Screen[None]):
    """A subagent's own transcript, tool calls and plan, live; Escape goes back to the parent's tab."""

    BINDINGS = [
        Binding("escape", "dismiss", "Back", id="child.back", tooltip="Back to the parent session"),
        Binding("c", "cancel_child", "Cancel subagent", id="child.cancel",
                tooltip="Cancel this subagent's work (when the agent allows it)"),
        Binding("x", "toggle_tool_call", "Expand tool", id="child.toggle_tool_call",
                tooltip="Expand or collapse the subagent's tool call nearest the bottom of the view"),
        Binding("d", "open_diff", "Diff", id="child.open_diff",
                tooltip="Open the diff of the subagent's nearest tool call that carries one"),
    ]

    DEFAULT_CSS = """
    ChildSessionScreen #child-header { height: auto; padding: 0 1; background: $panel; text-style: bold; }
    ChildSessionScreen Transcript { height: 1fr; }
    """

    def __init__(self, parent_store: Any, path: tuple[str, ...], child: ChildSessionEntry,
                 cancel: Callable[[ChildSessionEntry], Any] | None = None) -> None:
        super().__init__()
        self.parent_store = parent_store
        self.path = path
        self.child = child
        self.cancel = cancel
        self._unsubscribe: Callable[[], None] = lambda: None

    def compose(self) -> ComposeResult:
        yield Static(id="child-header")
        yield Transcript()
        yield PlanPanel()
        yield KeysFooter()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    def on_mount(self) -> None:
        self.parent_store.flush()
        self.feeder = EntryFeeder(self.transcript, self._colours)
        for entry in self.child.state.entries:
            self.feeder.add(entry)
        self._show_fields()
        self._unsubscribe = self.parent_store.subscribe(self._on_changes)
        self.transcript.focus()

    def on_unmount(self) -> None:
        self._unsubscribe()

    def _colours(self) -> dict[str, str]:
        variables = self.app.theme_variables
        return {name: variables.get(name, "") for name in CARD_COLOURS}

    def _on_changes(self, batch: list[Change]) -> None:
        mine = child_changes(batch, self.path)
        if self.feeder.apply(mine, self.child.state) or any(
            isinstance(c, (EntryChanged, FieldChanged)) for c in batch
        ):
            self._show_fields()

    def _show_fields(self) -> None:
        child = self.child
        self.query_one("#child-header", Static).update(
            f"⑂ {child.name} — {child_state_words(child)}   (subagent of {self.parent_store.state.agent_name})"
        )
        self.query_one(PlanPanel).show_plan(child.state.plan, child.state.plans)

    def _nearest_call(self, with_diff: bool = False) -> ToolCallEntry | None:
        calls = {c.key: c for c in self.child.state.tool_calls.values()
                 if not with_diff or any(item.get("type") == "diff" for item in c.content)}
        key = self.transcript.nearest_key(calls) if calls else None
        return calls.get(key) if key else None

    def on_transcript_card_clicked(self, event: Transcript.CardClicked) -> None:
        call = next((c for c in self.child.state.tool_calls.values() if c.key == event.key), None)
        if call is not None:  # a click on a card's header, as x
            call.expanded = not call.expanded
            self.feeder.refresh_card(call, self.child.state.terminals)

    def action_toggle_tool_call(self) -> None:
        call = self._nearest_call()
        if call is not None:  # a view-side flag on the child's own entry: redraw just that card
            call.expanded = not call.expanded
            self.feeder.refresh_card(call, self.child.state.terminals)

    def action_open_diff(self) -> None:
        call = self._nearest_call(with_diff=True)
        if call is None:
            self.notify("No diff to show.", timeout=2)
            return
        from .diff_screen import DiffScreen

        self.app.push_screen(DiffScreen(call.title, [item for item in call.content if item.get("type") == "diff"]))

    def action_cancel_child(self) -> None:
        if self.cancel is None or not self.child.can_cancel:
            self.notify("This subagent cannot be cancelled on its own.", timeout=3)
            return
        self.run_worker(self.cancel(self.child), exit_on_error=False)
