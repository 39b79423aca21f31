"""Provides TranscriptBuilder: recorded messages back into a SessionStore, through the same reducer as live.

The live session applies `session/update` notifications and adds the user's prompt when it sends
`session/prompt`; the builder does the same from the record, so a rebuilt transcript is what the
user saw. A `session/load` makes the agent replay the whole conversation: when the transcript already
holds it (our journal of a continued session, the load phase of a trace), that replay is skipped.
"""

from __future__ import annotations

from typing import Any

from ..state import reducer
from ..state.store import SessionStore
from .journal import prompt_text
from .records import IN, OUT, Recorded


class TranscriptBuilder:
    """Feed it records in order; `store` holds the transcript so far."""

    def __init__(self, store: SessionStore | None = None) -> None:
        self.store = store or SessionStore()
        self.requests: dict[tuple[str, Any], str] = {}  # (direction, id) of a request -> its method
        self.capabilities: dict[str, Any] = {}
        self.agent_session_id: str | None = None
        self._loading = False  # between our session/load and its answer
        self._skip_replay = False

    def feed(self, record: Recorded) -> None:
        message = record.message
        if not isinstance(message, dict):
            return
        method = message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if isinstance(method, str):
            if "id" in message:
                self.requests[(record.direction, _key(message["id"]))] = method
            if record.direction == OUT:
                self._outgoing(method, params)
            elif method == "session/update":
                if not (self._loading and self._skip_replay):
                    self.store.apply_update(params.get("update"))
            return
        if record.direction == IN and "id" in message:
            asked = record.method or self.requests.pop((OUT, _key(message["id"])), None)
            self._answer(asked, message)

    def _outgoing(self, method: str, params: dict[str, Any]) -> None:
        dispatch = self.store.dispatch
        if method == "session/prompt":
            dispatch(reducer.add_user_message, prompt_text(params.get("prompt")))
            dispatch(reducer.set_status, "working")
        elif method == "session/load":
            self._loading = True
            self._skip_replay = bool(self.store.state.entries)

    def _answer(self, method: str | None, message: dict[str, Any]) -> None:
        dispatch = self.store.dispatch
        result = message.get("result")
        error = message.get("error")
        if method == "initialize" and isinstance(result, dict):
            capabilities = result.get("agentCapabilities")
            self.capabilities = capabilities if isinstance(capabilities, dict) else {}
            info = result.get("agentInfo")
            if isinstance(info, dict) and isinstance(info.get("title") or info.get("name"), str):
                dispatch(reducer.set_agent, info.get("title") or info.get("name"))
        elif method in ("session/new", "session/load", "session/resume"):
            self._loading = False
            if isinstance(result, dict):
                session_id = result.get("sessionId") if isinstance(result.get("sessionId"), str) else None
                session_id = session_id or self.agent_session_id or ""
                self.agent_session_id = session_id or None
                dispatch(reducer.set_session, session_id, result)
            elif isinstance(error, dict):
                dispatch(reducer.add_notice, f"The agent refused {method}: {error.get('message', error)}", "error")
        elif method == "session/prompt":
            if isinstance(result, dict):
                stop = str(result.get("stopReason", "end_turn"))
                dispatch(reducer.end_turn, stop)
                if stop == "cancelled":
                    dispatch(reducer.add_notice, "Turn cancelled.", "info")
            else:
                dispatch(reducer.end_turn, "error")
                detail = error.get("message", error) if isinstance(error, dict) else error
                dispatch(reducer.add_notice, f"The agent failed this turn: {detail}", "error")
            dispatch(reducer.set_status, "ready")
        elif method == "session/set_config_option" and isinstance(result, dict):
            if isinstance(result.get("configOptions"), list):
                dispatch(reducer.set_config_options, result["configOptions"])

    @property
    def can_continue(self) -> bool:
        """The agent said it can load or resume sessions (in the initialize answer recorded)."""
        sessions = self.capabilities.get("sessionCapabilities")
        return bool(self.capabilities.get("loadSession")) or (isinstance(sessions, dict) and "resume" in sessions)


def _key(value: Any) -> Any:
    return value if isinstance(value, (str, int)) else repr(value)


def rebuild(records: list[Recorded], store: SessionStore | None = None) -> TranscriptBuilder:
    """Feed every record at once; the builder's store holds the transcript."""
    builder = TranscriptBuilder(store)
    for record in records:
        builder.feed(record)
    builder.store.flush()
    return builder
