"""Per-agent session defaults (`[agents.NAME.defaults]`): applied after session/new, mismatches said aloud."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.session.defaults import match
from rat_tui.session.agent_session import AgentSession
from rat_tui.cli import _from_profile
from rat_tui.config import validate_config
from rat_tui.session.controls import option_choices
from rat_tui.state.models import NoticeEntry

from .helpers.agents import received, scripted_argv
from .helpers.config_options import LEGACY_MODES, MODEL_OPTION, OPTIONS, with_value
from .helpers.harness import finish, wait_for

pytestmark = pytest.mark.slow


async def start_with_defaults(script: dict, tmp_path: Path, defaults: dict) -> tuple[AgentSession, asyncio.Task]:
    command = SimpleNamespace(name="fake", argv=scripted_argv(script, tmp_path), env={}, defaults=defaults)
    session = AgentSession(command, tmp_path)
    task = asyncio.create_task(session.run())
    await wait_for(lambda: session.state.status != "starting", what="handshake")
    assert session.state.status == "ready", session.state.status_detail
    return session, task


def notices(session: AgentSession) -> list[str]:
    return [e.text for e in session.state.entries if isinstance(e, NoticeEntry)]


def sent(record: Path, method: str) -> list[dict]:
    return [m["params"] for m in received(record) if m.get("method") == method]


def test_values_match_by_id_then_by_name_in_any_case() -> None:
    choices = option_choices(MODEL_OPTION)
    assert match(choices, "haiku") == "haiku"
    assert match(choices, "Opus (1M context)") == "opus[1m]"
    assert match(choices, "HAIKU") == "haiku"
    assert match(choices, "gpt-9") is None and match(choices, True) is None


def test_profile_defaults_reach_the_agent_spec() -> None:
    config, problems = validate_config({"agents": {"claude": {"command": "claude", "defaults": {
        "model": "haiku", "mode": "plan", "web": False}}}})
    assert problems == []
    assert _from_profile("claude", config).defaults == {"model": "haiku", "mode": "plan", "web": False}


async def test_config_option_defaults_are_set_after_session_new(tmp_path: Path, record_file: Path) -> None:
    answer = [OPTIONS[0], with_value(MODEL_OPTION, "haiku"), *OPTIONS[2:]]
    script = {"new_session_result": {"configOptions": OPTIONS},
              "responses": {"session/set_config_option": {"result": {"configOptions": answer}}}}
    defaults = {"model": "Haiku", "effort": "high", "web": False, "mode": "default"}  # mode is already default
    session, task = await start_with_defaults(script, tmp_path, defaults)
    assert session.state.config_options[1]["currentValue"] == "haiku"
    assert notices(session) == []
    await finish(session, task)
    assert sent(record_file, "session/set_config_option") == [
        {"sessionId": "sess-1", "configId": "model", "value": "haiku"},
        {"sessionId": "sess-1", "configId": "effort", "value": "high"},
        {"sessionId": "sess-1", "configId": "web", "value": False, "type": "boolean"},
    ]
    messages = [m.get("method") for m in received(record_file) if "method" in m]
    assert messages.index("session/new") < messages.index("session/set_config_option")


async def test_a_default_that_matches_nothing_leaves_a_notice(tmp_path: Path, record_file: Path) -> None:
    script = {"new_session_result": {"configOptions": OPTIONS}}
    session, task = await start_with_defaults(script, tmp_path, {"model": "gpt-9", "colour": "red", "web": "yes"})
    await finish(session, task)
    assert sent(record_file, "session/set_config_option") == []
    [model, colour, web] = notices(session)
    assert model == ("Default model = 'gpt-9' matches none of the agent's values (default (Default (recommended)), "
                     "opus[1m] (Opus (1M context)), haiku (Haiku)); left at Default (recommended).")
    assert colour.startswith("Default colour = 'red': this agent has no such option (its options: mode, model")
    assert "write true or false" in web


async def test_legacy_mode_default_uses_session_set_mode(tmp_path: Path, record_file: Path) -> None:
    script = {"new_session_result": {"modes": LEGACY_MODES}, "responses": {"session/set_mode": {"result": {}}}}
    session, task = await start_with_defaults(script, tmp_path, {"mode": "Plan Mode", "model": "haiku"})
    assert session.state.current_mode_id == "plan"
    assert notices(session) == ["Default model = 'haiku': this agent offers no model choice."]
    await finish(session, task)
    assert sent(record_file, "session/set_mode") == [{"sessionId": "sess-1", "modeId": "plan"}]
