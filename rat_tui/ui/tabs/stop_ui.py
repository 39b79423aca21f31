"""Provides the transcript's stop key (S): stop the command of the nearest running tool call, the turn going on.

The card under the block cursor if it runs, else the running call nearest the bottom of the view: one whose
client terminal still runs (v1), or, on ACP v2, one advertising `capabilities.cancel` (session/stopping.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...session import stopping

if TYPE_CHECKING:
    from .view import SessionView


async def stop_nearest(view: SessionView) -> None:
    session = view.session
    calls = {call.key: call for call in session.state.tool_calls.values() if stopping.can_stop_call(session, call)}
    if not calls:
        running = any(call.status in ("pending", "in_progress") for call in session.state.tool_calls.values())
        view.notify("This agent offers no way to stop one tool call; Esc cancels the whole turn." if running
                    else "No running command here to stop.", timeout=3)
        return
    cursor = view.transcript.cursor_key
    key = cursor if cursor in calls else view.transcript.nearest_key(calls)
    call = calls.get(key) if key else None
    if call is None:
        call = list(calls.values())[-1]
    result = await stopping.stop_tool_call(session, call)
    view.notify(result.message, severity="information" if result.ok else "warning", timeout=3)
