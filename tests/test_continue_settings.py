"""Continuing a session from the history (Ctrl+R, c) sets again the mode, model and config values its
journal recorded: Pilot against a scripted agent that supports session/load and config options."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.session import controls as controls
from rat_tui.app import RatApp

from .helpers.agents import received, sent
from .helpers.app import until
from .helpers.history import continue_from_history, first_view, prompt, scripted_in

pytestmark = pytest.mark.slow


def model_option(current: str) -> dict:
    return {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": current,
            "options": [{"value": "sonnet", "name": "Sonnet"}, {"value": "opus", "name": "Opus"}]}


def web_option(current: bool) -> dict:
    return {"id": "web", "name": "Web search", "type": "boolean", "currentValue": current}


async def test_continue_restores_the_journaled_config_values(tmp_path: Path, record_file: Path) -> None:
    defaults = [model_option("sonnet"), web_option(True)]
    chosen = [model_option("opus"), web_option(True)]
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True}},
              "new_session_result": {"configOptions": defaults},
              # The agent forgets the choice: a reloaded session comes back with its defaults.
              "on_request": {"session/load": [[{"respond": {"configOptions": defaults}}]]},
              "responses": {"session/set_config_option": {"result": {"configOptions": chosen}}},
              "turns": [[{"chunk": "first answer"}]]}
    app = RatApp(scripted_in(script, tmp_path / "proj"), tmp_path / "proj")
    async with app.run_test(size=(120, 36)) as pilot:
        view = first_view(app)
        await until(pilot, lambda: view.session.state.status == "ready", "ready")
        assert await controls.set_config_option(view.session, "model", "opus") is None
        await prompt(pilot, app, "hello", "first answer")
        journal = app.sessions.journals[view.session]
        await until(pilot, lambda: app.history.session(journal.id).settings == {"config": {"model": "opus"}},
                    "the setting journaled")
    # rat runs again (a session still open in a tab is not continued a second time: its tab is shown);
    # the agent's new session there is another one
    app = RatApp(scripted_in({**script, "session_id": "sess-2"}, tmp_path / "proj"), tmp_path / "proj")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        continued = await continue_from_history(pilot, app)
        await until(pilot, lambda: continued.session.state.status == "ready", "the continued session ready")
        assert continued.session.attach_session_id == "sess-1"
        assert controls.current_name(continued.session.state, "model") == "Opus"
        await until(pilot, lambda: "Restored this session's settings" in continued.transcript.plain_text,
                    "the restore notice shown")  # the store delivers to the transcript on the next frame
        assert "Restored this session's settings: Model = Opus." in continued.transcript.plain_text
        assert "Could not restore" not in continued.transcript.plain_text
    methods = [m.get("method") for m in received(record_file) if "method" in m]
    assert methods.count("session/set_config_option") == 2
    assert methods.index("session/load") < len(methods) - 1 - methods[::-1].index("session/set_config_option")
    restored = sent(record_file, "session/set_config_option")[-1]
    assert restored["params"] == {"sessionId": "sess-1", "configId": "model", "value": "opus"}


async def test_continue_says_which_settings_could_not_be_restored(tmp_path: Path, record_file: Path) -> None:
    """A recorded value the agent no longer offers, and a legacy mode of an agent without modes, are named."""
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True}},
              "on_request": {"session/load": [[{"respond": {"configOptions": [model_option("sonnet")]}}]]}}
    app = RatApp(scripted_in(script, tmp_path / "proj"), tmp_path / "proj")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        journal = app.history.start_session("fake", list(app.launched.argv), str(tmp_path / "proj"), "old-1")
        changes = [("session/set_config_option", {"configId": "model", "value": "gpt-9"}),
                   ("session/set_config_option", {"configId": "effort", "value": "high"}),
                   ("session/set_mode", {"modeId": "plan"})]
        for number, (method, params) in enumerate(changes):  # as an earlier run journaled them
            journal.record("out", {"jsonrpc": "2.0", "id": number, "method": method,
                                   "params": {"sessionId": "old-1", **params}}, 80)
        journal.flush()
        assert app.history.session(journal.id).settings == {"config": {"model": "gpt-9", "effort": "high"},
                                                             "mode": "plan"}
        session = await app.open_session(app.launched, tmp_path / "proj", attach_session_id="old-1")
        view = app.tabs.active_view
        await until(pilot, lambda: session.state.status == "ready", "the continued session ready")
        # The store delivers to the transcript on the next frame: wait for the notice to be drawn.
        await until(pilot, lambda: "Could not restore" in view.transcript.plain_text, "the restore notice shown")
        text = view.transcript.plain_text
        assert ("Could not restore: Model = gpt-9 (not among its values now); effort = high (the agent no longer "
                "offers this option); mode = plan (this agent offers no mode choice now).") in text
        assert "Restored this session's settings" not in text
    assert not sent(record_file, "session/set_config_option")


async def test_continue_restores_a_legacy_mode(tmp_path: Path, record_file: Path) -> None:
    """Without config options the recorded mode goes back through session/set_mode."""
    modes = {"currentModeId": "default", "availableModes": [{"id": "default", "name": "Default"},
                                                            {"id": "plan", "name": "Plan"}]}
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True}},
              "on_request": {"session/load": [[{"respond": {"modes": modes}}]]},
              "responses": {"session/set_mode": {"result": {}}}}
    app = RatApp(scripted_in(script, tmp_path / "proj"), tmp_path / "proj")
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        journal = app.history.start_session("fake", list(app.launched.argv), str(tmp_path / "proj"), "old-2")
        journal.record("out", {"jsonrpc": "2.0", "id": 1, "method": "session/set_mode",
                               "params": {"sessionId": "old-2", "modeId": "plan"}}, 80)
        journal.flush()
        session = await app.open_session(app.launched, tmp_path / "proj", attach_session_id="old-2")
        view = app.tabs.active_view
        await until(pilot, lambda: session.state.status == "ready", "the continued session ready")
        assert session.state.current_mode_id == "plan"
        await until(pilot, lambda: "Restored this session's settings: mode = Plan." in view.transcript.plain_text,
                    "the notice")
    assert [m["params"] for m in sent(record_file, "session/set_mode")] == [{"sessionId": "old-2", "modeId": "plan"}]
