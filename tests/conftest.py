"""Shared fixtures: keep the developer's config and data out of every test, and colour on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers.agents import received


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    monkeypatch.delenv("RAT_CONFIG", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("RAT_DEMO_DELAY", "0")
    monkeypatch.setenv("RAT_REGISTRY_OFF", "1")  # no test reaches the live agent registry


@pytest.fixture
def record_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Where a fake agent writes every line it receives from rat-tui.

    After the test, every message rat-tui sent is validated against the ACP schema `$defs` of its
    method (answers to the agent's requests against the method of the request they answer).
    """
    path = tmp_path / "received.jsonl"
    monkeypatch.setenv("RAT_FAKE_RECORD", str(path))
    yield path
    assert_sent_messages_valid(path)


def assert_sent_messages_valid(path: Path) -> None:
    from .helpers.acp_schema import def_name, validate_message

    sent = Path(str(path) + ".sent")
    asked = [json.loads(line) for line in sent.read_text().splitlines()] if sent.exists() else []
    methods = {request["id"]: request["method"] for request in asked}
    for message in received(path):
        method = methods.get(message.get("id")) if "method" not in message else None
        if method is not None and def_name(method, "response") is None:
            continue  # our answer to a made-up method (the tests' "x/unknown"): nothing to check
        validate_message(message, "client", {message["id"]: method} if method else {})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project folder (README.md, notes.txt) for an agent to work in."""
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "README.md").write_text("# Sample project\n\nalpha\nbeta\n")
    (ws / "notes.txt").write_text("gamma\n")
    return ws
