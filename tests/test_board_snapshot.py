"""A snapshot of the fleet board on fixed data: sessions replayed from real recordings, one waiting on the user."""

from __future__ import annotations

from pathlib import Path

from rat_tui.agents.spec import AgentSpec
from rat_tui.history.rebuild import rebuild
from rat_tui.history.records import read_recording
from rat_tui.session.agent_session import AgentSession
from rat_tui.session.fleet import Seat
from rat_tui.state import children
from rat_tui.ui.screens.board import BoardScreen

from .helpers.app import steady
from .helpers.harness import RatThemedApp

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"
SINCE = 1000.0


def replayed(name: str, agent: str, tmp_path: Path) -> AgentSession:
    """A session (not started: no process) holding what a recording shows, every state's clock at SINCE."""
    session = AgentSession(AgentSpec(name=agent, argv=["true"], env={}, is_demo=False), tmp_path)
    rebuild(read_recording(TRACES / name).records, store=session.store)
    state = session.state
    state.status_since = SINCE
    for child in children.all_children(state):
        child.since = SINCE
    for call in state.tool_calls.values():
        call.since = SINCE
    return session


class BoardApp(RatThemedApp):
    def __init__(self, seats: list[Seat]) -> None:
        super().__init__()
        self.seats = seats

    def on_mount(self) -> None:
        self.use_rat_theme()
        self.push_screen(BoardScreen(lambda: self.seats, clock=lambda: SINCE + 65.4))


async def settle(pilot) -> None:
    await pilot.pause()
    steady(pilot.app)


def test_snapshot_board(snap_compare, tmp_path: Path) -> None:
    claude = replayed("claude-agent-acp-0.101-optin.jsonl", "claude-acp", tmp_path)
    codex = replayed("codex-acp-2.6.jsonl", "codex-acp", tmp_path)
    gemini = replayed("gemini.jsonl", "gemini", tmp_path)
    seats = [Seat(claude, 1), Seat(codex, 2, branch="rat/codex-acp-1a2b"), Seat(gemini, 3, waiting=1)]
    assert snap_compare(BoardApp(seats), terminal_size=(150, 20), run_before=settle)
