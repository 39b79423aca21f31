"""Provides the account badge: `auth/status` (unstable, 1.34) asked before the first prompt, and the agent's
`auth/status_update` notifications (Claude sends it as `_auth/status_update`).

The answer is `{state, accounts?}`: `state` is `authenticated`, `unauthenticated` (sign in first),
`not_required` (a local model) or `unknown`, any other value read as unknown; `accounts` lists what the agent
has configured (`label`, `active?`, `name?`, `email?`, `organization?`), for display only: the badge shows the
active account's label, never its email (the spec asks clients not to log or send them on). Asked only where
the agent advertises `auth.status`; a failure is logged and shows nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from ..protocol.router import RpcError
from ..protocol.sanitize import clean
from ..state.models import Change, FieldChanged, SessionState

log = logging.getLogger("rat.auth_status")

STATES = ("authenticated", "unauthenticated", "not_required", "unknown")
UPDATE_METHODS = ("auth/status_update", "_auth/status_update")


def read_auth(result: Any) -> dict[str, Any] | None:
    """`{"state": one of STATES, "account": label or None}` from an answer or an update; None if not one."""
    if not isinstance(result, dict) or not isinstance(result.get("state"), str):
        return None
    state = result["state"] if result["state"] in STATES else "unknown"
    accounts = [a for a in result.get("accounts") or [] if isinstance(a, dict) and isinstance(a.get("label"), str)] \
        if isinstance(result.get("accounts"), list) else []
    chosen = next((a for a in accounts if a.get("active") is True), accounts[0] if accounts else None)
    label = clean(" ".join(chosen["label"].split()))[:40] if chosen else None
    return {"state": state, "account": label or None}


def set_auth(state: SessionState, auth: dict[str, Any] | None) -> list[Change]:
    if auth is None or auth == state.auth:
        return []
    state.auth = auth
    return [FieldChanged("auth")]


def badge(auth: dict[str, Any] | None) -> tuple[str, bool]:
    """The status bar's words for the account, and whether they warn (not logged in)."""
    if not auth:
        return "", False
    if auth["state"] == "unauthenticated":
        return "not logged in · Alt+L", True
    if auth["state"] == "authenticated":
        return f"👤 {auth['account']}" if auth.get("account") else "logged in", False
    return "", False


async def check(session: Any) -> None:
    if not (session.hello is not None and session.hello.supports("auth_status")) or session.connection is None:
        return
    try:
        result = await session.connection.request("auth/status", {})
    except RpcError as error:
        log.info("auth/status refused: %s", error.message)
        return
    except Exception as error:  # the connection is gone: the session's own status says so
        log.info("auth/status failed: %s", error)
        return
    session.store.dispatch(set_auth, read_auth(result))


def on_update(session: Any, params: dict[str, Any]) -> None:
    """`auth/status_update` / `_auth/status_update`: the same fields as the answer."""
    session.store.dispatch(set_auth, read_auth(params))
