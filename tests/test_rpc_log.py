"""The JSONL traffic log keeps its shape and never writes a secret."""

import json
from pathlib import Path

from rat_tui.protocol.rpc_log import REDACTED, SECRET_KEY, RpcLog, redact

TRACES = Path(__file__).resolve().parent / "fixtures" / "acp-traces"


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


def _plain_redact(value, key="", *, max_string=2000):
    """redact as it was before its fast paths (every value walked, every key searched): the reference."""
    if isinstance(value, dict):
        if "name" in value and "value" in value and isinstance(value.get("value"), str):
            secret = key == "env" or SECRET_KEY.search(str(value["name"]))
            return {**value, "value": REDACTED} if secret else value
        if key in ("env", "headers"):
            return dict.fromkeys(value, REDACTED)
        return {k: (REDACTED if SECRET_KEY.search(k) and isinstance(v, str) else _plain_redact(v, k, max_string=max_string))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_redact(item, key, max_string=max_string) for item in value]
    if isinstance(value, str):
        if SECRET_KEY.search(key):
            return REDACTED
        if len(value) > max_string:
            return value[:max_string] + f"…[{len(value) - max_string} more chars]"
    return value


def test_redaction_of_every_recorded_message_is_what_walking_all_of_it_gives() -> None:
    """The fast paths (keys' verdicts cached, short strings and numbers kept without a call) change
    nothing: every message of the recorded agents, the secrets above, and long, odd and nested values."""
    messages = [json.loads(line)["msg"] for trace in sorted(TRACES.rglob("*.jsonl"))
                for line in trace.read_text().splitlines()]
    messages += [
        {"token": "t", "tokens": 5, "password": None, "apiKey": ["a", "b"], "secret": {"value": "v", "name": "x"},
         "text": "x" * 5000, "nested": [{"authorization": "b", "deep": [{"cookie": "c"}]}], "flag": True,
         "ratio": 0.5, "env": {"A": "1"}, "headers": [{"name": "Cookie", "value": "z"}], "Credential": "C"},
        {"params": {"env": [{"name": "PATH", "value": "/bin"}], "meta": {"_token_count": 3, "note": "y" * 2001}}},
    ]
    assert len(messages) > 2000
    for message in messages:
        assert redact(message) == _plain_redact(message)
        assert redact(message, max_string=10) == _plain_redact(message, max_string=10)


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
