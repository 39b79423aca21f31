"""The JSONL traffic log keeps its shape and never writes a secret."""

import json
from pathlib import Path

from rat_tui.protocol.rpc_log import REDACTED, RpcLog, redact


def test_secrets_are_redacted() -> None:
    message = {
        "method": "session/new",
        "params": {
            "mcpServers": [
                {"name": "gh", "command": "/bin/gh", "env": [{"name": "GITHUB_TOKEN", "value": "ghp_secret"}],
                 "headers": [{"name": "Authorization", "value": "Bearer abc"}]},
                {"name": "web", "url": "https://x", "headers": [{"name": "X-Trace", "value": "visible"}]},
            ],
            "apiKey": "sk-123",
            "auth": {"access_token": "tok", "note": "fine"},
            "env": {"HOME": "/home/me"},
        },
    }
    clean = redact(message)
    text = json.dumps(clean)
    for secret in ("ghp_secret", "Bearer abc", "sk-123", '"tok"', "/home/me"):
        assert secret not in text
    assert clean["params"]["auth"]["note"] == "fine"
    assert clean["params"]["mcpServers"][1]["headers"][0]["value"] == "visible"
    assert clean["params"]["mcpServers"][0]["env"][0] == {"name": "GITHUB_TOKEN", "value": REDACTED}
    assert message["params"]["apiKey"] == "sk-123", "redaction must not touch the live message"


def test_log_lines_have_time_direction_method_id_bytes(tmp_path: Path) -> None:
    log = RpcLog(tmp_path / "rpc.jsonl")
    log.record("out", {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"text": "x" * 10_000}}, 10_050)
    log.record("in", {"jsonrpc": "2.0", "id": 3, "result": {}}, 40, method="session/prompt", latency=0.25)
    log.record("in", "not json at all", 16)
    log.close()
    first, second, third = [json.loads(line) for line in (tmp_path / "rpc.jsonl").read_text().splitlines()]
    assert {"time", "dir", "method", "id", "bytes"} <= set(first) and first["bytes"] == 10_050
    assert len(first["msg"]["params"]["text"]) < 2100
    assert second["method"] == "session/prompt" and second["latency_ms"] == 250.0
    assert third["raw"] == "not json at all"
