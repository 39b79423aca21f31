"""Provides Opener: which agent-side session a tab gets — `session/new`, or `session/load` / `session/resume`
of one it had — and the replay a load streams before it answers.

The rules, from the ACP schema:
- `session/load` only when `agentCapabilities.loadSession` is true; the agent replays the history as
  `session/update`s *before* it answers, so the session id being loaded (`loading`) already takes updates
  and the replay lands in the store as it streams. `session/resume` (`sessionCapabilities.resume`) does the
  same without a replay (in ACP v2 a resume of a tab that shows nothing yet asks for the replay:
  `replayFrom: start`, streamed like a load's).
- A restart keeps the store: the transcript on screen stays. When the new process reloads the session, the
  replayed history is *not* added a second time: transcript updates (messages, thoughts, tool calls,
  notices) are counted and dropped until the load answers, while session facts (commands, modes, config,
  plan, title, usage) are applied. Our transcript may then lack what the agent persisted after our last
  frame, which beats showing the whole history twice.
- The replay ends when the reattach's answer is routed (`replaying`), not when `open` resumes: updates right
  behind the answer are live. The subagents known then are marked replayed (state/children.py
  `mark_replayed`) until the agent names them again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..protocol.client import AUTH_REQUIRED, AcpClient
from ..protocol.router import RpcError
from ..state import children, reducer
from ..state.store import SessionStore

REATTACH_METHODS = ("session/load", "session/resume")
# Updates that add to the transcript: dropped while a restarted agent replays what is already shown.
TRANSCRIPT_UPDATES = frozenset({
    "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "notice",
    "compaction_update", "compaction_summary_chunk", "subagent_update", "session_message", "session_message_chunk",
})
NOT_REMEMBERED = "New agent session: the earlier conversation is kept above, but the agent does not remember it."


class Opener:
    """One per session: opens the agent-side session and filters a load's replay."""

    def __init__(self, store: SessionStore, cwd: Path, client: Callable[[], AcpClient | None],
                 supports: Callable[[str], bool], mcp_servers: Callable[[], Sequence[dict[str, Any]]]) -> None:
        self.store = store
        self.cwd = cwd
        self.client = client
        self.supports = supports
        self.mcp_servers = mcp_servers
        self.loading: str | None = None  # the session id whose `session/load` runs (its replay streams in)
        self.replay: str | None = None  # "show" (a fresh tab) or "skip" (a restart) while session/load runs
        self.replay_skipped = 0
        # How a reattach of a tab that shows its transcript begins its notice: a local agent was restarted; a
        # remote one's connection came back (session/remote_side.py says "Reconnected to HOST").
        self.reattached = "Agent restarted"

    def _notice(self, text: str, severity: str = "info") -> None:
        self.store.dispatch(reducer.add_notice, text, severity)

    async def open(self, target: str | None) -> tuple[str, dict[str, Any]]:
        """Reattach to `target` (load, else resume) or start a new session; returns its id and the answer."""
        return await self._open(target)

    async def _open(self, target: str | None) -> tuple[str, dict[str, Any]]:
        client = self.client()
        assert client is not None
        populated = bool(self.store.state.entries)  # a restart (or a tab that already shows a transcript)
        if target and self.supports("load"):
            try:
                result = await self._load(client, target, populated)
            except RpcError as error:
                if error.code == AUTH_REQUIRED:
                    raise
                self._notice(f"The agent could not load session {target}: {error}", "warning")
            else:
                if populated:
                    self._notice(f"{self.reattached}; session {target} reloaded "
                                 f"({self.replay_skipped} replayed updates not shown again: they are above).")
                return target, result
        elif target and self.supports("resume"):
            replay = not populated and client.version >= 2  # v2 replays on resume, when asked
            try:
                result = await self._resume(client, target, replay)
            except RpcError as error:
                if error.code == AUTH_REQUIRED:
                    raise
                self._notice(f"The agent could not resume session {target}: {error}", "warning")
            else:
                self._notice(f"{self.reattached + '; s' if populated else 'S'}ession {target} resumed "
                             + ("(its history replayed above)." if replay else
                                "(its history is above, not replayed again)." if client.version >= 2 else
                                "(the agent does not replay its history on resume)."))
                return target, result
        elif target:
            self._notice("This agent cannot reopen a session (it advertises neither session/load nor "
                         "session/resume).", "warning")
        if target:  # a new session instead: whatever subagents were on screen belonged to the old one
            self.store.dispatch(children.mark_replayed)
        result = await client.new_session(self.cwd, self.mcp_servers())
        if target and populated:
            self._notice(NOT_REMEMBERED, "warning")
        elif target:
            self._notice(f"Started a new session instead of {target}.", "warning")
        return result["sessionId"], result

    async def _load(self, client: AcpClient, target: str, populated: bool) -> dict[str, Any]:
        """`session/load`, with the replay applied as it arrives (or, on a restart, skipped)."""
        self.loading = target  # the replay comes before the answer and must land in this session
        self.replay = "skip" if populated else "show"
        self.replay_skipped = 0
        try:
            return await client.load_session(target, self.cwd, self.mcp_servers())
        finally:
            self.loading = None
            self._replay_over()

    async def _resume(self, client: AcpClient, target: str, replay: bool) -> dict[str, Any]:
        """`session/resume`; with `replay` (v2, `replayFrom: start`) the history streams in first, like a
        load's: shown, not tracked as changes."""
        if not replay:
            try:
                return await client.resume_session(target, self.cwd, self.mcp_servers())
            finally:
                self.store.dispatch(children.mark_replayed)  # a restart's subagents were the old process's
        self.loading, self.replay = target, "show"
        try:
            return await client.resume_session(target, self.cwd, self.mcp_servers(), replay=True)
        finally:
            self.loading = None
            self._replay_over()

    def replaying(self) -> bool:
        """Whether a reattach's replay is streaming: its request is still unanswered. The answer is routed in
        order with the updates, so what comes right behind it is live, though `open` has not resumed yet (Claude
        0.109 announces its live subagents again there)."""
        if self.replay is None:
            return False
        client = self.client()
        if client is not None and not any(method in REATTACH_METHODS
                                          for _, method, _ in client.connection.pending_requests()):
            self._replay_over()
            return False
        return True

    def _replay_over(self) -> None:
        if self.replay is None:
            return
        self.replay = None
        # The subagents replayed (or known from before a restart) are history until the agent names them again.
        self.store.dispatch(children.mark_replayed)

    def accept_replayed(self, update: Any) -> bool:
        """During a restart's load: drop what the transcript already shows, keep session facts."""
        if self.replay != "skip" or not self.replaying():
            return True
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        if kind in TRANSCRIPT_UPDATES:
            self.replay_skipped += 1
            return False
        return True
