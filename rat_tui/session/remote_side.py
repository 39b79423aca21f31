"""Provides RemoteSide: what a session does differently when its agent runs elsewhere (`rat connect URL`, a
profile's `url`): the connection (protocol/remote.py), the host the tab and status bar show, the agent-side
working directory, no client files or terminals unless the directory is shared, and a dropped connection as
the state `disconnected` with its reason, then a reconnection (resumed, or a new connection on which the
session reattaches its agent-side session as a restart does: `session/resume` or `session/load`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
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
        session.opener.reattached = f"Reconnected to {self.host}"  # not "Agent restarted": the network came back

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
        # The next step first: a narrow status bar cuts the end, and the notice above holds the whole reason.
        store.dispatch(reducer.set_status, DISCONNECTED, f"{then} · {reason}")

    def _reconnected(self) -> None:
        self._said_drop = False
        self.session.store.dispatch(reducer.add_notice, f"Reconnected to {self.host}: nothing was lost.", "info")
        self.session.store.dispatch(reducer.set_status, WORKING if self.session.busy else READY)

    def ended(self, process: RemoteProcess) -> None:
        """The connection is over for good (the server closed it, or it cannot come back)."""
        reason = process.ending or f"The connection to {self.host} closed."
        self.session.store.dispatch(reducer.add_notice, f"{reason} Alt+R reconnects (the transcript stays).",
                                    "warning" if process.returncode == 0 else "error")
        self.session.store.dispatch(reducer.set_status, DISCONNECTED, f"Alt+R reconnects · {reason}")


def reported_text(state: Any, path: str) -> str | None:
    """A remote agent's file as its latest diff reports it (the preview shows that, never a local file of the
    same name); None when no diff named it."""
    for call in reversed(list(state.tool_calls.values())):
        for item in reversed(call.content):
            if item.get("type") == "diff" and item.get("path") == path and isinstance(item.get("newText"), str):
                return item["newText"]
    return None


# Headers whose value is a credential: journaled by name only (the history is a file anyone with the account
# reads, and is exported as it is), so a continued session goes without them unless a profile supplies them.
SECRET_HEADER = re.compile(r"auth|token|secret|key|passw|cookie|credential|signature", re.IGNORECASE)
JOURNAL_KEY = "remote"  # in the journaled session's settings


def journaled_endpoint(remote: Any) -> dict[str, Any]:
    """What the history journal keeps of a remote session's RemoteSpec, so that History's `c` reconnects by
    itself: the URL, each header's name (its value too unless it is a credential), the NAME of the token's
    environment variable (never the token), the insecure and shared switches and the agent-side directory."""
    return {
        "url": remote.url,
        "headers": [[name, None if SECRET_HEADER.search(name) else value] for name, value in remote.headers],
        "token_env": remote.token_env, "insecure": bool(remote.insecure), "shared_cwd": bool(remote.shared_cwd),
        "cwd": remote.cwd,
    }


def journaled_remote(settings: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """The RemoteSpec a journaled session's settings describe (None when it was not remote, or the record is not
    one rat wrote), and the names of the headers whose values were not journaled (credentials)."""
    from ..agents.spec import RemoteSpec

    data = settings.get(JOURNAL_KEY)
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return None, []
    pairs = [h for h in data.get("headers") or [] if isinstance(h, list) and len(h) == 2 and isinstance(h[0], str)]
    headers = tuple((name, value) for name, value in pairs if isinstance(value, str))
    withheld = [name for name, value in pairs if not isinstance(value, str)]

    def text(key: str) -> str | None:
        return data[key] if isinstance(data.get(key), str) and data[key] else None

    spec = RemoteSpec(url=data["url"], headers=headers, token_env=text("token_env"), cwd=text("cwd"),
                      insecure=data.get("insecure") is True, shared_cwd=data.get("shared_cwd") is True)
    return spec, withheld


def continued_spec(name: str, argv: list[str], settings: Mapping[str, Any], choices: list[Any],
                   protocol: int) -> tuple[Any, str | None]:
    """The agent to continue a journaled session with (History's `c`), and a warning for the user or None: a
    profile (or the agent rat was started with) of the same command line or URL, which brings its own
    environment, headers and token; else, for a remote session, its journaled endpoint (the token read again from
    its variable when it connects); else the journaled command line."""
    from dataclasses import replace

    from ..agents.spec import AgentSpec, remote_spec

    spec = next((c for c in choices if list(c.argv) == list(argv)), None)
    warning = None
    if spec is None:
        remote, withheld = journaled_remote(settings)
        if remote is not None:
            spec = remote_spec(name, remote, protocol)
            if withheld:
                warning = (f"Reconnecting to {remote.url} without the header(s) {', '.join(withheld)}: their values "
                           "are credentials, not kept in the history (a profile with this url supplies them).")
        else:
            spec = AgentSpec(name=name, argv=list(argv), env={}, is_demo=False)
    if spec.protocol != protocol:  # continue in the ACP version it spoke
        spec = replace(spec, protocol=protocol)
    return spec, warning
