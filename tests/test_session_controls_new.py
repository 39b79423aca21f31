"""Rename, fork and steering over real pipes, each only where the agent advertises it."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.ui.tabs.controls_ui import TitleScreen

from .helpers.agents import received
from .helpers.app import until, view
from .helpers.history import scripted_in as scripted

TITLED = {"agentCapabilities": {"loadSession": True, "sessionCapabilities": {"title": {}, "fork": {}}}}
STEERS = {"_meta": {"steering": {"supported": True}}}


@pytest.fixture(autouse=True)
def unstable_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # set_title and fork are in schema.unstable.json


def sent(record: Path, method: str) -> list[dict]:
    return [m for m in received(record) if m.get("method") == method]


async def test_rename_round_trip_shows_the_title_the_agent_stored(tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": TITLED, "responses": {"session/set_title": {"result": {"title": "Stored: typo hunt"}}}}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        view(app).action_rename_session()
        await until(pilot, lambda: isinstance(app.screen, TitleScreen), "the title dialog")
        await pilot.press(*"typo hunt")
        await pilot.press("enter")
        await until(pilot, lambda: view(app).session.state.title == "Stored: typo hunt", "the stored title")
        tab = app.tabs.query("Tab").first()
        await until(pilot, lambda: "Stored: typo hunt" in str(tab.label), "the tab's label")
    [request] = sent(record_file, "session/set_title")
    assert request["params"] == {"sessionId": "sess-1", "title": "typo hunt"}


async def test_rename_and_fork_not_offered_when_not_advertised(tmp_path: Path, record_file: Path) -> None:
    app = RatApp(scripted({}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        view(app).action_rename_session()
        view(app).action_fork_session()
        await until(pilot, lambda: any("cannot fork" in n.message for n in app._notifications), "the fork refusal")
        assert not isinstance(app.screen, TitleScreen)
    assert sent(record_file, "session/set_title") == [] and sent(record_file, "session/fork") == []


async def test_fork_opens_the_forked_session_in_a_new_tab(tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": TITLED, "responses": {"session/fork": {"result": {"sessionId": "forked-1"}}}}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        view(app).action_fork_session()
        await until(pilot, lambda: len(app.tabs.views) == 2, "the second tab")
        second = app.tabs.views[1]
        await until(pilot, lambda: second.session.session_id == "forked-1", "the forked session reattached")
    [request] = sent(record_file, "session/fork")
    assert request["params"]["sessionId"] == "sess-1" and request["params"]["cwd"] == str(tmp_path)
    assert [m["params"]["sessionId"] for m in sent(record_file, "session/load")] == ["forked-1"]


async def _steer(tmp_path: Path, record_file: Path, initialize: dict) -> RatApp:
    release = tmp_path / "release"
    script = {"initialize_result": initialize, "turns": [[{"chunk": "working… "}, {"wait_file": str(release)}]],
              "responses": {"_session/steering": {"result": {"outcome": "injected"}}}}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await pilot.press(*"start")
        await pilot.press("enter")
        await until(pilot, lambda: view(app).session.busy and view(app).session.state.entries[-1:] and
                    "working" in getattr(view(app).session.state.entries[-1], "text", ""), "the running turn")
        await pilot.press(*"focus on tests")
        await pilot.press("alt+s")
        if initialize:
            await until(pilot, lambda: sent(record_file, "_session/steering") != [], "the steering request")
            await until(pilot, lambda: any("steered" in " ".join(getattr(e, "attachments", ()))
                                           for e in view(app).session.state.entries), "the steered line")
        else:
            await until(pilot, lambda: len(view(app).flow.queue) == 1, "the queued prompt")
        release.touch()
        await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn's end")
    return app


async def test_steering_sent_only_when_advertised(tmp_path: Path, record_file: Path) -> None:
    await _steer(tmp_path, record_file, STEERS)
    [request] = sent(record_file, "_session/steering")
    assert request["params"] == {"sessionId": "sess-1", "prompt": [{"type": "text", "text": "focus on tests"}],
                                 "_meta": {"steering": {"idleBehavior": "promptRequired"}}}
    assert len(sent(record_file, "session/prompt")) == 1  # injected: no second turn


async def test_without_steering_the_prompt_is_queued(tmp_path: Path, record_file: Path) -> None:
    await _steer(tmp_path, record_file, {})
    assert sent(record_file, "_session/steering") == []
