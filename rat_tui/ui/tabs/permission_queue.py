"""Provides PermissionQueue: permission dialogs shown one at a time, first asked first shown, through
the app's RequestGate (ui/tabs/request_gate.py: no stray key answers them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .request_gate import RequestGate

if TYPE_CHECKING:
    from ..screens.permission import PermissionScreen
    from .view import SessionView


class PermissionQueue:
    """Every session's requests share the gate's queue: a dialog never hides another's answer."""

    def __init__(self, gate: RequestGate) -> None:
        self.gate = gate

    async def ask(self, view: SessionView, request: dict[str, Any], tool_call: dict[str, Any],
                  agent_name: str | None = None) -> dict[str, Any] | None:
        """`agent_name`: who asks, when not the tab's agent itself (a subagent, children_ui.asking_name)."""
        agent_name = agent_name or view.session.state.agent_name

        def screen() -> PermissionScreen:
            from ..screens.permission import PermissionScreen  # not before the first frame (RatApp._warm_up)

            return PermissionScreen(request, agent_name=agent_name, tool_call=tool_call,
                                    queue_position=(1, len(self.gate.pending)))

        return await self.gate.ask(view, "permission request", screen)
