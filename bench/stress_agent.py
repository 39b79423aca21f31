"""A scripted ACP agent for bench/stress.py: each prompt's text names a workload it then plays at full speed.

Usage: python bench/stress_agent.py. Stdlib only (the agent must not be the bottleneck). Every workload
ends with an agent message chunk "END-<name>" once its last piece is sent; a workload that asks the user
something (a form, a permission) carries "<NAME>-READY" in what the dialog shows, and ends once it is
answered. Sizes can be scaled with env RAT_STRESS_SCALE (1.0 = the figures of issue #11/#17).

Two more ways in, for bench/stress_sessions.py:
- a prompt "sync NAME" (tabs20: many agents, one per tab, start at the same instant) claims the lowest
  free slot number in the folder of env RAT_STRESS_GO (a file `slot-K` created exclusively), titles the
  session "K" (`session_info_update`, so 20 tab labels fit one tab bar), then waits until the file
  RAT_STRESS_GO exists before it plays NAME; env RAT_STRESS_NAME renames the agent (its `agentInfo`).
- the agent advertises `loadSession` and `session/list`: the list holds one session, "STORED-SESSION",
  whose `session/load` replays n(50,000) updates (user and agent message chunks, tool calls with their
  updates, a plan now and then) and ends with "END-load50000" before it answers.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from stream_agent import PIECES  # the same markdown answer pieces as bench/stream.py's agent

SCALE = float(os.environ.get("RAT_STRESS_SCALE", "1"))
out = sys.stdout
SESSION = "stress"
_next_id = 1000


def n(count: int) -> int:
    return max(1, int(count * SCALE))


def write(messages: list[dict]) -> None:
    out.write("".join(json.dumps(m) + "\n" for m in messages))
    out.flush()


def update(body: dict) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SESSION, "update": body}}


def chunk(text: str) -> dict:
    return update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def stream(updates, batch: int = 200) -> None:
    pending = []
    for message in updates:
        pending.append(message)
        if len(pending) >= batch:
            write(pending)
            pending = []
    if pending:
        write(pending)


def request(method: str, params: dict) -> dict:
    """Send a request and wait for its answer (other lines are ignored meanwhile)."""
    global _next_id
    _next_id += 1
    write([{"jsonrpc": "2.0", "id": _next_id, "method": method, "params": params}])
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("id") == _next_id and "method" not in msg:
            return msg
    raise SystemExit(0)


def big_file(lines: int) -> tuple[str, str]:
    """A file and its edit: a change every 10 lines (so lines // 10 lines added and removed)."""
    old = [f"    value_{i} = compute({i}, 'row {i}')" for i in range(lines)]
    new = [line + "  # changed" if i % 10 == 5 else line for i, line in enumerate(old)]
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


# -- workloads ------------------------------------------------------------------------------------


def chunks(count: int):
    def play() -> None:
        stream(chunk(PIECES[i % len(PIECES)].format(i=i // len(PIECES))) for i in range(n(count) - 1))

    return play


def diff() -> None:
    old, new = big_file(n(20000))
    write([update({"sessionUpdate": "tool_call", "toolCallId": "edit-1", "title": "Edit big.py", "kind": "edit",
                   "status": "completed", "locations": [{"path": "/tmp/stress/big.py"}],
                   "content": [{"type": "diff", "path": "/tmp/stress/big.py", "oldText": old, "newText": new}]})])


def output() -> None:
    text = "".join(f"line {i}: some tool output that goes on for a while\n" for i in range(n(50000)))
    write([update({"sessionUpdate": "tool_call", "toolCallId": "out-1", "title": "Read a long log", "kind": "read",
                   "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": text}}]})])


def terminal() -> None:
    """Terminal output through `_meta` (claude-agent-acp's display-only terminals): 50 MB with colours."""
    line = "\x1b[32mok\x1b[0m   \x1b[1mtest_case_{i}\x1b[0m passed in 0.01s " + "." * 40 + "\n"
    piece = "".join(line.format(i=i) for i in range(100))  # about 10 KB
    start = update({"sessionUpdate": "tool_call", "toolCallId": "term-1", "title": "pytest", "kind": "execute",
                    "status": "in_progress", "content": [{"type": "terminal", "terminalId": "t-1"}],
                    "_meta": {"terminal_info": {"terminal_id": "t-1"}}})
    updates = (update({"sessionUpdate": "tool_call_update", "toolCallId": "term-1",
                       "_meta": {"terminal_output": {"terminal_id": "t-1", "data": piece}}}) for _ in range(n(5000)))
    stream([start], 1)
    stream(updates, 20)
    write([update({"sessionUpdate": "tool_call_update", "toolCallId": "term-1", "status": "completed",
                   "_meta": {"terminal_exit": {"terminal_id": "t-1", "exit_code": 0}}})])


def markdown_block() -> None:
    """One paragraph of 1 MB (no blank line), streamed in 2,000 chunks."""
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
    stream(chunk(f"{words}{i} ") for i in range(n(2000 * 6)))
    write([chunk("\n\n")])


def code_block() -> None:
    """A python code block of 20,000 lines, streamed a line per chunk."""
    write([chunk("```python\n")])
    stream(chunk(f"def function_{i}(x, y):  # a comment\n    return x * {i} + y\n") for i in range(n(10000)))
    write([chunk("```\n\n")])


def plan() -> None:
    """A plan of 1,000 entries, sent 20 times as they progress."""
    count = n(1000)
    for step in range(20):
        done = count * step // 20
        entries = [{"content": f"Step {i}: do the thing number {i}", "priority": ("high", "medium", "low")[i % 3],
                    "status": "completed" if i < done else "in_progress" if i == done else "pending"}
                   for i in range(count)]
        write([update({"sessionUpdate": "plan", "entries": entries})])


def commands() -> None:
    cmds = [{"name": f"command-{i}", "description": f"Does thing {i} to the project, with care",
             "input": {"hint": "what"} if i % 2 else None} for i in range(n(500))]
    for _ in range(10):
        write([update({"sessionUpdate": "available_commands_update", "availableCommands": cmds})])


def toolcalls() -> None:
    def gen():
        for i in range(n(20000)):
            yield update({"sessionUpdate": "tool_call", "toolCallId": f"call-{i}", "title": f"Read file_{i}.py",
                          "kind": "read", "status": "in_progress",
                          "locations": [{"path": f"/tmp/stress/file_{i}.py"}]})
            yield update({"sessionUpdate": "tool_call_update", "toolCallId": f"call-{i}", "status": "completed",
                          "content": [{"type": "content", "content": {"type": "text", "text": f"contents {i}"}}]})
    stream(gen())


def notifications() -> None:
    """200,000 tiny notifications: two-character chunks, a paragraph break every 50."""
    stream((chunk("\n\n" if i % 50 == 49 else "a ") for i in range(n(200000))), 500)


def form() -> None:
    count = n(1000)
    props = {}
    for i in range(count):
        kind = i % 4
        if kind == 0:
            props[f"f{i}"] = {"type": "string", "title": f"Field {i}", "description": f"Text number {i}"}
        elif kind == 1:
            props[f"f{i}"] = {"type": "integer", "title": f"Count {i}", "minimum": 0, "maximum": 100}
        elif kind == 2:
            props[f"f{i}"] = {"type": "boolean", "title": f"Flag {i}", "default": i % 8 == 2}
        else:
            props[f"f{i}"] = {"type": "string", "title": f"Choice {i}", "enum": ["a", "b", "c"]}
    request("elicitation/create", {"sessionId": SESSION, "mode": "form", "message": "FORM-READY: a big form",
                                   "requestedSchema": {"type": "object", "properties": props}})


def pattern() -> None:
    """A field whose pattern backtracks catastrophically on its default value."""
    request("elicitation/create", {"sessionId": SESSION, "mode": "form", "message": "PATTERN-READY: type here",
                                   "requestedSchema": {"type": "object", "required": ["name"], "properties": {
                                       "name": {"type": "string", "title": "Name", "pattern": "^(a+)+$",
                                                "default": "a" * 26 + "!"}}}})


def permission() -> None:
    old, new = big_file(n(20000))
    call = {"toolCallId": "perm-1", "title": "PERMISSION-READY edit big.py", "kind": "edit", "status": "pending",
            "content": [{"type": "diff", "path": "/tmp/stress/big.py", "oldText": old, "newText": new}]}
    request("session/request_permission", {"sessionId": SESSION, "toolCall": call, "options": [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"}]})


def longline() -> None:
    """One message of 50 MB on one line: an answer chunk with no newline in it (issue #45's item 10)."""
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
    write([chunk(words * n(50 * 1024 * 1024 // len(words))), chunk("\n\n")])


WORKLOADS = {
    "chunks20000": chunks(20000), "chunks2000": chunks(2000), "diff": diff, "output": output,
    "terminal": terminal, "markdown": markdown_block, "code": code_block, "plan": plan, "commands": commands,
    "toolcalls": toolcalls, "notifications": notifications, "form": form, "pattern": pattern,
    "permission": permission, "longline": longline,
}


# -- a stored session (session/list, session/load) -------------------------------------------------

STORED = "stored-session"
LOAD_NAME = "load50000"


def replay(count: int):
    """`count` history updates in turns of ten: the user's question, an agent answer in six chunks, a
    read tool call and its completion, then a seventh chunk (every fifth turn, a plan of five steps)."""
    turn = 0
    sent = 0
    while True:
        c = turn
        steps = [
            update({"sessionUpdate": "user_message_chunk",
                    "content": {"type": "text", "text": f"question {c}: look at file_{c}.py and fix step {c}"}}),
            chunk(f"## Step {c}\n\n"),
            chunk(f"This is paragraph {c} with some *emphasis*, "),
            chunk(f"a `code span` and a [link](https://example.com/{c}). "),
            update({"sessionUpdate": "tool_call", "toolCallId": f"read-{c}", "title": f"Read file_{c}.py",
                    "kind": "read", "status": "in_progress", "locations": [{"path": f"/tmp/stress/file_{c}.py"}]}),
            update({"sessionUpdate": "tool_call_update", "toolCallId": f"read-{c}", "status": "completed",
                    "content": [{"type": "content", "content": {"type": "text",
                                                                "text": f"def step_{c}():\n    return {c}\n"}}]}),
            chunk("It keeps going for a while.\n\n"),
            chunk(f"- item one of list {c}\n"),
            chunk("- item two with **bold** text\n\n"),
            update({"sessionUpdate": "plan", "entries": [
                {"content": f"Step {c + k}", "priority": "medium",
                 "status": "completed" if k == 0 else "in_progress" if k == 1 else "pending"} for k in range(5)]})
            if c % 5 == 0 else chunk(f"Done with step {c}.\n\n"),
        ]
        for step in steps:
            if sent == count:
                return
            sent += 1
            yield step
        turn += 1


def load(session_id: str) -> None:
    global SESSION
    SESSION = session_id
    stream(replay(n(50000)))
    write([chunk(f"\n\nEND-{LOAD_NAME}\n")])


# -- many tabs at once --------------------------------------------------------------------------------


def synchronised() -> None:
    """Claim a slot, title the session with it, wait for the go file (see the module's docstring)."""
    go = Path(os.environ["RAT_STRESS_GO"])
    slot = 1
    while True:
        try:
            os.close(os.open(go.parent / f"slot-{slot}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            slot += 1
    write([update({"sessionUpdate": "session_info_update", "title": str(slot)})])
    while not go.exists():
        time.sleep(0.005)


def main() -> None:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            result = {"protocolVersion": 1,
                      "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
                      "agentInfo": {"name": os.environ.get("RAT_STRESS_NAME", "stress")}}
        elif method == "session/new":
            result = {"sessionId": SESSION}
        elif method == "session/prompt":
            blocks = msg.get("params", {}).get("prompt") or [{}]
            name = str(blocks[0].get("text", "")).strip()
            if name.startswith("sync "):
                name = name.removeprefix("sync ").strip()
                synchronised()
            play = WORKLOADS.get(name)
            if play is None:
                write([chunk(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")])
            else:
                play()
            write([chunk(f"\n\nEND-{name}\n")])
            result = {"stopReason": "end_turn"}
        elif method == "session/list":
            cwd = msg.get("params", {}).get("cwd") or os.getcwd()
            result = {"sessions": [{"sessionId": STORED, "cwd": cwd, "updatedAt": "2026-01-01T00:00:00Z",
                                    "title": f"STORED-SESSION with {n(50000)} updates"}]}
        elif method == "session/load":
            load(str(msg.get("params", {}).get("sessionId") or STORED))
            result = {}
        elif mid is None:
            continue
        else:
            write([{"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "not supported"}}])
            continue
        write([{"jsonrpc": "2.0", "id": mid, "result": result}])


if __name__ == "__main__":
    main()
