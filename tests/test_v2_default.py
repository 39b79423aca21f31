"""ACP v2 by default for the agents proven on it: the built-in manifests of claude-agent-acp (0.101+) and
codex-acp (2.6+) ask for v2, `--protocol 1` still forces v1, and their v2 recordings show subagents and
`/compact` in the app as the v1 opt-in recordings do (tests/fixtures/acp-traces/v2/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.agents.catalog import load_catalog
from rat_tui.cli import parse_args, resolve_agent
from rat_tui.config import validate_config
from rat_tui.history.records import read_recording
from rat_tui.session.fleet import Seat, seat_rows
from rat_tui.state.models import ChildSessionEntry, CompactionEntry
from rat_tui.ui.replay_app import ReplayApp

from .helpers.history import replayed_view

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces" / "v2"
ON_V2 = {"claude-acp", "codex-acp"}


def test_the_builtin_manifests_choose_v2_for_claude_and_codex(tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    folder.mkdir()
    catalog = load_catalog(None, user_dir=folder)
    assert {agent.id for agent in catalog.agents if agent.protocol == 2} == ON_V2
    assert all(agent.protocol == 1 for agent in catalog.agents if agent.id not in ON_V2)


@pytest.mark.parametrize("name,program", [("claude", "claude-agent-acp"), ("codex", "codex-acp")])
def test_protocol_1_still_forces_v1(name: str, program: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / program).write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / program).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user manifests over the built-ins
    config, _ = validate_config({})
    spec, _ = resolve_agent(parse_args(["--agent", name]), config)
    assert spec.argv == [program] and spec.protocol == 2
    spec, _ = resolve_agent(parse_args(["--agent", name, "--protocol", "1"]), config)
    assert spec.argv == [program] and spec.protocol == 1
    # A profile saying v1 over the catalog entry is v1 too (the user's word wins over the manifest's).
    config, _ = validate_config({"agents": {name: {"command": program, "protocol": 1}}})
    spec, _ = resolve_agent(parse_args(["--agent", name]), config)
    assert spec.protocol == 1


class Replayed:
    """A replayed session as the board reads one: its state, nothing running."""

    def __init__(self, state, tmp_path: Path) -> None:  # noqa: ANN001
        from rat_tui.protocol.terminals import TerminalManager

        self.state = state
        self.terminals = TerminalManager(tmp_path)
        self.busy = False


@pytest.mark.parametrize("name,subagent", [("claude-agent-acp-0.101-v2.jsonl", True),
                                           ("codex-acp-2.6-v2.jsonl", False)])
async def test_v2_recordings_show_subagents_and_compaction_in_the_app(name: str, subagent: bool, tmp_path: Path) -> None:
    path = TRACES / name
    app = ReplayApp(read_recording(path), path)
    async with app.run_test(size=(140, 40)) as pilot:
        view = await replayed_view(pilot, app)
        state = view.session.state
        assert state.protocol_version == 2
        # /compact: one marker, completed (Codex's carries no summary, Claude's does).
        [compaction] = [e for e in state.entries if isinstance(e, CompactionEntry)]
        assert compaction.status == "completed"
        cards = [e for e in state.entries if isinstance(e, ChildSessionEntry)]
        rows = seat_rows(Seat(Replayed(state, tmp_path), 1))
        # The board says compacting only while it runs: finished, the session is idle with nothing going on.
        assert rows[0].state == "idle" and "compact" not in rows[0].doing
        if not subagent:  # gpt-5.5 has no spawn tool: the subagent prompt is plain text
            assert cards == []
            return
        [card] = cards
        assert card.title == "Harness subagent" and card.stop_reason == "end_turn" and not card.running
        assert any("HARNESS:text (subagent)" in getattr(e, "text", "") for e in card.state.entries)
        assert "Harness subagent" in view.transcript.plain_text
        assert [r.name for r in rows if r.kind == "child"] == ["Harness subagent"]
