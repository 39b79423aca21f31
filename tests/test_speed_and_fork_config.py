"""The `speed` config category (stable in ACP 1.34) shown beside the model, and a fork starting with its parent's
config values (`configOptions` on `session/fork`, each `{configId, value}` with booleans tagged
`type: "boolean"`: session/set_config_option's shape without sessionId), where the agent takes initial values."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.session.controls import initial_values, speed_name
from rat_tui.state.models import SessionState

from .helpers.agents import sent
from .helpers.app import scripted_named, until, view

MODEL = {"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "opus",
         "options": [{"value": "sonnet", "name": "Sonnet"}, {"value": "opus", "name": "Opus"}]}
FAST = {"id": "fast", "name": "Fast mode", "category": "speed", "type": "boolean", "currentValue": True}
SPEEDS = {"id": "speed", "name": "Speed", "category": "speed", "type": "select", "currentValue": "standard",
          "options": [{"value": "standard", "name": "Standard"}, {"value": "fast", "name": "Fast"},
                      {"value": "ultra", "name": "Ultrafast"}]}


@pytest.fixture(autouse=True)
def unstable_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # session/fork is unstable


def state_with(*options: dict) -> SessionState:
    state = SessionState()
    state.config_options = [dict(o) for o in options]
    return state


def test_speed_words() -> None:
    assert speed_name(state_with(MODEL)) is None  # no speed option
    assert speed_name(state_with(FAST)) == "fast"
    assert speed_name(state_with({**FAST, "currentValue": False})) is None  # off: the usual speed, said by nothing
    assert speed_name(state_with(SPEEDS)) is None  # the slowest (first) value
    assert speed_name(state_with({**SPEEDS, "currentValue": "ultra"})) == "Ultrafast"


def test_initial_values_shape_pinned() -> None:
    broken = [{"id": 3, "currentValue": "x"}, {"id": "mode", "type": "select"}, {"id": "b", "type": "boolean",
                                                                                 "currentValue": "yes"}]
    assert initial_values(state_with(MODEL, FAST, *broken)) == [
        {"configId": "model", "value": "opus"}, {"configId": "fast", "type": "boolean", "value": True}]


async def test_speed_shown_beside_the_model(tmp_path: Path, record_file: Path) -> None:
    script = {"new_session_result": {"configOptions": [MODEL, FAST]}}
    app = RatApp(scripted_named(script, tmp_path, "quick"), tmp_path)
    async with app.run_test(size=(140, 30)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await until(pilot, lambda: "model Opus" in str(view(app).status_bar.render()), "the model")
        text = str(view(app).status_bar.render())
        assert "speed fast" in text and text.index("model Opus") < text.index("speed fast")


@pytest.mark.parametrize("takes_values", [True, False], ids=["options advertised", "no options capability"])
async def test_fork_starts_with_the_parents_config_values(takes_values: bool, tmp_path: Path, record_file: Path) -> None:
    sessions = {"fork": {}, **({"options": {}} if takes_values else {})}
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True, "sessionCapabilities": sessions}},
              "new_session_result": {"configOptions": [MODEL, FAST]},
              "responses": {"session/fork": {"result": {"sessionId": "forked-1"}}}}
    app = RatApp(scripted_named(script, tmp_path, "forker"), tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        view(app).action_fork_session()
        await until(pilot, lambda: len(app.tabs.views) == 2, "the forked tab")
    [request] = sent(record_file, "session/fork")
    if takes_values:
        assert request["params"]["configOptions"] == [
            {"configId": "model", "value": "opus"}, {"configId": "fast", "type": "boolean", "value": True}]
    else:  # an agent that did not say it takes initial values gets none
        assert "configOptions" not in request["params"]


def test_v2_tags_every_initial_value() -> None:
    from rat_tui.protocol.v2 import V2Codec, v1_capabilities

    values = [{"configId": "model", "value": "opus"}, {"configId": "fast", "type": "boolean", "value": True}]
    _, params = V2Codec().outgoing("session/fork", {"sessionId": "s", "cwd": "/p", "configOptions": values})
    assert params["configOptions"] == [{"configId": "model", "type": "id", "value": "opus"},
                                       {"configId": "fast", "type": "boolean", "value": True}]
    caps = v1_capabilities({"capabilities": {"session": {"fork": {}, "options": {}}}})
    assert caps["sessionCapabilities"]["options"] == {} and caps["sessionCapabilities"]["fork"] == {}
