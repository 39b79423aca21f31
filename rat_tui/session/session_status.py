"""Provides the board's `session/status` check: does the agent still hold the session, and what is it doing?

ACP 1.34 (unstable) `session/status {sessionId}` answers `{status, state?}` without side effects: `status` is
`open` (in the agent's memory) or anything else, read as `saved` (it can be resumed, not in memory); v2 adds
`state`, the same snapshot as a `state_update` (never a new completion). A session the agent does not know
is -32002. Asked only where the agent advertises `sessionCapabilities.status` (v2: `session.status`), only
while the board is open, and only of idle sessions: a turn's own traffic says more while it runs.
"""

from __future__ import annotations

import logging
from typing import Any

from ..protocol.router import RpcError
from ..protocol.sanitize import clean
from ..state.models import Change, FieldChanged, SessionState

log = logging.getLogger("rat.session_status")

RESOURCE_NOT_FOUND = -32002


def set_agent_status(state: SessionState, status: str | None, activity: str | None = None) -> list[Change]:
    if state.agent_status == status and (activity is None or state.agent_activity == activity):
        return []
    state.agent_status = status
    if activity is not None:
        state.agent_activity = activity
    return [FieldChanged("agent_status")]


def read_status(result: Any) -> tuple[str, str | None]:
    """(`open` | `saved`, the v2 state snapshot's state word or None) from a `session/status` answer."""
    result = result if isinstance(result, dict) else {}
    status = "open" if result.get("status") == "open" else "saved"  # an unknown value reads as saved
    snapshot = result.get("state")
    word = snapshot.get("state") if isinstance(snapshot, dict) else None
    return status, clean(word)[:40] if isinstance(word, str) else None


async def check(session: Any) -> str | None:
    """Ask the agent about the session; its status word (`open`, `saved`, `unknown`), None when not asked."""
    if not session.supports("status") or session.session_id is None or session.connection is None or session.busy:
        return None
    try:
        result = await session.connection.request("session/status", {"sessionId": session.session_id})
    except RpcError as error:
        if error.code == RESOURCE_NOT_FOUND:
            session.store.dispatch(set_agent_status, "unknown")
            return "unknown"
        log.info("session/status refused: %s", error.message)
        return None
    except Exception as error:  # the connection is gone: the session's own status says so
        log.info("session/status failed: %s", error)
        return None
    status, activity = read_status(result)
    session.store.dispatch(set_agent_status, status, activity)
    return status
