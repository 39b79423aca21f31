"""System prompt and additional directories: sent only to agents that advertise them; the directories widen fs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rat_tui.cli import parse_args
from rat_tui.config import validate_config
from rat_tui.agents.spec import profile_spec
from rat_tui.session.setup import session_setup

from .helpers.agents import received
from .helpers.harness import finish, start_session, wait_for

ADVERTISES = {"agentCapabilities": {"loadSession": False, "sessionCapabilities": {
    "systemPrompt": {"mode": {"override": {}}}, "additionalDirectories": {}}}}
APPEND_ONLY = {"agentCapabilities": {"loadSession": False, "sessionCapabilities": {"systemPrompt": {}}}}


@pytest.fixture(autouse=True)
def unstable_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # systemPrompt is in schema.unstable.json


def project(tmp_path: Path) -> tuple[Path, Path]:
    cwd, extra = tmp_path / "proj", tmp_path / "shared-lib"
    (cwd / ".rat").mkdir(parents=True)
    (cwd / ".rat" / "instructions.md").write_text("Use tabs in this project.\n")
    extra.mkdir()
    (extra / "lib.txt").write_text("from the other directory\n")
    return cwd, extra


def setup_for(tmp_path: Path, cwd: Path, extra: Path, mode: str = "append"):
    config, problems = validate_config({
        "system_prompt": "Answer briefly.",
        "additional_directories": [str(extra)],
        "agents": {"fake": {"command": "x", "system_prompt": "You are the fake.", "system_prompt_mode": mode}},
    })
    assert problems == []
    return session_setup(config, profile_spec("fake", config.agents["fake"]), cwd)


def new_session_params(record: Path) -> dict:
    return next(m for m in received(record) if m.get("method") == "session/new")["params"]


async def test_sent_when_advertised_and_the_directory_is_in_scope(tmp_path: Path, record_file: Path) -> None:
    cwd, extra = project(tmp_path)
    read = {"request": {"method": "fs/read_text_file", "params": {"sessionId": "$SESSION", "path": str(extra / "lib.txt")}}}
    session, task = await start_session({"initialize_result": ADVERTISES, "turns": [[read]]}, cwd,
                                        setup=setup_for(tmp_path, cwd, extra, mode="override"))
    try:
        params = new_session_params(record_file)
        assert params["systemPrompt"] == {"mode": "override", "content": [{"type": "text", "text":
                                          "Answer briefly.\n\nYou are the fake.\n\nUse tabs in this project."}]}
        assert params["additionalDirectories"] == [str(extra)]
        session.start_prompt("read the shared file")
        await wait_for(lambda: session.state.stop_reason == "end_turn", what="the turn")
        answer = next(m for m in received(record_file) if "result" in m and isinstance(m["result"], dict)
                      and "content" in m["result"])
        assert answer["result"]["content"] == "from the other directory\n"
    finally:
        await finish(session, task)


async def test_append_when_override_is_not_advertised(tmp_path: Path, record_file: Path) -> None:
    cwd, extra = project(tmp_path)
    session, task = await start_session({"initialize_result": APPEND_ONLY}, cwd,
                                        setup=setup_for(tmp_path, cwd, extra, mode="override"))
    try:
        params = new_session_params(record_file)
        assert params["systemPrompt"]["mode"] == "append"
        assert "additionalDirectories" not in params  # not advertised
        assert any("appended" in getattr(e, "text", "") for e in session.state.entries)
    finally:
        await finish(session, task)


async def test_nothing_sent_when_not_advertised(tmp_path: Path, record_file: Path) -> None:
    cwd, extra = project(tmp_path)
    session, task = await start_session({}, cwd, setup=setup_for(tmp_path, cwd, extra))
    try:
        params = new_session_params(record_file)
        assert "systemPrompt" not in params and "additionalDirectories" not in params
        assert any("takes no system prompt" in getattr(e, "text", "") for e in session.state.entries)
    finally:
        await finish(session, task)


def test_add_dir_on_the_command_line(tmp_path: Path) -> None:
    args = parse_args(["--add-dir", str(tmp_path), "--", "agent"])
    assert args.add_dirs == [str(tmp_path)] and args.command == ["agent"]
    with pytest.raises(SystemExit):
        parse_args(["--add-dir", str(tmp_path / "missing")])
    setup = session_setup(SimpleNamespace(additional_directories=["missing-too"]), SimpleNamespace(), tmp_path,
                          add_dirs=[str(tmp_path)])
    assert setup.directories == []  # the cwd itself is no addition
    assert setup.problems == [f"Additional directory {tmp_path / 'missing-too'} does not exist: left out."]
