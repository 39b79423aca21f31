"""Provides the checks every agent request passes before its handler: it must name this session."""

from __future__ import annotations

from collections.abc import Callable

from ..protocol.router import INVALID_PARAMS, RequestHandler, RpcError
from ..protocol.sanitize import clean

# Requests that act on the session's files, terminals or user: served only for the session they name.
SESSION_SCOPED = ("fs/", "terminal/", "session/request_permission")


def for_this_session(handlers: dict[str, RequestHandler], current: Callable[[], str | None],
                     also: Callable[[object], bool] = lambda named: False) -> dict[str, RequestHandler]:
    """`handlers`, those in SESSION_SCOPED wrapped to refuse (-32602) a sessionId that is not `current()`
    (nor one `also` accepts: a subagent this session owns): a request naming another session, or none,
    is never served against this session's directory."""
    return {method: _guarded(handler, current, also) if method.startswith(SESSION_SCOPED) else handler
            for method, handler in handlers.items()}


def _guarded(handler: RequestHandler, current: Callable[[], str | None],
             also: Callable[[object], bool]) -> RequestHandler:
    async def guarded(params: dict) -> object:
        named, ours = params.get("sessionId"), current()
        if ours is None or (named != ours and not also(named)):
            what = "no sessionId" if named is None else f"unknown session {clean(repr(named))[:100]}"
            raise RpcError(INVALID_PARAMS, f"Invalid params: {what} (this connection serves {ours!r})")
        return await handler(params)

    return guarded
