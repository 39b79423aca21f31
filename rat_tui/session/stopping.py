"""Provides stopping one piece of work without cancelling the rest: a terminal, a tool call, a subagent, a turn.

- a client terminal (v1: rat runs the command): killed here, as `terminal/kill` would; the agent's
  `terminal/wait_for_exit` returns and its turn goes on;
- a tool call: its running client terminals are killed; on v2 a call advertising `capabilities.cancel` gets
  `tool_call/cancel` (the agent confirms with a final status); otherwise it cannot be stopped alone;
- an agent-owned terminal (v2): `terminal/cancel`;
- a subagent: `session/cancel` with its sessionId (session/children.py), where it allows it;
- the turn: `session/cancel`, as Esc.

Every function answers a `Stopped` saying what happened in words for the UI (a toast and the log). What the
user stopped is marked (state/stopped.py) and reads "stopped by you", a state and never an error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..protocol.router import RpcError
from ..state import children, stopped
from ..state.models import ChildSessionEntry, SessionState, ToolCallEntry
from .children import cancel_child

log = logging.getLogger("rat.stopping")

FINAL = {"completed", "failed", "cancelled"}


@dataclass(frozen=True)
class Stopped:
    ok: bool
    message: str


def _state_of(session: Any, session_id: str | None) -> SessionState:
    if session_id is None or session_id == session.state.session_id:
        return session.state
    child = children.find(session.state, session_id)
    return child.state if child is not None else session.state


def call_terminals(call: ToolCallEntry) -> list[str]:
    return [str(item["terminalId"]) for item in call.content
            if isinstance(item, dict) and item.get("type") == "terminal" and item.get("terminalId")]


def can_stop_call(session: Any, call: ToolCallEntry) -> bool:
    """Whether one key can stop this call alone (a running client terminal, or v2 `capabilities.cancel`)."""
    if call.status in FINAL:
        return False
    if any(session.terminals.running(tid) for tid in call_terminals(call)):
        return True
    if session.state.protocol_version == 2 and any(
            (t := session.state.terminals.get(tid)) is not None and t.cancellable and not t.exited
            for tid in call_terminals(call)):
        return True
    return session.state.protocol_version == 2 and isinstance(call.capabilities, dict) and "cancel" in call.capabilities


async def stop_terminal(session: Any, terminal_id: str, session_id: str | None = None) -> Stopped:
    if session.terminals.running(terminal_id):
        session.store.dispatch(stopped.terminal_stopped, terminal_id, session_id)
        await session.terminals.stop(terminal_id)
        return Stopped(True, "Stopped the command; the agent's turn goes on.")
    state = _state_of(session, session_id)
    terminal = state.terminals.get(terminal_id)
    if session.state.protocol_version == 2 and terminal is not None and not terminal.exited:
        if not terminal.cancellable:
            return Stopped(False, "The agent does not let that terminal be stopped alone; Esc cancels the turn.")
        try:
            await session.connection.request("terminal/cancel", {"sessionId": session_id or session.session_id,
                                                                 "terminalId": terminal_id})
        except RpcError as error:
            return Stopped(False, f"The agent did not stop its terminal: {error.message}")
        except Exception as error:  # the connection is gone: the session's status says so
            return Stopped(False, f"Could not reach the agent: {error}")
        session.store.dispatch(stopped.terminal_stopped, terminal_id, session_id)
        return Stopped(True, "Asked the agent to stop its terminal.")
    return Stopped(False, "That command is not running any more.")


async def stop_tool_call(session: Any, call: ToolCallEntry, session_id: str | None = None) -> Stopped:
    if call.status in FINAL:
        return Stopped(False, f"That tool call has already ended ({call.status}).")
    running = [tid for tid in call_terminals(call) if session.terminals.running(tid)]
    state = _state_of(session, session_id)
    agent_owned = [tid for tid in call_terminals(call) if session.state.protocol_version == 2
                   and (t := state.terminals.get(tid)) is not None and not t.exited and t.cancellable]
    if running:
        session.store.dispatch(stopped.tool_call_stopped, call.tool_call_id, session_id)
        for terminal_id in running:
            session.store.dispatch(stopped.terminal_stopped, terminal_id, session_id)
            await session.terminals.stop(terminal_id)
        return Stopped(True, "Stopped the command; the agent's turn goes on.")
    if session.state.protocol_version == 2 and isinstance(call.capabilities, dict) and "cancel" in call.capabilities:
        try:
            await session.connection.request("tool_call/cancel", {"sessionId": session_id or session.session_id,
                                                                  "toolCallId": call.tool_call_id})
        except RpcError as error:  # -32602: unknown, already final or not cancellable
            return Stopped(False, f"The agent did not stop that tool call: {error.message}")
        except Exception as error:
            return Stopped(False, f"Could not reach the agent: {error}")
        session.store.dispatch(stopped.tool_call_stopped, call.tool_call_id, session_id)
        return Stopped(True, "Asked the agent to stop that tool call; the turn goes on.")
    if agent_owned:  # process-backed work is stopped through its terminal
        results = [await stop_terminal(session, tid, session_id) for tid in agent_owned]
        if any(result.ok for result in results):
            session.store.dispatch(stopped.tool_call_stopped, call.tool_call_id, session_id)
            return Stopped(True, "Asked the agent to stop that command; the turn goes on.")
        return results[0]
    return Stopped(False, "This agent offers no way to stop one tool call; Esc cancels the whole turn.")


async def stop_child(session: Any, child: ChildSessionEntry) -> Stopped:
    if not child.running:
        return Stopped(False, f"{child.name} is not running.")
    if not child.can_cancel:
        return Stopped(False, f"The agent does not let {child.name} be cancelled alone.")
    if not await cancel_child(session, child):
        return Stopped(False, f"Could not cancel {child.name}.")
    return Stopped(True, f"Cancelled {child.name}; the parent's turn goes on.")


async def stop_turn(session: Any) -> Stopped:
    if not session.busy:
        return Stopped(False, "No turn is running there.")
    session.store.dispatch(stopped.turn_stopped)
    if not await session.cancel():
        return Stopped(False, "Could not cancel the turn.")
    return Stopped(True, "Cancelling the turn.")


def find_call(session: Any, tool_call_id: str, session_id: str | None = None) -> ToolCallEntry | None:
    return _state_of(session, session_id).tool_calls.get(tool_call_id)
