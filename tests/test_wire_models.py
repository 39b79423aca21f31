"""The ACP models rat parses with (protocol/acp_models.py, the SDK's update models copied by
tools/gen_acp_models.py, imported by wire._import_models): the same parses as the SDK's `acp.schema`, without
the costs rat never uses.

Each check runs in a fresh interpreter, where no models are imported yet (the suite's own process imports
them early, in whatever order the tests run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "tests" / "fixtures" / "acp-traces"

# Every `session/update` of the recorded agents, and malformed ones, parsed through wire.parse_update;
# printed as what the reducer reads (the parsed model's fields, or what came back unknown and why).
PARSE_ALL = r'''
import importlib, json, sys
from pathlib import Path
from rat_tui.protocol import wire

if sys.argv[1] == "plain":  # the SDK's own module, as `import acp.schema` builds it, before rat's first parse
    wire._schema = importlib.import_module("acp.schema")
updates = []
for trace in sorted(Path(sys.argv[2]).rglob("*.jsonl")):
    for line in trace.read_text().splitlines():
        msg = json.loads(line).get("msg") or {}
        if msg.get("method") == "session/update":
            updates.append(msg["params"]["update"])
updates += [
    {"sessionUpdate": "tool_call", "toolCallId": 7, "title": "t"},
    {"sessionUpdate": "tool_call_update"},
    {"sessionUpdate": "plan", "entries": [{"content": "x", "priority": "urgent", "status": "pending"}]},
    {"sessionUpdate": "available_commands_update", "availableCommands": "none"},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": 3}},
    {"sessionUpdate": "usage_update", "used": "many"},
    {"sessionUpdate": "current_mode_update"},
]
out = []
for raw in updates:
    parsed = wire.parse_update(raw)
    if isinstance(parsed, wire.UnknownUpdate):
        out.append(["unknown", parsed.kind, parsed.problem])
    elif hasattr(parsed, "model_dump"):
        out.append([type(parsed).__name__, parsed.model_dump(mode="json", by_alias=True),
                    getattr(parsed, "tool_name", None)])
    else:
        out.append([type(parsed).__name__, repr(parsed)])
print(json.dumps(out))
'''

STATE_AFTER = r'''
import sys
from rat_tui.protocol import wire

module = wire.schema()
print("SDK", "acp" in sys.modules)
print("DOCSTRINGS", module.ToolCallStart.model_fields["title"].description)
print("BUILT", sorted(name for name in wire.UPDATE_MODELS.values()
                      if type(getattr(module, name).__pydantic_validator__).__name__ == "SchemaValidator")
      == sorted(wire.UPDATE_MODELS.values()))
'''


def run(code: str, *args: str) -> str:
    """`code` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"})  # (reprs of sets)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_lighter_import_parses_every_recorded_update_as_the_plain_one_does() -> None:
    plain = json.loads(run(PARSE_ALL, "plain", str(TRACES)))
    light = json.loads(run(PARSE_ALL, "light", str(TRACES)))
    assert len(plain) > 1500  # the recordings' updates, and the malformed ones after them
    # (the plan's unknown priority: the SDK skips that entry, the plan stands)
    assert [kind for kind, *_ in plain[-7:]] == ["unknown", "unknown", "AgentPlanUpdate", *["unknown"] * 4]
    assert light == plain


def test_the_models_import_without_the_sdk_and_build_the_update_models() -> None:
    out = run(STATE_AFTER)
    assert "SDK False" in out, out  # `import acp` imports the whole SDK, 270-odd models among it (0.7 s)
    assert "DOCSTRINGS None" in out, out  # not read for the ACP models (the cost)
    assert "BUILT True" in out, out  # built in wire.schema() (the warm-up's thread), not on first use


def test_the_copied_models_are_what_the_generator_writes_from_the_pinned_sdk() -> None:
    """An upgrade of the pinned SDK without running tools/gen_acp_models.py again fails here."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_acp_models.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "up to date" in done.stdout


# The warm-up's import (wire.schema(give_way=True)) with no input on its way, then while keys keep arriving.
GIVE_WAY = r'''
import sys, threading, time
from pydantic._internal._model_construction import ModelMetaclass
from rat_tui import priority
from rat_tui.protocol import wire

new = ModelMetaclass.__dict__["__new__"]
warm = threading.Thread(target=wire.schema, kwargs={"give_way": True})
if sys.argv[1] == "idle":
    warm.start()
    warm.join()
    print("WAITS", wire._waits)
else:
    warm.start()
    deadline = time.monotonic() + 60
    while wire._waits == 0 and time.monotonic() < deadline:  # keys keep arriving: the import pauses for them
        priority.input_arrived()
        time.sleep(0.001)
    print("PAUSED", wire._waits > 0, "DONE", "rat_tui.protocol.acp_models" in sys.modules and wire._schema is not None)
    module = wire.schema()  # wanted now: the import stops pausing and this returns
    warm.join()
    print("WANTED", wire._wanted, "BOUNDED", wire._given_way <= wire.GIVE_WAY_TOTAL + 0.01)
    # (a plain one is read without the models: wire.ToolCallFields)
    parsed = wire.parse_update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read", "kind": "read",
                                "locations": [{"path": "/w/a.py", "line": None}]})
    print("PARSED", type(parsed).__name__, parsed.title)
print("RESTORED", ModelMetaclass.__dict__["__new__"] is new)
'''


def test_the_warm_up_s_import_does_not_pause_when_no_key_is_on_its_way() -> None:
    out = run(GIVE_WAY, "idle")
    assert "WAITS 0" in out and "RESTORED True" in out, out


def test_the_warm_up_s_import_pauses_for_keys_on_their_way_until_the_models_are_wanted() -> None:
    """The warm-up's import sleeps while a key the user typed is on its way to the screen, so that it does not
    wait on the GIL (wire._give_way); a caller that needs the models ends the pauses."""
    out = run(GIVE_WAY, "busy")
    assert "PAUSED True DONE False" in out, out  # it paused before it was done
    assert "WANTED True BOUNDED True" in out, out
    assert "PARSED ToolCallStart Read" in out and "RESTORED True" in out, out
