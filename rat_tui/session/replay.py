"""Provides ReplaySession: a read-only session that plays recorded messages into its store, no agent process.

It stands in for AgentSession wherever a view expects one (`SessionView` runs `session.run()`), so a
recording shows in the very widgets a live session uses: `rat replay FILE`, and the history screen.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

from .agent_session import AgentSession
from ..state import reducer
from ..history.rebuild import TranscriptBuilder
from ..history.records import Recorded
from ..protocol.sanitize import clean

REPLAYING, REPLAYED = "replaying", "replayed"
SLICE_SECONDS = 0.008  # play this long, then give the loop a turn (keys and frames keep going)
READ_ONLY = "This is a recorded session: it is read-only."


@dataclass(frozen=True)
class ReplayCommand:
    """What AgentSession wants to know of a command; a replay starts none."""

    name: str
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


class ReplaySession(AgentSession):
    """Plays `records` into the store as fast as the UI takes them; prompts are refused."""

    def __init__(self, records: list[Recorded], name: str, cwd: Path | str, *, title: str | None = None) -> None:
        super().__init__(ReplayCommand(name), Path(cwd))
        self.records = records
        self.builder = TranscriptBuilder(self.store)
        self.shell.refusal = "This is a recorded session, read-only: `!` runs commands in a live tab (Ctrl+N opens one)."
        if title:
            self.store.state.title = clean(title)

    async def run(self) -> None:
        started = time.perf_counter()
        self.store.dispatch(reducer.set_status, REPLAYING)
        slice_end = time.perf_counter() + SLICE_SECONDS
        for index, record in enumerate(self.records):
            if self._stopping:
                return
            self.builder.feed(record)
            if index % 64 == 63 and time.perf_counter() > slice_end:
                await asyncio.sleep(0)
                slice_end = time.perf_counter() + SLICE_SECONDS
        self.session_id = self.builder.agent_session_id
        self.store.dispatch(reducer.set_status, REPLAYED,
                            f"{len(self.records)} messages in {time.perf_counter() - started:.2f} s")

    @property
    def done(self) -> bool:
        return self.state.status == REPLAYED

    def can_prompt(self) -> str | None:
        return READ_ONLY

    async def cancel(self) -> bool:
        return False

    async def close(self) -> None:
        await self.stop()
