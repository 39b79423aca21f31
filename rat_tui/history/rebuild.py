"""Provides TranscriptBuilder: recorded messages back into a SessionStore, through the same reducer as live.

The live session applies `session/update` notifications and adds the user's prompt when it sends
`session/prompt`; the builder does the same from the record, so a rebuilt transcript is what the
user saw. A `session/load` makes the agent replay the whole conversation: when the transcript already
holds it (our journal of a continued session, the load phase of a trace), that replay is skipped.

The recording says which ACP version it speaks: the `initialize` answer's `protocolVersion`. From a
v2 answer on, updates go through the v2 mapping (the store's), a prompt's answer no longer ends the
turn (the session's `state_update idle` does), `session/resume` with `replayFrom` replays like a
load, and updates of other sessions (a subagent's) are left out, as a live session leaves them out.
"""

from __future__ import annotations

from typing import Any

from ..state import children, quota, reducer, shell
from ..state.store import SessionStore
from .journal import prompt_text
from .records import IN, OUT, Recorded

# The agent's requests whose answers carry a client terminal's output or exit: the journal's only record
# of what the terminal printed (it ran here; its output reached the card without crossing the wire).
TERMINAL_ANSWERS = ("terminal/output", "terminal/wait_for_exit")


class TranscriptBuilder:
    """Feed it records in order; `store` holds the transcript so far."""

    def __init__(self, store: SessionStore | None = None) -> None:
        self.store = store or SessionStore()
        self.requests: dict[tuple[str, Any], str] = {}  # (direction, id) of a request -> its method
        self.capabilities: dict[str, Any] = {}
        self.agent_session_id: str | None = None
        self.terminal_requests: dict[Any, Any] = {}  # the agent's terminal/output request id -> terminalId
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
                if record.direction == IN and method in TERMINAL_ANSWERS:
                    self.terminal_requests[_key(message["id"])] = params.get("terminalId")
            if record.direction == OUT:
                self._outgoing(method, params)
            elif method == "session/update":
                if self.protocol_version >= 2:
                    self._update_v2(params)
                elif not (self._loading and self._skip_replay):
                    self._update(params)
            return
        if record.direction == IN and "id" in message:
            asked = record.method or self.requests.pop((OUT, _key(message["id"])), None)
            self._answer(asked, message)
        elif record.direction == OUT and "id" in message:
            asked = record.method or self.requests.pop((IN, _key(message["id"])), None)
            if asked in TERMINAL_ANSWERS:
                self._terminal(asked, message)

    def _terminal(self, method: str, message: dict[str, Any]) -> None:
        """Our answer to the agent's `terminal/output` or `terminal/wait_for_exit`: the output the tool
        card showed live (the terminal itself ran here, not on the wire), and how the command ended."""
        result = message.get("result")
        asked = self.terminal_requests.pop(_key(message.get("id")), None)
        if not isinstance(result, dict) or not isinstance(asked, str):
            return
        output = result.get("output") if method == "terminal/output" else None
        status = result.get("exitStatus") if method == "terminal/output" else result
        exited = isinstance(status, dict) and ("exitCode" in status or "signal" in status)
        code = status.get("exitCode") if isinstance(status, dict) else None
        signal = status.get("signal") if isinstance(status, dict) else None
        self.store.dispatch(reducer.terminal_snapshot, asked, output if isinstance(output, str) else None, exited,
                            code if isinstance(code, int) and not isinstance(code, bool) else None,
                            signal if isinstance(signal, str) else None)

    @property
    def protocol_version(self) -> int:
        """The ACP version of the recording, from its `initialize` answer (1 until one says otherwise)."""
        return self.store.state.protocol_version

    def _update_v2(self, params: dict[str, Any]) -> None:
        update = params.get("update")
        session_id = params.get("sessionId")
        if self.agent_session_id is not None and session_id != self.agent_session_id:
            return  # a subagent's own session
        if not (self._loading and self._skip_replay):
            self.store.apply_update(update)
        if isinstance(update, dict) and update.get("sessionUpdate") == "state_update" and update.get("state") == "idle":
            if self.store.state.status == "working":  # the end of a prompt's turn
                self._turn_over(update)

    def _turn_over(self, idle: dict[str, Any]) -> None:
        dispatch = self.store.dispatch
        stop = idle.get("stopReason") if isinstance(idle.get("stopReason"), str) else "end_turn"
        dispatch(reducer.end_turn, stop)
        if stop == "cancelled":
            dispatch(reducer.add_notice, "Turn cancelled.", "info")
        elif stop == "error":
            error = idle.get("error") if isinstance(idle.get("error"), dict) else {}
            dispatch(reducer.add_notice, f"The agent failed this turn: {error.get('message', 'error')}", "error")
        dispatch(reducer.set_status, "ready")

    def _update(self, params: dict[str, Any]) -> None:
        """A child session's updates go to its card (state/children.py); another session's are not ours."""
        session_id, own = params.get("sessionId"), self.agent_session_id
        if isinstance(session_id, str) and own and session_id != own and not children.find(self.store.state, session_id):
            return
        self.store.apply_notification(params)

    def _outgoing(self, method: str, params: dict[str, Any]) -> None:
        dispatch = self.store.dispatch
        if method == "session/prompt":
            dispatch(reducer.add_user_message, prompt_text(params.get("prompt")))
            dispatch(reducer.set_status, "working")
        elif method == shell.RECORD_METHOD:  # a `!command` the user ran in the tab's own shell
            dispatch(shell.apply_record, params)
        elif method == "session/load" or (method == "session/resume" and "replayFrom" in params):
            self._loading = True
            self._skip_replay = bool(self.store.state.entries)

    def _answer(self, method: str | None, message: dict[str, Any]) -> None:
        from ..protocol import v2  # not before a journal is read: a v1 agent's startup never needs it

        dispatch = self.store.dispatch
        result = message.get("result")
        error = message.get("error")
        if method == "initialize" and isinstance(result, dict):
            version = result.get("protocolVersion")
            dispatch(reducer.set_protocol, v2.PROTOCOL_V2 if version == v2.PROTOCOL_V2 else 1)
            if version == v2.PROTOCOL_V2:
                self.capabilities = v2.v1_capabilities(result)
                result = {**result, "agentInfo": result.get("info")}
            capabilities = self.capabilities if version == v2.PROTOCOL_V2 else result.get("agentCapabilities")
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
                if self.protocol_version >= 2:
                    result = v2.V2Codec().result(method, result)  # configOptions by configId, commands
                dispatch(reducer.set_session, session_id, result)
            elif isinstance(error, dict):
                dispatch(reducer.add_notice, f"The agent refused {method}: {error.get('message', error)}", "error")
        elif method == "session/prompt" and self.protocol_version >= 2:
            if not isinstance(result, dict):  # refused before insertion; else the turn goes on until idle
                detail = error.get("message", error) if isinstance(error, dict) else error
                dispatch(reducer.end_turn, "error")
                dispatch(reducer.add_notice, f"The agent failed this turn: {detail}", "error")
                dispatch(reducer.set_status, "ready")
        elif method == "session/prompt":
            if isinstance(result, dict):
                stop = str(result.get("stopReason", "end_turn"))
                if isinstance(result.get("_meta"), dict):
                    dispatch(quota.set_quota, result["_meta"])
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
                options = result["configOptions"]
                dispatch(reducer.set_config_options,
                         v2.v1_config_options(options) if self.protocol_version >= 2 else options)

    @property
    def can_continue(self) -> bool:
        """The agent said it can load or resume sessions (in the initialize answer recorded)."""
        sessions = self.capabilities.get("sessionCapabilities")
        return bool(self.capabilities.get("loadSession")) or (isinstance(sessions, dict) and "resume" in sessions)


def _key(value: Any) -> Any:
    return value if isinstance(value, (str, int)) else repr(value)


def restore_terminals(records: list[Recorded], store: SessionStore) -> None:
    """The client terminals' output a journal recorded (the agent's `terminal/output` and `wait_for_exit`
    requests and our answers), into `store`: a continued session's replayed tool calls show it again."""
    builder = TranscriptBuilder(store)
    for record in records:
        message = record.message
        if isinstance(message, dict) and (message.get("method") in TERMINAL_ANSWERS or record.method in TERMINAL_ANSWERS):
            builder.feed(record)


def rebuild(records: list[Recorded], store: SessionStore | None = None) -> TranscriptBuilder:
    """Feed every record at once; the builder's store holds the transcript."""
    builder = TranscriptBuilder(store)
    for record in records:
        builder.feed(record)
    builder.store.flush()
    return builder
