"""Provides SessionUI: everything the engine asks of the screen, passed to AgentSession at construction.

The engine never reaches for widgets: questions for the user (permissions, the agent's forms, files
outside the project, logins), the prompt queue's changes and short messages all go through this one
interface, the way the MCP SDK's ClientSession takes its callbacks. `HeadlessUI` answers as if nobody
were there (requests cancelled, access refused); replays and tests use it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..client_tools.tools import ToolsUI
    from .elicitation_broker import Elicitation

log = logging.getLogger("rat.session")


class SessionUI(Protocol):
    """The screen, as one session sees it."""

    async def ask_permission(self, request: dict[str, Any], tool_call: dict[str, Any]) -> dict[str, Any] | None:
        """A `session/request_permission`: the chosen option (`{"optionId": ...}`), or None to cancel."""
        ...

    async def ask_elicitation(self, elicitation: Elicitation) -> dict[str, Any] | None:
        """The agent's form or link: the answer to send (`{"action": ...}`), or None for `cancel`."""
        ...

    async def ask_outside(self, path: Path, access: str) -> bool:
        """The agent wants `access` ("read" / "write") to a file outside the session's directories."""
        ...

    def login_needed(self, methods: list[dict[str, Any]]) -> None:
        """The agent asked for a login (-32000); `methods` are its auth methods."""
        ...

    def give_back(self, text: str) -> bool:
        """A prompt that did not go out: put it in the composer if that is empty; False when it holds a draft."""
        ...

    def prompts_changed(self) -> None:
        """The queue of prompts waiting for the turn to end changed."""
        ...

    def tell(self, text: str, severity: str = "information", title: str = "", timeout: float = 3,
             about_state: bool = False) -> None:
        """A short message to the user that is not part of the transcript (a toast); `about_state`: it tells of
        the session's state (starting, a turn running, cancelling, a failed start), so it goes when that changes."""
        ...

    @property
    def tools(self) -> ToolsUI | None:
        """What rat-tui's own MCP tools need from the screen, or None where there is no screen."""
        ...


class HeadlessUI:
    """No one at the keyboard: every question is cancelled or refused, messages go to the log."""

    async def ask_permission(self, request: dict[str, Any], tool_call: dict[str, Any]) -> dict[str, Any] | None:
        return None

    async def ask_elicitation(self, elicitation: Elicitation) -> dict[str, Any] | None:
        return None

    async def ask_outside(self, path: Path, access: str) -> bool:
        return False

    def login_needed(self, methods: list[dict[str, Any]]) -> None:
        log.info("the agent asked for a login; nobody is there to give it")

    def give_back(self, text: str) -> bool:
        return False

    def prompts_changed(self) -> None:
        pass

    def tell(self, text: str, severity: str = "information", title: str = "", timeout: float = 3,
             about_state: bool = False) -> None:
        log.info("%s%s", f"{title}: " if title else "", text)

    @property
    def tools(self) -> ToolsUI | None:
        return None
