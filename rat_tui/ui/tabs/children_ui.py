"""Provides the tab's side of subagent cards and compaction markers: draw, expand, open full screen, cancel.

SessionView calls `draw` for the entries it does not draw itself, new or changed (each changed card
once per store batch, however many of its child's chunks the batch held), and the actions below. The engine side is session/children.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...session import children as session_children
from ...state import children, compaction, reducer
from ...state.models import ChildSessionEntry, CompactionEntry, ToolCallEntry
from ..widgets.child_card import render_child_card, render_compaction

if TYPE_CHECKING:
    from .view import SessionView

CARD_COLOURS = ("tool-pending", "tool-running", "tool-completed", "tool-failed")


def _colours(view: SessionView) -> dict[str, str]:
    variables = view.app.theme_variables
    return {name: variables.get(name, "") for name in CARD_COLOURS}


def draw(view: SessionView, entry: Any, transcript: Any = None) -> bool:
    """Draw a child card or a compaction marker; False for any other entry."""
    transcript = transcript or view.transcript
    if isinstance(entry, ChildSessionEntry):
        transcript.set_renderable(entry.key, render_child_card(entry, _colours(view)))
    elif isinstance(entry, CompactionEntry):
        transcript.set_renderable(entry.key, render_compaction(entry, _colours(view)))
    else:
        return False
    return True


def asking_name(view: SessionView, request: dict[str, Any]) -> str:
    """Who asks a permission: the agent, or the agent's subagent by name."""
    name = view.session.state.agent_name
    child = session_children.asker(view.session.state, request.get("sessionId"))
    return f"{name} › subagent “{child.name}”" if child is not None else name


def nearest(view: SessionView) -> Any:
    """The tool call, child card or compaction marker nearest the bottom of the view."""
    state = view.session.state
    keys: dict[str, Any] = {c.key: c for c in state.tool_calls.values()}
    keys.update({c.key: c for c in state.children.values()})
    keys.update({c.key: c for c in state.compactions.values()})
    key = view.transcript.nearest_key(keys)
    return keys.get(key) if key else None


def toggle(view: SessionView, key: str) -> None:
    """Expand or collapse the tool call, child card or compaction marker of this transcript key (a click)."""
    state = view.session.state
    entry = state.by_key.get(key)
    if entry is None:
        entry = next((e for e in (*state.children.values(), *state.compactions.values()) if e.key == key), None)
    if entry is not None:
        _toggle(view, entry)


def toggle_nearest(view: SessionView) -> None:
    _toggle(view, nearest(view))


def _toggle(view: SessionView, entry: Any) -> None:
    store = view.session.store
    if isinstance(entry, ToolCallEntry):
        store.dispatch(reducer.toggle_tool_call, entry.key)
    elif isinstance(entry, ChildSessionEntry):
        store.dispatch(children.toggle_card, entry.key)
    elif isinstance(entry, CompactionEntry):
        store.dispatch(compaction.toggle_compaction, entry.key)
    else:
        view.notify("No tool call to expand.", timeout=2)


def nearest_child(view: SessionView) -> ChildSessionEntry | None:
    state = view.session.state
    cards = {c.key: c for c in state.children.values()}
    key = view.transcript.nearest_key(cards) if cards else None
    return cards.get(key) if key else None


def open_child(view: SessionView, child: ChildSessionEntry | None = None) -> None:
    child = child or nearest_child(view)
    if child is None:
        view.notify("No subagent here.", timeout=2)
        return
    from ..screens.child_session import ChildSessionScreen

    view.app.push_screen(ChildSessionScreen(view.session.store, (child.key,), child, cancel=lambda c: cancel(view, c)))


async def cancel(view: SessionView, child: ChildSessionEntry) -> None:
    if not child.can_cancel:
        view.notify(f"{child.name} cannot be cancelled on its own.", timeout=3)
    elif not child.running:
        view.notify(f"{child.name} is not running.", timeout=3)
    elif await session_children.cancel_child(view.session, child):
        view.notify(f"Cancelling {child.name}…", timeout=3)


async def cancel_nearest(view: SessionView) -> None:
    child = nearest_child(view)
    if child is None:
        view.notify("No subagent here.", timeout=2)
        return
    await cancel(view, child)


async def cancel_all(view: SessionView) -> None:
    sent = await session_children.cancel_children(view.session)
    view.notify(f"Cancelling {sent} subagent{'s' if sent != 1 else ''}." if sent else "No subagent to cancel.", timeout=3)
