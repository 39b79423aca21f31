"""The fake agents in tests/agents/: their command lines and what they recorded."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from rat_tui.protocol.transport import AgentProcess

ROOT = Path(__file__).resolve().parent.parent.parent
AGENTS = ROOT / "tests" / "agents"

# An agent's own login method, as `initialize` offers it.
AGENT_METHOD = {"id": "oauth", "name": "Browser login", "description": "Opens your browser to sign in"}


def scripted_argv(script: dict, tmp_path: Path) -> list[str]:
    """The command line of the scripted fake agent playing `script`."""
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script))
    return [sys.executable, str(AGENTS / "scripted_agent.py"), str(script_file)]


def received(record: Path) -> list[dict]:
    """Every JSON message the fake agent received, in order."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text().splitlines() if line.strip()]


def sent(record: Path, method: str) -> list[dict]:
    """The messages of one method the fake agent received."""
    return [m for m in received(record) if m.get("method") == method]


# A scripted agent's step asking the client something it does not know (answered "method not found"): a
# barrier. The client answers it only after everything it read before, so once the answer is recorded,
# whatever the client did in reply to the earlier messages (a prompt sent, a cancel) is recorded too.
PROBE_METHOD = "x/probe"
PROBE = {"request": {"method": PROBE_METHOD, "params": {}}}


def answered(record: Path, method: str = PROBE_METHOD) -> int:
    """How many of the scripted agent's requests of `method` the client has answered."""
    asked = Path(str(record) + ".sent")
    lines = asked.read_text().splitlines() if asked.exists() else []
    ids = {request["id"] for request in map(json.loads, lines) if request.get("method") == method}
    return sum(1 for m in received(record) if "method" not in m and m.get("id") in ids)


def assert_sent_messages_valid(path: Path) -> None:
    from .acp_schema import def_name, validate_message

    sent = Path(str(path) + ".sent")
    asked = [json.loads(line) for line in sent.read_text().splitlines()] if sent.exists() else []
    methods = {request["id"]: request["method"] for request in asked}
    for message in received(path):
        method = methods.get(message.get("id")) if "method" not in message else None
        if method is not None and def_name(method, "response") is None:
            continue  # our answer to a made-up method (the tests' "x/unknown"): nothing to check
        validate_message(message, "client", {message["id"]: method} if method else {})


async def first_line(agent: AgentProcess) -> bytes:
    """The agent's first line, read as the router reads (AgentProcess.read_lines), the reader then stopped."""
    got: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
    reader = asyncio.create_task(agent.read_lines(lambda line: got.done() or got.set_result(line)))
    try:
        return await got
    finally:
        reader.cancel()
