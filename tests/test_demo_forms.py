"""The demo agent asking through forms (elicitation) and sending notices, against the schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers.demo_driver import DEMO_ARGV, Driver, answer_text, prompt_params, start_with_client

pytestmark = pytest.mark.slow


ELICITATION_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True, "elicitation": {"form": {}}}


async def test_form_asks_through_elicitation(workspace: Path) -> None:
    answer = {"action": "accept", "content": {"name": "rat", "language": "python", "size": "small", "files": 4,
                                              "confidence": 0.75, "tests": False}}
    driver, client, session_id = await start_with_client(workspace, ELICITATION_CAPS, elicitation=answer)
    response = await driver.request("session/prompt", prompt_params(session_id, "show me a form"))
    assert response["result"] == {"stopReason": "end_turn"}
    [params] = client.params_of("elicitation/create")  # the Driver validated it against the schema
    assert params["sessionId"] == session_id and params["mode"] == "form" and params["message"]
    schema = params["requestedSchema"]
    types = {name: prop["type"] for name, prop in schema["properties"].items()}
    assert types == {"name": "string", "language": "string", "size": "string", "files": "integer",
                     "confidence": "number", "tests": "boolean"}
    assert schema["required"] == ["name", "language"]
    assert "enum" in schema["properties"]["size"] and "oneOf" in schema["properties"]["language"]
    text = answer_text(driver)
    assert 'name = "rat"' in text and 'language = "python"' in text and "files = 4" in text
    assert "confidence = 0.75" in text and "tests = false" in text

    client.elicitation = {"action": "decline"}
    await driver.request("session/prompt", prompt_params(session_id, "form"))
    assert "you declined the form" in answer_text(driver)
    client.elicitation = {"action": "accept", "content": {"size": "large"}}
    await driver.request("session/prompt", prompt_params(session_id, "form"))
    assert "the required name, language missing" in answer_text(driver)
    assert await driver.close() == 0


async def test_form_without_the_capability_is_skipped(workspace: Path) -> None:
    driver, client, session_id = await start_with_client(workspace)
    response = await driver.request("session/prompt", prompt_params(session_id, "form"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert client.calls == []
    assert "did not advertise `elicitation.form`" in answer_text(driver)
    assert await driver.close() == 0


async def test_notice_matches_the_unstable_schema(workspace: Path) -> None:
    from .helpers.acp_schema import validate_unstable

    driver = Driver(validate=False)  # the stable schema has no `notice` yet
    await driver.start(DEMO_ARGV)
    session_id = await driver.handshake(str(workspace))
    response = await driver.request("session/prompt", prompt_params(session_id, "send a notice"))
    assert response["result"] == {"stopReason": "end_turn"}
    [notice] = driver.updates("notice")
    assert notice["severity"] == "warning" and notice["title"]
    for message in driver.received:
        if message.get("method") == "session/update":
            validate_unstable("SessionNotification", message["params"])
    assert "sent a warning notice" in answer_text(driver)
    assert await driver.close() == 0
