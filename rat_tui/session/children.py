"""Provides the engine side of subagent sessions: cancel one child or all, and who asks a permission.

A child's updates reach its state through `SessionStore.apply_notification` (state/children.py); this
module only sends: `session/cancel` with the child's sessionId, and only when the child advertised
`capabilities.cancel` in its `subagent_update` (the agent owns the child; without that capability a
cancel is the parent's turn's business).
"""

from __future__ import annotations

import logging
from typing import Any

from ..state import children, stopped
from ..state.models import ChildSessionEntry, SessionState

log = logging.getLogger("rat.children")


async def cancel_child(session: Any, child: ChildSessionEntry) -> bool:
    """`session/cancel` on one child; False (nothing sent) when it cannot be cancelled or is not running."""
    if not child.can_cancel or not child.running or session.client is None:
        return False
    try:
        await session.client.cancel(child.child_id)
    except Exception as error:  # a dead connection: the session's own status says so
        log.warning("cancel of subagent %s failed: %s", child.child_id, error)
        return False
    session.permissions.cancel_for(child.child_id)
    session.store.dispatch(stopped.child_stopped, child.child_id)  # the card reads "stopped by you"
    return True


async def cancel_children(session: Any) -> int:
    """Cancel every running child that can be cancelled; the number sent."""
    sent = 0
    for child in children.all_children(session.state):
        sent += await cancel_child(session, child)
    return sent


def asker(state: SessionState, session_id: Any) -> ChildSessionEntry | None:
    """The child that sent a request (`session/request_permission` under its sessionId), or None."""
    if session_id is None or session_id == state.session_id:
        return None
    return children.find(state, session_id)
