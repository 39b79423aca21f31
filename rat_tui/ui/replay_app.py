"""Provides ReplayApp: `rat replay FILE`, the app with a recorded session in its first tab and no agent."""

from __future__ import annotations

import os
from pathlib import Path

from ..session.agent_session import AgentSession
from ..app import RatApp
from ..agents.spec import demo_agent
from ..config import Config
from ..history.records import Recording
from ..session.replay import READ_ONLY, ReplayCommand, ReplaySession


class ReplayApp(RatApp):
    """The first tab plays the recording read-only; Ctrl+N still opens live sessions beside it."""

    def __init__(self, recording: Recording, source: Path, config: Config | None = None,
                 problems: list[str] | None = None) -> None:
        facts = recording.session
        self.recording = recording
        self.replay_name = str(facts.get("agent_title") or facts.get("agent") or Path(source).stem)
        cwd = facts.get("cwd") if isinstance(facts.get("cwd"), str) and os.path.isdir(facts["cwd"]) else os.getcwd()
        self._skipped_note = (f"{source}: {recording.skipped} line(s) that are not recorded messages were skipped."
                              if recording.skipped else None)
        self._replay_pending = True
        super().__init__(ReplayCommand(self.replay_name), Path(cwd), config=config, problems=problems)
        self.launched = demo_agent()  # what Ctrl+N offers first: a replay is no agent to start again

    def on_mount(self) -> None:  # Textual runs RatApp.on_mount too (handlers are called along the MRO)
        self.tabs.views[0].composer.placeholder = READ_ONLY
        if self._skipped_note:
            self.report_problem(self._skipped_note, title="Replay")

    def make_session(self, command, cwd: Path, attach_session_id: str | None = None) -> AgentSession:
        if self._replay_pending:
            self._replay_pending = False
            session = ReplaySession(self.recording.records, self.replay_name, cwd,
                                    title=self.recording.session.get("title"))
            self.sessions.add(session)
            return session
        return super().make_session(command, cwd, attach_session_id)
