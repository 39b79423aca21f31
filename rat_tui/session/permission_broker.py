"""Provides PermissionBroker: answers `session/request_permission` from a rule or by asking the user."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..state import children, reducer
from ..state.permission_policy import PermissionPolicy, choose_option, merge_tool_call, remembered_decision
from ..state.store import SessionStore
from ..protocol.sanitize import clean_data

log = logging.getLogger("rat.permissions")

# (request params, what we know of the tool call) -> the chosen option, or None for "cancelled".
AskUser = Callable[[dict[str, Any], dict[str, Any]], Awaitable[dict[str, Any] | None]]
CANCELLED = {"outcome": {"outcome": "cancelled"}}
T = TypeVar("T")


async def ask_in_task(asking: set[asyncio.Task[Any]], ask: Awaitable[T], *also: asyncio.Future[Any],
                      name: str | None = None, changed: Callable[[], None] | None = None) -> asyncio.Task[T]:
    """Run a dialog in its own task, kept in `asking` while open (so `cancel_all` can close it), and wait
    for it or any of `also`. If the waiter is cancelled (the agent withdrew the request) the dialog closes
    too. Returns the task, done unless one of `also` finished first; `changed` runs when `asking` changes."""
    task = asyncio.create_task(ask, name=name)
    asking.add(task)
    if changed is not None:
        changed()
    try:
        await asyncio.wait({task, *also}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        asking.discard(task)
        if changed is not None:
            changed()
    return task


def selected(option: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}


class PermissionBroker:
    """One per session. The UI plugs in `ask`; without it every request is answered cancelled.

    The question runs in its own task so that a cancelled turn (answer `cancelled`) and an agent's
    `$/cancel_request` (the handler task itself is cancelled, the router answers -32800) both close
    the dialog.
    """

    def __init__(self, store: SessionStore, agent: Callable[[], str], policy: PermissionPolicy | None = None) -> None:
        self.store = store
        self.agent = agent
        self.policy = policy
        self.ask: AskUser | None = None
        # Set by the session: awaited before the request's tool call is applied as an update (after the
        # updates held for the ACP models, and the models imported off the loop when it needs them).
        self.before_apply: Callable[[dict[str, Any]], Awaitable[None]] | None = None
        self._asking: set[asyncio.Task[dict[str, Any] | None]] = set()
        self._stops: dict[str, set[asyncio.Future[None]]] = {}

    @property
    def pending(self) -> int:
        return len(self._asking)

    async def handle(self, params: dict[str, Any]) -> dict[str, Any]:
        request_call = params.get("toolCall") if isinstance(params.get("toolCall"), dict) else {}
        call_id = request_call.get("toolCallId")
        # A subagent asks under its own sessionId: its call goes to its card (state/children.py).
        child = children.find(self.store.state, params.get("sessionId"))
        if isinstance(call_id, str):
            # The request may be the first sight of the call (Gemini): show it as a card too.
            update = {**request_call, "sessionUpdate": "tool_call_update"}
            if self.before_apply is not None:
                await self.before_apply(update)
            self.store.apply_notification({"sessionId": params.get("sessionId"), "update": update})
        calls = child.state.tool_calls if child is not None else self.store.state.tool_calls
        known = calls.get(call_id) if isinstance(call_id, str) else None
        tool_call = merge_tool_call(_as_wire(known), request_call)
        options = [o for o in params.get("options") or [] if isinstance(o, dict) and "optionId" in o]
        auto = self._from_rule(tool_call, options)
        if auto is not None:
            return auto
        if self.ask is None or not options:
            return CANCELLED
        # The dialog shows what the agent sent: sanitised copies (the answer maps back to the raw option).
        shown_params, shown_call = clean_data(params), clean_data(tool_call)
        # Cancelling that child (session.children.cancel_child) closes its questions, never the parent's.
        stop = asyncio.get_running_loop().create_future()
        sid = params.get("sessionId") if isinstance(params.get("sessionId"), str) else ""
        self._stops.setdefault(sid, set()).add(stop)
        try:
            question = await ask_in_task(self._asking, self.ask(shown_params, shown_call), stop,
                                         name="permission-question",
                                         changed=lambda: self._count(sid if child is not None else None))
        finally:
            self._stops[sid].discard(stop)
            if child is not None:
                self._count(sid)
        if not question.done():
            question.cancel()
            return CANCELLED
        if question.cancelled() or question.exception() is not None:
            if not question.cancelled():
                log.error("permission dialog failed", exc_info=question.exception())
            return CANCELLED
        chosen = question.result()
        by_shown_id = {clean_data(o["optionId"]): o for o in options}
        option = by_shown_id.get(chosen.get("optionId")) if isinstance(chosen, dict) else None
        if option is None:
            return CANCELLED
        decision = remembered_decision(option)
        if decision is not None and self.policy is not None:
            rule = self.policy.remember(self.agent(), tool_call, decision)
            log.info("remembered rule %s for %s", rule.pattern, self.agent())
        self._note_rejection(tool_call, option)
        return selected(option)

    def _note_rejection(self, tool_call: dict[str, Any], option: dict[str, Any]) -> None:
        """The card of a call the agent was told not to run says so when it fails (agents end it `failed`)."""
        if str(option.get("kind", "")).startswith("reject") and isinstance(tool_call.get("toolCallId"), str):
            self.store.dispatch(reducer.mark_rejected, tool_call["toolCallId"])

    def _from_rule(self, tool_call: dict[str, Any], options: list[dict[str, Any]]) -> dict[str, Any] | None:
        if self.policy is None:
            return None
        rule = self.policy.match(self.agent(), tool_call)
        if rule is None:
            return None
        option = choose_option(options, rule.decision)
        if option is None:
            return None
        verb = "allowed" if rule.decision == "allow" else "rejected"
        note = f"auto-{verb} by rule: {rule.kind or 'any'} {rule.pattern or '*'}"
        if isinstance(tool_call.get("toolCallId"), str):
            self.store.dispatch(reducer.mark_auto_decision, tool_call["toolCallId"], note)
        self._note_rejection(tool_call, option)
        return selected(option)

    def by_rule(self, tool_call_id: str, options: list[dict[str, Any]]) -> dict[str, Any] | None:
        """A remembered rule's answer for a tool call already in the store, or None; never asks."""
        return self._from_rule(_as_wire(self.store.state.tool_calls.get(tool_call_id)) or {}, options)

    def cancel_all(self) -> None:
        """The turn was cancelled: every open question is answered `cancelled`."""
        for question in list(self._asking):
            question.cancel()

    def cancel_for(self, session_id: str) -> None:
        """A child was cancelled: its open questions are answered `cancelled`."""
        for stop in list(self._stops.get(session_id, ())):
            if not stop.done():
                stop.set_result(None)

    def _count(self, child_id: str | None = None) -> None:
        self.store.dispatch(reducer.set_pending_permissions, len(self._asking))
        if child_id is not None:
            waiting = sum(1 for stop in self._stops.get(child_id, ()) if not stop.done())
            self.store.dispatch(children.set_pending, child_id, waiting)


def _as_wire(call: Any) -> dict[str, Any] | None:
    """A ToolCallEntry as the wire-shaped dict the policy helpers read."""
    if call is None:
        return None
    wire = {"toolCallId": call.tool_call_id, "title": call.title, "kind": call.kind, "status": call.status,
            "content": call.content, "locations": call.locations, "rawInput": call.raw_input}
    return {k: v for k, v in wire.items() if v is not None}
