"""Provides archiving a history record's agent session (`session/archive`, unstable, ACP 1.34). No Textual.

The history list (Ctrl+R) is rat's journal; archiving belongs to the agent. A record is archived with its
agent, through an open tab running the same agent command line whose agent advertises
`sessionCapabilities.archive`, then marked in the journal so the history list hides it (until asked to show
archived records). Where no such tab is open, the record's own `initialize` answer says whether its agent
archives at all, so the message says what to do: open a tab on it, or nothing (it cannot).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..history.journal import HistoryJournal, SessionInfo
    from .agent_session import AgentSession


def advertises_archive(result: Any) -> bool:
    """Whether an `initialize` answer (v1 `agentCapabilities`, v2 `capabilities`) offers session/archive."""
    if not isinstance(result, dict):
        return False
    if isinstance(result.get("agentCapabilities"), dict):
        sessions = result["agentCapabilities"].get("sessionCapabilities")
    else:
        caps = result.get("capabilities")
        sessions = caps.get("session") if isinstance(caps, dict) else None
    return isinstance(sessions, dict) and isinstance(sessions.get("archive"), dict)


def recorded_archive(journal: HistoryJournal, record: int) -> bool:
    """Whether the record's agent advertised archiving when it was recorded (its last `initialize` answer)."""
    answers = [r.message.get("result") for r in journal.records(record, ("initialize",))
               if isinstance(r.message, dict) and "result" in r.message]
    return bool(answers) and advertises_archive(answers[-1])


def archiver(sessions: Iterable[AgentSession], argv: list[str]) -> AgentSession | None:
    """An open session of this agent command line (a remote agent's: its URL) that can archive, or None."""
    if not argv:  # a record that does not say how its agent ran names no agent
        return None
    same = [s for s in sessions if list(s.command.argv) == list(argv) and s.hello is not None]
    return next((s for s in same if s.supports("archive")), None)


async def archive_record(journal: HistoryJournal, sessions: Iterable[AgentSession], info: SessionInfo,
                         archived: bool) -> tuple[bool, str]:
    """Archive (or unarchive) the record's agent session with its agent: (done, what to tell the user)."""
    verb = "archive" if archived else "unarchive"
    agent = info.agent_title or info.agent
    if info.agent_session_id is None:
        return False, "That record has no agent session to " + verb + "."
    session = archiver(sessions, info.argv)
    if session is None:
        if not recorded_archive(journal, info.id):
            return False, f"{agent} does not {verb} sessions (it did not advertise session/archive)."
        return False, f"Open a tab on {agent} first (Ctrl+N): its agent {verb}s the session, rat only shows it."
    error = await session.archive_agent_session(info.agent_session_id, archived)
    if error is not None:
        return False, error
    journal.set_archived(info.id, archived)
    return True, (f"Archived the session with {agent} (Alt+H shows archived sessions)." if archived
                  else f"Unarchived the session with {agent}.")
