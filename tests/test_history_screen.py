"""The history in the app (Pilot): journaling live sessions, the history screen, exports, continue, `rat replay`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rat_tui import paths
from rat_tui.app import RatApp
from rat_tui.cli import parse_args
from rat_tui.config import Config, HistoryConfig
from rat_tui.history.records import read_recording
from rat_tui.ui.replay_app import ReplayApp
from rat_tui.ui.screens.history import HistoryScreen, HistoryTranscriptScreen

from .helpers.app import delivered, until
from .helpers.history import continue_from_history, first_view, prompt, scripted_in

pytestmark = pytest.mark.slow

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"


async def test_history_screen_lists_searches_opens_and_exports(tmp_path: Path, record_file: Path) -> None:
    export = tmp_path / "exports"
    config = Config(history=HistoryConfig(export_dir=str(export)))
    zebra = scripted_in({"turns": [[{"chunk": "Zebras have stripes."}]]}, tmp_path / "zoo", "zebra-agent")
    app = RatApp(zebra, tmp_path / "zoo", config=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        await prompt(pilot, app, "tell me about zebras", "Zebras have stripes.")
        other = scripted_in({"turns": [[{"chunk": "Roses need water."}]]}, tmp_path / "garden", "rose-agent")
        await app.open_session(other, tmp_path / "garden")
        await until(pilot, lambda: app.tabs.active_view.session.state.status == "ready", "second ready")
        await prompt(pilot, app, "how about roses", "Roses need water.")

        await pilot.press("ctrl+r")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert [info.agent for info in screen.rows] == ["rose-agent", "zebra-agent"]
        assert screen.table.row_count == 2
        await pilot.press(*"stripes")
        await until(pilot, lambda: [i.agent for i in screen.rows] == ["zebra-agent"], "the search by text")
        assert "1 session matching 'stripes'" in str(screen.status.render())
        screen.search.value = "agent:rose"
        await until(pilot, lambda: [i.agent for i in screen.rows] == ["rose-agent"], "the search by agent")
        screen.search.value = "cwd:zoo"
        await until(pilot, lambda: [i.agent for i in screen.rows] == ["zebra-agent"], "the search by directory")
        screen.search.value = "date:1999-01"
        await until(pilot, lambda: screen.rows == [], "the search by date")
        screen.search.value = "zebras"
        await until(pilot, lambda: len(screen.rows) == 1, "the search again")
        await pilot.press("enter")  # opens the highlighted row

        transcript_screen = app.screen
        assert isinstance(transcript_screen, HistoryTranscriptScreen)
        view = transcript_screen.view
        await until(pilot, lambda: transcript_screen.session.done and delivered(transcript_screen.session),
                    "the replay of the journal")
        text = view.transcript.plain_text
        assert "tell me about zebras" in text and "Zebras have stripes." in text and "roses" not in text
        assert view.status_bar.state_word == "replayed"

        await pilot.press("e")
        [markdown] = export.glob("*.md")
        assert "## You\n\ntell me about zebras" in markdown.read_text()
        await pilot.press("j")
        [journal_file] = export.glob("*.jsonl")
        recording = read_recording(journal_file)
        assert recording.session["agent"] == "zebra-agent"
        assert any(r.direction == "in" and "Zebras" in json.dumps(r.message) for r in recording.records)

        await pilot.press("escape")
        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("escape", "escape")  # clear the search, then close
        assert not isinstance(app.screen, (HistoryScreen, HistoryTranscriptScreen))

    replay = ReplayApp(read_recording(journal_file), journal_file)
    async with replay.run_test(size=(120, 36)) as pilot:
        view = first_view(replay)
        await until(pilot, lambda: view.session.state.status == "replayed" and delivered(view.session), "the replay")
        assert "Zebras have stripes." in view.transcript.plain_text
        await pilot.press(*"more please", "enter")
        assert view.session.state.turns == 1  # read-only: nothing was sent
        assert view.composer.text == "more please"


async def test_draft_survives_and_continue_reopens_the_journaled_session(tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True}},
              "turns": [[{"chunk": "first answer"}]]}
    spec = scripted_in(script, tmp_path / "proj")
    app = RatApp(spec, tmp_path / "proj")
    async with app.run_test(size=(120, 36)) as pilot:
        view = first_view(app)
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await prompt(pilot, app, "hello", "first answer")
        await pilot.press(*"an unsent draft")
        journal = app.sessions.journals[view.session]
        await until(pilot, lambda: app.history.session(journal.id).draft == "an unsent draft", "the draft written")
    # rat runs again (a session still open in a tab is not continued a second time: its tab is shown);
    # the agent's new session there is another one
    app = RatApp(scripted_in({**script, "session_id": "sess-2"}, tmp_path / "proj"), tmp_path / "proj")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        continued = await continue_from_history(pilot, app)
        assert continued.session.attach_session_id == "sess-1"
        assert app.sessions.journals[continued.session].id == journal.id  # the same history entry goes on
        assert continued.composer.text == "an unsent draft"


async def test_continue_says_why_not_when_the_agent_cannot(tmp_path: Path) -> None:
    spec = scripted_in({"turns": [[{"chunk": "answer"}]]}, tmp_path / "proj")  # no loadSession capability
    app = RatApp(spec, tmp_path / "proj")
    async with app.run_test(size=(120, 36)) as pilot:
        view = first_view(app)
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        await prompt(pilot, app, "hello", "answer")
        await pilot.press("ctrl+r", "enter")
        screen = app.screen
        await until(pilot, lambda: screen.session.done, "the replay")
        assert "neither session/load nor session/resume" in (screen.continue_problem() or "")
        await pilot.press("c")
        assert len(app.tabs.views) == 1


async def test_history_off_writes_nothing(tmp_path: Path) -> None:
    spec = scripted_in({"turns": [[{"chunk": "answer"}]]}, tmp_path / "proj")
    app = RatApp(spec, tmp_path / "proj", config=Config(history=HistoryConfig(enabled=False)))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        await pilot.press("ctrl+r")
        assert not isinstance(app.screen, HistoryScreen)
    assert app.history is None and not (paths.data_dir() / "history.sqlite3").exists()


@pytest.mark.parametrize("trace, expected", [
    ("claude-code-acp.jsonl", ["Hello from the fake model", "Done with step edit", "BETA (edited by fake model)"]),
    ("codex-acp.jsonl", ["Hello from the fake model", "Done with step edit", "Answer after thinking"]),
    ("gemini.jsonl", ["Hello from the fake model", "Done with step write"]),
])
async def test_replay_of_real_agent_traces(trace: str, expected: list[str]) -> None:
    path = TRACES / trace
    app = ReplayApp(read_recording(path), path)
    async with app.run_test(size=(120, 40)) as pilot:
        view = first_view(app)
        await until(pilot, lambda: view.session.state.status == "replayed", "the replay")
        await pilot.pause()
        view.session.store.flush()
        await pilot.pause()
        text = view.transcript.plain_text
        for words in expected:
            assert words in text
        assert "HARNESS:text Say hello." in text  # the user's prompts, from session/prompt
        assert app.history is not None and app.history.sessions() == []  # a replay is not journaled again


def test_replay_on_the_command_line(tmp_path: Path) -> None:
    recording = tmp_path / "r.jsonl"
    recording.write_text("{}\n")
    args = parse_args(["replay", str(recording)])
    assert args.replay == recording and args.command == []
    args = parse_args(["--", "replay", "x"])  # an agent that happens to be called replay
    assert args.replay is None and args.command == ["replay", "x"]
    with pytest.raises(SystemExit):
        parse_args(["replay", str(tmp_path / "missing.jsonl")])
    with pytest.raises(SystemExit):
        parse_args(["replay", str(recording), "--", "agent"])


async def test_an_rpc_log_replays_and_the_palette_offers_history(tmp_path: Path, record_file: Path) -> None:
    rpc_log = tmp_path / "rpc.jsonl"
    spec = scripted_in({"turns": [[{"chunk": "logged answer"}]]}, tmp_path / "proj")
    app = RatApp(spec, tmp_path / "proj", rpc_log_path=rpc_log)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        await prompt(pilot, app, "log this", "logged answer")
        assert "History" in [command.title for command in app.get_system_commands(app.screen)]
    replay = ReplayApp(read_recording(rpc_log), rpc_log)
    async with replay.run_test(size=(120, 36)) as pilot:
        view = first_view(replay)
        await until(pilot, lambda: view.session.state.status == "replayed" and delivered(view.session), "the replay")
        text = view.transcript.plain_text
        assert "log this" in text and "logged answer" in text
        assert view.composer.placeholder.startswith("This is a recorded session")


async def test_down_in_the_search_box_chooses_the_session_enter_opens(tmp_path: Path) -> None:
    """↓ typed in the search box moves the selection (the focus stays there), and Enter opens that session,
    not the top one; typing more keeps the chosen session while it is still listed."""
    zebra = scripted_in({"turns": [[{"chunk": "Zebras have stripes."}]]}, tmp_path / "zoo", "zebra-agent")
    app = RatApp(zebra, tmp_path / "zoo")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        await prompt(pilot, app, "tell me about zebras", "Zebras have stripes.")
        other = scripted_in({"turns": [[{"chunk": "Roses need water."}]]}, tmp_path / "garden", "rose-agent")
        await app.open_session(other, tmp_path / "garden")
        await until(pilot, lambda: app.tabs.active_view.session.state.status == "ready", "second ready")
        await prompt(pilot, app, "tell me about roses", "Roses need water.")

        await pilot.press("ctrl+r")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert [info.agent for info in screen.rows] == ["rose-agent", "zebra-agent"]
        await pilot.press(*"tell")
        await until(pilot, lambda: "matching 'tell'" in str(screen.status.render()), "the search")
        await pilot.press("down")
        assert screen.search.has_focus and screen.selected is not None and screen.selected.agent == "zebra-agent"
        await pilot.press(*" me")  # the search refined: the chosen session is still listed, still chosen
        await until(pilot, lambda: "matching 'tell me'" in str(screen.status.render()), "the refined search")
        assert screen.selected.agent == "zebra-agent"
        await pilot.press("up", "down", "enter")
        transcript_screen = app.screen
        assert isinstance(transcript_screen, HistoryTranscriptScreen)
        assert transcript_screen.info.agent == "zebra-agent"
