"""Provides Sessions: the app's open sessions, and how one is made from an agent, a directory and the config.

The registry owns the wiring a session needs beyond its agent — the config's MCP servers, client tools
and timeouts, the shared permission policy, the `--rpc-log` file, a history journal per session and the
settings a continued session had — so the app only asks for a session and shows it. Child sessions
(subagents) will hang here too.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .setup import session_setup
from .agent_session import AgentCommand, AgentSession
from .mcp_servers import configured as configured_mcp_servers
from .ui import SessionUI
from ..client_tools.settings import merged as client_tools_settings
from ..config import Config
from ..history.journal import HistoryJournal, SessionJournal
from ..history.rebuild import TERMINAL_ANSWERS, restore_terminals
from ..protocol.rpc_log import RpcLog
from ..state.permission_policy import PermissionPolicy

log = logging.getLogger("rat.sessions")


class Sessions:
    """Every open session, in the order they were opened, with its history journal."""

    def __init__(self, config: Config, policy: PermissionPolicy, rpc_log: RpcLog | None = None,
                 history: HistoryJournal | None = None) -> None:
        self.config = config
        self.policy = policy
        self.rpc_log = rpc_log
        self.history = history
        self._sessions: list[AgentSession] = []
        self.journals: dict[AgentSession, SessionJournal] = {}

    def __iter__(self) -> Iterator[AgentSession]:
        return iter(list(self._sessions))

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session: object) -> bool:
        return session in self._sessions

    def __getitem__(self, index: int) -> AgentSession:
        return self._sessions[index]

    def make(self, command: AgentCommand, cwd: Path, ui: SessionUI | None = None,
             attach_session_id: str | None = None) -> AgentSession:
        """A session for `command` in `cwd` (not started: its view runs it), journaled when history is on."""
        config = self.config
        journal = self._journal_for(command, cwd, attach_session_id)
        session = AgentSession(
            command, cwd, rpc_log=self.rpc_log, policy=self.policy, ui=ui,
            ask_outside_files=config.outside_files == "ask", attach_session_id=attach_session_id,
            recorders=[journal] if journal else [],
            mcp_config=configured_mcp_servers(config.mcp_servers, getattr(command, "mcp_servers", ())),
            request_timeout=config.request_timeout_seconds, agent_nice=config.agent_nice,
            client_tools=client_tools_settings(config.client_tools, getattr(command, "client_tools", None)),
            restore_settings=journaled_settings(journal, attach_session_id),
            setup=session_setup(config, command, cwd))  # system prompt, additional directories
        if journal is not None and attach_session_id:
            self._restore_terminals(journal, session)
        self.add(session, journal)
        return session

    def _restore_terminals(self, journal: SessionJournal, session: AgentSession) -> None:
        """A continued session: the terminal output its journal recorded, for the tool calls its load replays."""
        try:
            if self.history is not None:
                restore_terminals(self.history.records(journal.id, TERMINAL_ANSWERS), session.store)
        except Exception:  # the output is a convenience: the session opens without it
            log.exception("cannot restore the journaled terminal output")

    def add(self, session: AgentSession, journal: SessionJournal | None = None) -> None:
        """A session made elsewhere (a replay) joins the registry."""
        self._sessions.append(session)
        if journal is not None:
            self.journals[session] = journal

    def remove(self, session: AgentSession) -> None:
        if session in self._sessions:
            self._sessions.remove(session)
        self.journals.pop(session, None)

    def journal(self, session: AgentSession) -> SessionJournal | None:
        return self.journals.get(session)

    def find(self, predicate: Callable[[AgentSession], bool]) -> AgentSession | None:
        return next((session for session in self._sessions if predicate(session)), None)

    def attached_to(self, command: AgentCommand, cwd: Path, agent_session_id: str) -> AgentSession | None:
        """The open session of the same agent command line and directory that is attached (or attaching)
        to the agent session `agent_session_id`: continuing that one again must not open a second."""
        argv, where = list(command.argv), os.path.abspath(cwd)

        def same(session: AgentSession) -> bool:
            current = session.session_id if session.session_id is not None else session.attach_session_id
            return (current == agent_session_id and list(session.command.argv) == argv
                    and os.path.abspath(session.cwd) == where)

        return self.find(same)

    async def stop_all(self) -> None:
        """Every agent process ends with the app."""
        await asyncio.gather(*(session.stop() for session in self._sessions), return_exceptions=True)

    def _journal_for(self, command: AgentCommand, cwd: Path, attach_session_id: str | None) -> SessionJournal | None:
        if self.history is None:
            return None
        try:
            journal = self.history.start_session(command.name, list(command.argv), os.path.abspath(cwd),
                                                 attach_session_id)
            remote = getattr(command, "remote", None)
            if remote is not None:  # History's `c` reconnects from this (no secret is kept)
                from .remote_side import JOURNAL_KEY, journaled_endpoint

                journal.keep_setting(JOURNAL_KEY, journaled_endpoint(remote))
            return journal
        except Exception:
            log.exception("cannot journal the session")
            return None


def journaled_settings(journal: SessionJournal | None, attach_session_id: str | None) -> dict[str, Any] | None:
    """A continued session's recorded mode, model and config values, set again once it is reattached."""
    if journal is None or not attach_session_id or not journal.settings:
        return None
    return json.loads(json.dumps(journal.settings))  # a copy: the journal goes on recording changes
