"""Session config options, legacy modes and models: session_controls against the fake agent, screens, status bar."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import Switch

from rat_tui.session import controls as controls
from rat_tui.session.agent_session import AgentSession
from rat_tui.state import reducer
from rat_tui.ui.screens.config_options import ChoiceList, ConfigOptionsScreen, QuickPickScreen
from rat_tui.ui.widgets.status_bar import StatusBar

from .helpers.acp_schema import validate
from .helpers.agents import received
from .helpers.app import screen_text
from .helpers.config_options import (
    EFFORT_OPTION, LEGACY_MODELS, LEGACY_MODES, MODE_OPTION, MODEL_OPTION, OPTIONS, WEB_OPTION, ControlsApp,
    offline_session, with_value,
)
from .helpers.harness import finish, start_session, wait_for


async def start(script: dict, tmp_path: Path) -> tuple[AgentSession, asyncio.Task]:
    session, task = await start_session(script, tmp_path)
    assert session.state.status == "ready", session.state.status_detail
    return session, task


def requests(record: Path, method: str) -> list[dict]:
    return [m["params"] for m in received(record) if m.get("method") == method]


# -- pure helpers ------------------------------------------------------------------------------


def test_option_choices_flatten_groups_in_the_agents_order() -> None:
    assert controls.option_choices(EFFORT_OPTION) == [
        ("low", "Low", None, "Fast"), ("medium", "Medium", None, "Thorough"), ("high", "High", "Slow", "Thorough")]
    assert [c.value for c in controls.option_choices(MODEL_OPTION)] == ["default", "opus[1m]", "haiku"]
    assert controls.option_choices(MODEL_OPTION)[0].group is None
    assert controls.current_value_name(EFFORT_OPTION) == "Medium"
    assert controls.current_value_name(WEB_OPTION) == "on"
    assert controls.current_value_name(with_value(MODEL_OPTION, "gone")) == "gone"  # unknown value: shown raw


def test_categories_prefer_config_options_over_legacy_fields() -> None:
    state = reducer.SessionState()
    reducer.set_session(state, "s", {"modes": LEGACY_MODES, "models": LEGACY_MODELS, "configOptions": OPTIONS})
    assert state.models == LEGACY_MODELS
    assert controls.find_category(state, "model") is state.config_options[1]
    assert controls.legacy_mode_choices(state) == [] and controls.legacy_model_choices(state) == []
    assert controls.current_name(state, "model") == "Default (recommended)"
    assert controls.next_mode(state) == "acceptEdits"

    legacy = reducer.SessionState()
    reducer.set_session(legacy, "s", {"modes": LEGACY_MODES, "models": LEGACY_MODELS})
    assert controls.current_name(legacy, "mode") == "Default"
    assert controls.current_name(legacy, "model") == "Default (recommended)"
    reducer.set_current_mode(legacy, "plan")
    assert controls.next_mode(legacy) == "default"  # wraps round
    assert controls.find_category(legacy, "model") is None


def test_session_controls_do_not_import_textual() -> None:
    code = "import sys, rat_tui.session.controls; sys.exit(any(m.split('.')[0] in ('textual', 'rich') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# -- against the fake agent --------------------------------------------------------------------


@pytest.mark.slow
async def test_config_option_round_trip_takes_the_complete_list(tmp_path: Path, record_file: Path) -> None:
    # The answer changes the model and adds an option that was not there before: the list is replaced, not patched.
    answer = [MODE_OPTION, with_value(MODEL_OPTION, "opus[1m]"), {**WEB_OPTION, "id": "fast", "name": "Fast mode"}]
    script = {"new_session_result": {"configOptions": OPTIONS},
              "responses": {"session/set_config_option": {"result": {"configOptions": answer}}}}
    session, task = await start(script, tmp_path)
    assert session.state.config_options == tuple(OPTIONS)
    assert await controls.set_config_option(session, "model", "opus[1m]") is None
    assert list(session.state.config_options) == answer
    assert controls.current_name(session.state, "model") == "Opus (1M context)"
    assert await controls.set_config_option(session, "web", False) is None
    await finish(session, task)
    sent = requests(record_file, "session/set_config_option")
    assert sent == [
        {"sessionId": "sess-1", "configId": "model", "value": "opus[1m]"},
        {"sessionId": "sess-1", "configId": "web", "value": False, "type": "boolean"},
    ]
    for params in sent:
        validate("session/set_config_option", "request", params)
    validate("session/set_config_option", "response", {"configOptions": answer})


@pytest.mark.slow
async def test_refused_change_is_a_message_and_keeps_the_state(tmp_path: Path, record_file: Path) -> None:
    script = {"new_session_result": {"configOptions": OPTIONS},
              "responses": {"session/set_config_option": {"error": {"code": -32602, "message": "no such model"}}}}
    session, task = await start(script, tmp_path)
    message = await controls.set_config_option(session, "model", "nope")
    assert message is not None and "no such model" in message
    assert session.state.config_options == tuple(OPTIONS)
    await finish(session, task)
    assert await controls.set_config_option(session, "model", "haiku") == "The agent has exited."


@pytest.mark.slow
async def test_config_option_update_notification_replaces_the_list(tmp_path: Path, record_file: Path) -> None:
    update = {"sessionUpdate": "config_option_update", "configOptions": [with_value(MODE_OPTION, "plan"), EFFORT_OPTION]}
    validate("session/update", "notification", {"sessionId": "sess-1", "update": update})
    script = {"new_session_result": {"configOptions": OPTIONS}, "turns": [[{"update": update}]]}
    session, task = await start(script, tmp_path)
    await session.start_prompt("plan it")
    session.store.flush()
    assert [o["id"] for o in session.state.config_options] == ["mode", "effort"]
    assert controls.current_name(session.state, "mode") == "Plan Mode"
    assert controls.current_name(session.state, "model") is None  # the model option went away
    assert controls.option_choices(session.state.config_options[1])[0].group == "Fast"  # groups survive parsing
    await finish(session, task)


@pytest.mark.slow
async def test_set_mode_uses_the_mode_config_option_when_there_is_one(tmp_path: Path, record_file: Path) -> None:
    answer = [with_value(MODE_OPTION, "plan"), MODEL_OPTION]
    script = {"new_session_result": {"modes": LEGACY_MODES, "configOptions": [MODE_OPTION, MODEL_OPTION]},
              "responses": {"session/set_config_option": {"result": {"configOptions": answer}}}}
    session, task = await start(script, tmp_path)
    assert await controls.cycle_mode(session) is None  # default -> acceptEdits, through the config option
    await finish(session, task)
    assert requests(record_file, "session/set_mode") == []
    assert requests(record_file, "session/set_config_option") == [
        {"sessionId": "sess-1", "configId": "mode", "value": "acceptEdits"}]


@pytest.mark.slow
async def test_legacy_modes(tmp_path: Path, record_file: Path) -> None:
    script = {"new_session_result": {"modes": LEGACY_MODES},
              "responses": {"session/set_mode": {"result": {}}},
              "turns": [[{"update": {"sessionUpdate": "current_mode_update", "currentModeId": "acceptEdits"}}]]}
    session, task = await start(script, tmp_path)
    assert session.state.current_mode_id == "default"
    assert await controls.set_mode(session, "plan") is None
    assert session.state.current_mode_id == "plan"
    await session.start_prompt("the agent switches mode itself")
    assert session.state.current_mode_id == "acceptEdits"
    assert controls.current_name(session.state, "mode") == "Accept Edits"
    # No models and no config options: nothing to send.
    assert await controls.set_model(session, "haiku") == "This agent offers no model choice."
    await finish(session, task)
    sent = requests(record_file, "session/set_mode")
    assert sent == [{"sessionId": "sess-1", "modeId": "plan"}]
    validate("session/set_mode", "request", sent[0])
    assert requests(record_file, "session/set_model") == []


@pytest.mark.slow
async def test_legacy_models_only_without_a_model_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # session/set_model is not in the stable schema, so this test records without the validating fixture.
    record = tmp_path / "models.jsonl"
    monkeypatch.setenv("RAT_FAKE_RECORD", str(record))
    script = {"new_session_result": {"modes": LEGACY_MODES, "models": LEGACY_MODELS},
              "responses": {"session/set_model": {"result": {}}}}
    (tmp_path / "a").mkdir()
    session, task = await start(script, tmp_path / "a")
    assert await controls.set_model(session, "haiku") is None
    assert session.state.models["currentModelId"] == "haiku"
    assert controls.current_name(session.state, "model") == "Haiku"
    await finish(session, task)
    assert requests(record, "session/set_model") == [{"sessionId": "sess-1", "modelId": "haiku"}]

    # The same agent with a model config option: the option wins, session/set_model is never sent.
    record.unlink()
    script = {"new_session_result": {"models": LEGACY_MODELS, "configOptions": [MODEL_OPTION]},
              "responses": {"session/set_config_option": {"result": {"configOptions": [with_value(MODEL_OPTION, "haiku")]}}}}
    (tmp_path / "b").mkdir()
    session, task = await start(script, tmp_path / "b")
    assert controls.legacy_model_choices(session.state) == []
    assert await controls.set_model(session, "haiku") is None
    await finish(session, task)
    assert requests(record, "session/set_model") == []
    assert requests(record, "session/set_config_option") == [{"sessionId": "sess-1", "configId": "model", "value": "haiku"}]


# -- screens -----------------------------------------------------------------------------------


@pytest.mark.slow
async def test_screen_changes_a_select_and_a_boolean(tmp_path: Path, record_file: Path) -> None:
    after_model = [MODE_OPTION, with_value(MODEL_OPTION, "opus[1m]"), EFFORT_OPTION, WEB_OPTION]
    script = {"new_session_result": {"configOptions": OPTIONS},
              "responses": {"session/set_config_option": {"result": {"configOptions": after_model}}}}
    session, task = await start(script, tmp_path)
    app = ControlsApp(session, ConfigOptionsScreen)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfigOptionsScreen)
        lists = list(screen.query(ChoiceList))
        assert [c.key for c in lists] == ["config:mode", "config:model", "config:effort"]
        assert lists[2].option_count == 5  # two group headings and three values
        assert "Thorough" in screen_text(app)
        assert app.focused is lists[0]
        await pilot.press("tab")
        assert app.focused is lists[1] and lists[1].highlighted == 0
        await pilot.press("down", "enter")
        await wait_for(lambda: session.state.config_options[1]["currentValue"] == "opus[1m]", what="model change")
        # The redraw recomposes the screen: for a moment there is no list, then a new one (its current value
        # set) still being mounted, and the focus goes back to it a turn later (Widget.focus is call_later'd).
        def redrawn() -> bool:
            found = app.screen.query("#option-1")
            return bool(found) and found.first().current_index == 1 and app.focused is found.first()

        await wait_for(redrawn, what="the redraw, the focus back on the model's list")
        model_list = app.screen.query_one("#option-1", ChoiceList)
        assert model_list.current_index == 1 and app.focused is model_list  # redrawn from the store, focus kept
        assert "model Opus (1M context)" in str(app.query_one(StatusBar).content)
        # The boolean: the agent's answer keeps it on (a fixed answer), so the switch goes back on.
        switch = app.screen.query_one("#option-3", Switch)
        switch.focus()
        await pilot.press("space")
        await wait_for(lambda: len(requests(record_file, "session/set_config_option")) == 2, what="boolean request")
        await wait_for(lambda: app.screen.query_one("#option-3", Switch).value is True, what="the agent's answer shown")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ConfigOptionsScreen) and app.results == [None]
    await finish(session, task)
    sent = requests(record_file, "session/set_config_option")
    assert sent[0] == {"sessionId": "sess-1", "configId": "model", "value": "opus[1m]"}
    assert sent[1] == {"sessionId": "sess-1", "configId": "web", "value": False, "type": "boolean"}


@pytest.mark.slow
async def test_screen_shows_a_refusal(tmp_path: Path, record_file: Path) -> None:
    script = {"new_session_result": {"configOptions": [WEB_OPTION]},
              "responses": {"session/set_config_option": {"error": {"code": -32603, "message": "web search is disabled"}}}}
    session, task = await start(script, tmp_path)
    app = ControlsApp(session, ConfigOptionsScreen)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("enter")  # the switch is the first control
        await wait_for(lambda: "disabled" in screen_text(app), what="error message")
        # The switch goes back in a redraw (a recompose: for a moment no switch at all), and its message is put
        # back once the new widgets are in.
        def redrawn() -> bool:
            switches = app.screen.query(Switch)
            return bool(switches) and switches.first().value is True and "web search is disabled" in screen_text(app)

        await wait_for(redrawn, what="the agent's value back, the refusal still said")
        assert "web search is disabled" in screen_text(app)
    await finish(session, task)


@pytest.mark.slow
async def test_legacy_modes_and_models_on_the_screen_and_quick_pick(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_FAKE_RECORD", str(tmp_path / "legacy.jsonl"))
    script = {"new_session_result": {"modes": LEGACY_MODES, "models": LEGACY_MODELS},
              "responses": {"session/set_mode": {"result": {}}, "session/set_model": {"result": {}}}}
    session, task = await start(script, tmp_path)
    app = ControlsApp(session, ConfigOptionsScreen)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert [c.key for c in app.screen.query(ChoiceList)] == ["mode", "model"]
        await pilot.press("end", "enter")
        await wait_for(lambda: session.state.current_mode_id == "plan", what="legacy mode")
        await pilot.press("escape")
        await pilot.pause()
        assert "mode Plan Mode" in str(app.query_one(StatusBar).content)
        app.push_screen(QuickPickScreen(session, "model"), app.results.append)
        await pilot.pause()
        await pilot.press("down", "enter")
        await wait_for(lambda: len(app.results) == 2, what="quick pick")
        assert app.results[1] == "haiku" and session.state.models["currentModelId"] == "haiku"
        assert not isinstance(app.screen, QuickPickScreen)
    await finish(session, task)
    assert requests(tmp_path / "legacy.jsonl", "session/set_model") == [{"sessionId": "sess-1", "modelId": "haiku"}]


async def test_quick_pick_without_choices_says_so(tmp_path: Path) -> None:
    session = offline_session(tmp_path, {"configOptions": [WEB_OPTION]})
    app = ControlsApp(session, lambda s: QuickPickScreen(s, "model"))
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.pause()
        assert "This agent offers no model choice." in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]


def test_snapshot_config_options(snap_compare, tmp_path: Path) -> None:
    session = offline_session(tmp_path, {"configOptions": OPTIONS})
    assert snap_compare(ControlsApp(session, ConfigOptionsScreen), terminal_size=(100, 30))
