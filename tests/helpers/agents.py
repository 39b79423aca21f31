"""The fake agents in tests/agents/: their command lines and what they recorded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

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
