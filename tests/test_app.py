"""The real app, driven with Pilot, against the demo agent and scripted fake agents over real pipes."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.agents.spec import AgentSpec, demo_agent

from .helpers.agents import received
from .helpers.app import delivered, scripted, send, state_word, until, view

pytestmark = pytest.mark.slow


async def test_demo_agent_full_turn(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    app = RatApp(demo_agent(), tmp_path)
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        bar = view(app).status_bar
        assert bar.agent_name == "Demo agent"
        await send(pilot, "hello")
        session = view(app).session
        await until(pilot, lambda: session.state.stop_reason == "end_turn" and delivered(session), "the turn to end")
        assert state_word(app) == "ready"
        transcript = view(app).transcript
        text = transcript.plain_text
        assert "hello" in text
        state = view(app).session.state
        assert state.plan and all(item.status == "completed" for item in state.plan)
        assert state.tool_calls and all(c.status == "completed" for c in state.tool_calls.values())
        kinds = {type(e).__name__ for e in state.entries}
        assert {"MessageEntry", "ToolCallEntry"} <= kinds
        assert any(e.role == "thought" for e in state.entries if hasattr(e, "role"))
        assert view(app).composer.text == ""
        # Each message reaches the transcript exactly once, however the chunks were batched.
        for entry in state.entries:
            if type(entry).__name__ == "MessageEntry":
                assert transcript.entry_text(entry.key) == entry.text
        # The end of the answer is what the user sees (the view follows the stream).
        last_line = state.entries[-1].text.strip().splitlines()[-1].strip("#*-` ")
        assert last_line[:20] in transcript.visible_text()


async def test_escape_cancels_the_running_turn(tmp_path: Path, record_file: Path) -> None:
    script = {"turns": [[{"chunk": "streaming…"}, {"wait_cancel": True}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "go")
        await until(pilot, lambda: "streaming" in view(app).transcript.plain_text, "first chunk")
        assert state_word(app) == "working"
        await pilot.press("escape")
        await until(pilot, lambda: state_word(app) == "cancelled", "cancelled")
        assert "Turn cancelled" in view(app).transcript.plain_text
        assert "session/cancel" in [m.get("method") for m in received(record_file)]


async def test_agent_crash_mid_turn_keeps_app_and_transcript(tmp_path: Path) -> None:
    script = {"turns": [[{"chunk": "half an answer"}, {"stderr": "panic: out of cheese"}, {"exit": 9}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "go")
        await until(pilot, lambda: state_word(app) == "exited", "exited")
        text = view(app).transcript.plain_text
        assert "half an answer" in text and "exited with code 9" in text and "out of cheese" in text
        await send(pilot, "are you there?")  # refused politely; the draft stays in the composer
        assert view(app).composer.text == "are you there?"
        assert app.is_running


async def test_garbage_output_and_unknown_variant_leave_the_app_alive(tmp_path: Path) -> None:
    script = {"turns": [[
        {"raw": "Loading model... 100%"},
        {"raw": '{"jsonrpc": "2.0", "method": '},
        {"update": {"sessionUpdate": "hologram_update", "beam": "sparkles"}},
        {"chunk": "survived"},
    ]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "go")
        await until(pilot, lambda: "survived" in view(app).transcript.plain_text, "answer")
        await until(pilot, lambda: state_word(app) == "ready", "ready again")
        assert "hologram_update" in view(app).transcript.visible_text()


async def test_ten_megabyte_message_reaches_the_screen(tmp_path: Path) -> None:
    script = {"turns": [[{"big_chunk": 10 * 1024 * 1024}, {"chunk": "\n\nEND OF BIG MESSAGE"}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "go")
        await until(pilot, lambda: "END OF BIG MESSAGE" in view(app).transcript.visible_text(), "the tail", 60)


async def test_shift_enter_and_ctrl_j_insert_newlines_without_sending(tmp_path: Path, record_file: Path) -> None:
    app = RatApp(scripted({}, tmp_path), tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await pilot.press("a", "shift+enter", "b", "ctrl+j", "c")
        assert view(app).composer.text == "a\nb\nc"
        await pilot.press("enter")
        await until(pilot, lambda: any(m.get("method") == "session/prompt" for m in received(record_file)), "prompt")
        [prompt] = [m for m in received(record_file) if m.get("method") == "session/prompt"]
        assert prompt["params"]["prompt"] == [{"type": "text", "text": "a\nb\nc"}]


async def test_agent_that_cannot_start_shows_error(tmp_path: Path) -> None:
    command = AgentSpec(name="ghost", argv=["no-such-agent-binary-xyz"], env={}, is_demo=False)
    app = RatApp(command, tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: state_word(app) == "error", "error")
        assert "not found" in view(app).transcript.plain_text
        assert view(app).status_bar.agent_name == "ghost"


async def test_rpc_log_records_traffic_with_latency(tmp_path: Path) -> None:
    log_file = tmp_path / "rpc.jsonl"
    app = RatApp(scripted({"turns": [[{"chunk": "hi"}]]}, tmp_path), tmp_path, rpc_log_path=log_file)
    async with app.run_test() as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "go")
        await until(pilot, lambda: "hi" in view(app).transcript.plain_text, "answer")
        await until(pilot, lambda: state_word(app) == "ready", "ready again")
    import json

    lines = [json.loads(line) for line in log_file.read_text().splitlines()]
    out_methods = [entry.get("method") for entry in lines if entry["dir"] == "out"]
    assert out_methods[:3] == ["initialize", "session/new", "session/prompt"]
    responses = [entry for entry in lines if entry["dir"] == "in" and "latency_ms" in entry]
    assert {r["method"] for r in responses} >= {"initialize", "session/new", "session/prompt"}
    assert all(entry["bytes"] > 0 for entry in lines)


async def test_demo_commands_complete_in_the_composer_and_f8_shows_the_traffic(tmp_path: Path) -> None:
    """The agent's available_commands_update reaches the composer's menu; F8 lists the real traffic."""
    from textual.widgets import DataTable

    from rat_tui.ui.screens.traffic import TrafficScreen

    app = RatApp(demo_agent(), tmp_path)
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        composer = view(app).composer
        await until(pilot, lambda: bool(composer.commands), "the demo's commands")
        await pilot.press("/", "e")
        await until(pilot, lambda: composer.menu.is_open, "the command menu")
        assert composer.menu.selected_name == "explain"
        await pilot.press("tab")
        assert composer.text == "/explain " and not composer.menu.is_open

        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, TrafficScreen), "the traffic inspector")
        await until(pilot, lambda: app.screen.query_one(DataTable).row_count >= 5, "the traffic rows")
        table = app.screen.query_one(DataTable)
        methods = [str(table.get_row_at(row)[3]) for row in range(table.row_count)]
        assert methods[:4] == ["initialize", "initialize", "session/new", "session/new"]
        assert "session/update" in methods  # the available_commands_update
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, TrafficScreen), "the inspector to close")
        assert view(app).composer.text == "/explain "  # nothing typed is lost
