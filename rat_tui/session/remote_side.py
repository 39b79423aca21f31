"""Provides RemoteSide: what a session does differently when its agent runs elsewhere (`rat connect URL`, a
profile's `url`): the connection (protocol/remote.py), the host the tab and status bar show, the agent-side
working directory, no client files or terminals unless the directory is shared, and a dropped connection as
the state `disconnected` with its reason, then a reconnection (resumed, or a new connection on which the
session reattaches its agent-side session as a restart does: `session/resume` or `session/load`).
"""

from __future__ import annotations

import logging
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..protocol.remote import RemoteProcess, make_link
from ..protocol.remote_link import Endpoint, RemoteLink
from ..state import reducer
from ..state.models import DISCONNECTED, READY, WORKING

if TYPE_CHECKING:
    from .agent_session import AgentSession

log = logging.getLogger("rat.session")

class RemoteSide:
    """One per remote session; `spec` is the command's RemoteSpec (agents/spec.py)."""

    def __init__(self, session: AgentSession, spec: Any) -> None:
        self.session = session
        self.spec = spec
        self.host = Endpoint(spec.url).host
        self.local_files = bool(spec.shared_cwd)  # fs and terminals only on a shared directory
        self._link: RemoteLink | None = None  # a link handed over open, for the next connection
        self._said_drop = False
        session.store.dispatch(reducer.set_host, self.host)

    def new_process(self) -> RemoteProcess:
        """The next connection: on the link the last one handed over (already open), else a new link. Raises
        RemoteError (a token variable unset, an unknown scheme)."""
        link, self._link = self._link, None
        process = RemoteProcess(link, opened=True) if link is not None else RemoteProcess(make_link(self.spec.endpoint()))
        process.on_disconnected = self._disconnected
        process.on_reconnected = self._reconnected
        process.on_refused = lambda text: self.session.store.dispatch(reducer.add_notice, text, "error")
        return process

    def started(self, process: RemoteProcess) -> None:
        """Connected: the agent-side directory is the profile's, else the server's metadata's, else ours."""
        self._said_drop = False
        remote_cwd = self.spec.cwd or process.link.metadata.get("remote_cwd")
        if isinstance(remote_cwd, str) and remote_cwd.startswith("/"):
            cwd = PurePosixPath(remote_cwd)
            self.session.opener.cwd = cwd  # type: ignore[assignment]  (sent as the agent's cwd, never opened here)
            self.session.store.state.cwd = str(cwd)

    def renewed(self, process: RemoteProcess) -> bool:
        """Whether the connection came back as a new one (then the session starts over on it)."""
        if not process.renewed:
            return False
        self._link = process.handed_over()
        return True

    def _disconnected(self, reason: str, retry_in: float | None) -> None:
        store = self.session.store
        if not self._said_drop:
            self._said_drop = True
            log.warning("disconnected from %s: %s", self.host, reason)
            store.dispatch(reducer.add_notice, f"Disconnected from {self.host}: {reason}", "warning")
        then = f"reconnecting in {retry_in:g} s" if retry_in is not None else "Alt+R reconnects"
        store.dispatch(reducer.set_status, DISCONNECTED, f"{reason} · {then}")

    def _reconnected(self) -> None:
        self._said_drop = False
        self.session.store.dispatch(reducer.add_notice, f"Reconnected to {self.host}: nothing was lost.", "info")
        self.session.store.dispatch(reducer.set_status, WORKING if self.session.busy else READY)

    def ended(self, process: RemoteProcess) -> None:
        """The connection is over for good (the server closed it, or it cannot come back)."""
        reason = process.ending or f"The connection to {self.host} closed."
        self.session.store.dispatch(reducer.add_notice, f"{reason} Alt+R reconnects (the transcript stays).",
                                    "warning" if process.returncode == 0 else "error")
        self.session.store.dispatch(reducer.set_status, DISCONNECTED, f"{reason} · Alt+R reconnects")


def reported_text(state: Any, path: str) -> str | None:
    """A remote agent's file as its latest diff reports it (the preview shows that, never a local file of the
    same name); None when no diff named it."""
    for call in reversed(list(state.tool_calls.values())):
        for item in reversed(call.content):
            if item.get("type") == "diff" and item.get("path") == path and isinstance(item.get("newText"), str):
                return item["newText"]
    return None
