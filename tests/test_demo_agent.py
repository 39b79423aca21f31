"""The embedded demo agent (`python -m rat_tui.demo`) over ACP v1, driven as a real subprocess over real
pipes by `Driver` (tests/helpers/demo_driver.py, no rat_tui.protocol): a turn, cancel, bad input, and
what it declares (capabilities, auth, config options, usage and title).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from .helpers.demo_driver import (
    BOOLEAN_CAPS, DEMO_ARGV, TIMEOUT, Driver, FakeClient, answer_text, initialize, new_session, options_by_id,
    prompt_params,
)

pytestmark = pytest.mark.slow


async def test_demo_full_turn(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(workspace))
    await driver.wait_for(lambda: driver.updates("available_commands_update"), "commands")
    info = driver.received[0]["result"]
    assert info["agentInfo"]["name"] == "rat-demo"
    assert info["agentCapabilities"]["promptCapabilities"]["embeddedContext"] is True
    assert 2 <= len(driver.updates("available_commands_update")[0]["availableCommands"]) <= 3

    response = await driver.request("session/prompt", prompt_params(session_id, "tell me about frobnicators"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert all(m["params"]["sessionId"] == session_id for m in driver.received if m.get("method"))

    thoughts = driver.updates("agent_thought_chunk")
    assert len(thoughts) > 1 and len({t["messageId"] for t in thoughts}) == 1

    plans = driver.updates("plan")
    assert len(plans) > 2 and all(len(p["entries"]) == 3 for p in plans)
    assert plans[0]["entries"][0]["status"] == "in_progress"
    assert [e["status"] for e in plans[-1]["entries"]] == ["completed"] * 3

    calls = driver.updates("tool_call")
    assert len(calls) == 1 and calls[0]["kind"] == "read" and calls[0]["status"] == "pending"
    call_updates = [u for u in driver.updates("tool_call_update") if u["toolCallId"] == calls[0]["toolCallId"]]
    assert [u["status"] for u in call_updates] == ["in_progress", "completed"]
    done = call_updates[-1]
    assert done["locations"][0]["path"] == str(workspace / "README.md")
    assert "Sample project" in done["content"][0]["content"]["text"]

    chunks = driver.updates("agent_message_chunk")
    assert len(chunks) > 10 and len({c["messageId"] for c in chunks}) == 1
    assert chunks[0]["messageId"] != thoughts[0]["messageId"]
    text = "".join(c["content"]["text"] for c in chunks)
    assert text.startswith("## ")
    assert "tell me about frobnicators" in text
    assert "\n- " in text and "```python\n" in text

    # the order of the story: thought, then the tool call, then the answer
    kinds = [u["sessionUpdate"] for u in driver.updates()]
    assert kinds.index("agent_thought_chunk") < kinds.index("tool_call") < kinds.index("agent_message_chunk")
    assert await driver.close() == 0


async def test_demo_cancel_mid_stream(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV, env={"RAT_DEMO_DELAY": "0.02"})
    session_id = await driver.handshake(str(workspace))
    pending = driver.request_nowait("session/prompt", prompt_params(session_id, "a long answer please"))
    await driver.wait_for(lambda: len(driver.updates("agent_thought_chunk")) >= 2, "streaming")
    driver.notify("session/cancel", {"sessionId": session_id})
    response = await asyncio.wait_for(pending, TIMEOUT)
    assert response["result"] == {"stopReason": "cancelled"}
    assert not driver.updates("agent_message_chunk"), "the answer kept streaming after the cancel"
    # the session still works afterwards
    again = await driver.request("session/prompt", prompt_params(session_id, "again"))
    assert again["result"] == {"stopReason": "end_turn"}
    assert await driver.close() == 0


async def test_demo_unknown_method_and_garbage(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    driver.send_raw("this is not json\n[1, 2]\n\n")
    driver.notify("_unknown/notification", {"x": 1})
    response = await driver.request("session/frobnicate", {"x": 1})
    assert response["error"]["code"] == -32601
    session_id = await driver.handshake(str(workspace))
    bad = await driver.request("session/prompt", prompt_params("no-such-session", "hi"))
    assert bad["error"]["code"] == -32602
    ok = await driver.request("session/prompt", prompt_params(session_id, "still alive?"))
    assert ok["result"]["stopReason"] == "end_turn"
    assert await driver.close() == 0
    assert b"malformed" in driver.stderr


async def test_demo_empty_workspace(tmp_path: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(tmp_path))
    response = await driver.request("session/prompt", prompt_params(session_id, ""))
    assert response["result"]["stopReason"] == "end_turn"
    assert driver.updates("tool_call_update")[-1]["status"] == "completed"
    assert await driver.close() == 0


async def test_initialize_offers_auth_load_and_session_capabilities(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    result = await initialize(driver)
    assert result["authMethods"] == [
        {"id": "demo-login", "name": "Demo login", "description": "Pretend to sign in to rat-demo; always succeeds"}
    ]
    capabilities = result["agentCapabilities"]
    assert capabilities["loadSession"] is True
    assert capabilities["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {}, "archive": {}}
    # auth is not required by default: a session starts at once
    assert "sessionId" in await new_session(driver, workspace)
    wrong = await driver.request("authenticate", {"methodId": "password"})
    assert wrong["error"]["code"] == -32602
    assert (await driver.request("authenticate", {"methodId": "demo-login"}))["result"] == {}
    assert await driver.close() == 0


async def test_auth_required_with_the_env(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV, env={"RAT_DEMO_REQUIRE_AUTH": "1"})
    await initialize(driver)
    for method, params in (("session/new", {"cwd": str(workspace), "mcpServers": []}), ("session/list", {}),
                           ("session/load", {"sessionId": "x", "cwd": str(workspace), "mcpServers": []})):
        refused = await driver.request(method, params)
        assert refused["error"]["code"] == -32000, method
        assert refused["error"]["message"] == "Authentication required"
    assert (await driver.request("authenticate", {"methodId": "demo-login"}))["result"] == {}
    assert "sessionId" in await new_session(driver, workspace)
    assert await driver.close() == 0


async def test_config_options_are_declared_and_honoured(workspace: Path) -> None:
    # without the boolean capability: mode and model only
    driver = Driver()
    await driver.start(DEMO_ARGV)
    await initialize(driver, {"fs": {"readTextFile": True, "writeTextFile": True}})
    options = options_by_id((await new_session(driver, workspace))["configOptions"])
    assert set(options) == {"mode", "model"}
    await driver.close()

    client = FakeClient(workspace)
    driver = Driver(on_request=client)
    client.driver = driver
    await driver.start(DEMO_ARGV)
    await initialize(driver, BOOLEAN_CAPS)
    created = await new_session(driver, workspace)
    session_id = created["sessionId"]
    options = options_by_id(created["configOptions"])
    assert set(options) == {"mode", "model", "thoughts"}
    mode, model, thoughts = options["mode"], options["model"], options["thoughts"]
    assert mode["category"] == "mode" and mode["type"] == "select" and mode["currentValue"] == "ask"
    assert [o["value"] for o in mode["options"]] == ["ask", "accept_edits", "read_only"]
    assert model["category"] == "model" and model["currentValue"] == "demo-flash"
    assert [(g["group"], [o["value"] for o in g["options"]]) for g in model["options"]] == [
        ("fast", ["demo-mini", "demo-flash"]), ("smart", ["demo-pro", "demo-ultra"])]
    assert thoughts["type"] == "boolean" and thoughts["currentValue"] is True

    async def set_option(config_id: str, value: Any, **extra: Any) -> dict:
        return await driver.request("session/set_config_option",
                                    {"sessionId": session_id, "configId": config_id, "value": value, **extra})

    answer = await set_option("model", "demo-ultra")
    assert options_by_id(answer["result"]["configOptions"])["model"]["currentValue"] == "demo-ultra"
    assert (await set_option("model", "gpt-99"))["error"]["code"] == -32602
    assert (await set_option("colour", "red"))["error"]["code"] == -32602
    assert (await set_option("thoughts", "no"))["error"]["code"] == -32602
    answer = await set_option("thoughts", False, type="boolean")
    assert options_by_id(answer["result"]["configOptions"])["thoughts"]["currentValue"] is False
    await set_option("mode", "accept_edits")

    # no thought streamed, the chosen model answers, the edit is made without asking
    response = await driver.request("session/prompt", prompt_params(session_id, "edit please"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert not driver.updates("agent_thought_chunk")
    assert "Answered by Demo Ultra in Accept edits mode" in answer_text(driver)
    assert "session/request_permission" not in client.methods()
    assert "edited by rat-demo" in (workspace / "demo-notes.txt").read_text()

    await set_option("mode", "read_only")
    client.calls.clear()
    await driver.request("session/prompt", prompt_params(session_id, "edit write run"))
    assert client.methods() == []
    assert answer_text(driver).count("Read only mode") >= 3
    assert await driver.close() == 0


async def test_usage_after_every_turn_and_a_title_after_the_first(workspace: Path) -> None:
    driver = Driver()
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(workspace))
    await driver.request("session/prompt", prompt_params(session_id, "please summarise the project layout for me now"))
    [usage] = driver.updates("usage_update")
    assert usage["size"] == 128_000 and 0 < usage["used"] <= usage["size"]
    assert usage["cost"]["currency"] == "USD" and usage["cost"]["amount"] > 0
    [info] = driver.updates("session_info_update")
    assert info["title"] == "Please summarise the project layout for…" and info["updatedAt"].endswith("Z")
    kinds = [u["sessionUpdate"] for u in driver.updates()]
    assert kinds.index("usage_update") > kinds.index("agent_message_chunk")  # at the end of the turn
    await driver.request("session/prompt", prompt_params(session_id, "again"))
    usages = driver.updates("usage_update")
    assert len(usages) == 2 and usages[1]["used"] > usages[0]["used"]
    assert usages[1]["cost"]["amount"] > usages[0]["cost"]["amount"]
    assert len(driver.updates("session_info_update")) == 1, "the title is set once"
    assert await driver.close() == 0
