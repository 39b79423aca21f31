"""A deliberately misbehaving ACP agent for tests, run as a real subprocess (standard library only).

    python tests/agents/hostile_agent.py CASE [JSON-ARGS]

It is the scripted agent (scripted_agent.py: same wire, same recording through RAT_FAKE_RECORD) playing
a script built here for CASE, plus steps only a hostile agent needs:

    {"stop_reading": true}           stop reading stdin (the pipe stays open: rat's writes pile up)
    {"ignore_term": true}            ignore SIGTERM from now on (only SIGKILL ends it)
    {"spawn_child": PATH}            start a child that sleeps for ever and write its pid to PATH
    {"write_race": {"dir": D, "outside": O, "count": N}}
                                     swap directory D for a symlink to O (and back) in a thread while
                                     sending N fs/write_text_file requests for files in D, 64 at a time

Cases (each a list of what rat-tui must survive; the tests in tests/test_hostile_agent.py check them):

    escapes      every text field of every message kind carries escape sequences (OSC 52 clipboard,
                 OSC 0 title, CSI 2J clear, CSI 6n device query, 8-bit CSI, DCS, BEL): agent info, auth
                 methods, modes, models, config options, every session/update variant, a permission
                 request, an elicitation form, rat-tui's own `notify` tool, an error answer, stderr
    malformed    a bad message of each kind, then a normal answer: JSON-RPC errors whose code is a
                 string or null, 10,000-deep JSON, integers too big for a float, requests with no
                 method, a notification with params of the wrong type, modes/config options/models of
                 the wrong shape in session/new, a line of 2 MB
    scope        fs requests outside the cwd, through a symlink, for an unknown session and for none; a
                 permission request for an unknown session; terminal/create with a cwd outside; a tool
                 call whose diff names a file outside the cwd
    race         the symlink race: JSON-ARGS {"dir", "outside", "count"}
    deaf         answers the handshake, then stops reading stdin, ignores SIGTERM and sends fs reads of
                 a big file (its answers can never be delivered); JSON-ARGS {"child_pid": PATH} also
                 leaves a grandchild in its process group
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scripted_agent import ScriptedAgent  # noqa: E402

# What every text field carries: clipboard write, window title, clear screen, cursor report request,
# an 8-bit CSI, a DCS string, a bell; the marker words let a test find where each one ended up.
HOSTILE = "\x1b]52;c;SE9TVElMRQ==\x07\x1b]0;PWNED\x07\x1b[2J\x1b[6n\x9b6n\x1bP+q544e\x1b\\\x07"


def evil(label: str) -> str:
    return f"{label}<{HOSTILE}>"


def escapes_script() -> dict:
    options = [{"id": "opt", "name": evil("option"), "description": evil("option description"), "type": "select",
                "currentValue": "v1", "options": [{"value": "v1", "name": evil("value"), "description": evil("vd")}]}]
    modes = {"currentModeId": "m1", "availableModes": [{"id": "m1", "name": evil("mode"), "description": evil("md")}]}
    models = {"currentModelId": "x1", "availableModels": [{"modelId": "x1", "name": evil("model"), "description": evil("d")}]}
    diff = {"type": "diff", "path": "notes.txt", "oldText": evil("old text"), "newText": evil("new text")}
    tool = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": evil("tool title"), "kind": "edit",
            "status": "in_progress", "content": [{"type": "content", "content": {"type": "text", "text": evil("tool text")}}, diff],
            "locations": [{"path": evil("/location")}], "rawInput": {"command": evil("raw input")}}
    terminal = {"sessionUpdate": "tool_call_update", "toolCallId": "t2", "title": evil("terminal card"), "status": "in_progress",
                "content": [{"type": "terminal", "terminalId": "tm1"}],
                "_meta": {"terminal_output": {"terminal_id": "tm1", "data": "\x1b[31mred-output\x1b[0m " + evil("terminal") + "\n"}}}
    updates = [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": evil("message") + "\n\n"}},
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": evil("thought")}},
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": evil("user echo")}},
        {"sessionUpdate": "agent_message_chunk",
         "content": {"type": "resource_link", "uri": "file:///x", "name": evil("link name"), "title": evil("link title")}},
        tool,
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "rawOutput": {"out": evil("raw output")}},
        terminal,
        {"sessionUpdate": "plan", "entries": [{"content": evil("plan entry"), "priority": "high", "status": "pending"}]},
        {"sessionUpdate": "available_commands_update",
         "availableCommands": [{"name": "cmd", "description": evil("command description"), "input": {"hint": evil("hint")}}]},
        {"sessionUpdate": "config_option_update", "configOptions": options},
        {"sessionUpdate": "session_info_update", "title": evil("session title")},
        {"sessionUpdate": "notice", "severity": "warning", "title": evil("notice title"), "description": evil("notice text")},
        {"sessionUpdate": "made_up_update", "field": evil("unknown update")},
    ]
    permission = {"sessionId": "$SESSION", "toolCall": {"toolCallId": "t3", "title": evil("permission title"), "kind": "execute",
                                                        "rawInput": {"command": evil("rm")}},
                  "options": [{"optionId": "allow", "name": evil("allow option"), "kind": "allow_once"},
                              {"optionId": "reject", "name": evil("reject option"), "kind": "reject_once"}]}
    form = {"sessionId": "$SESSION", "mode": "form", "message": evil("elicitation message"),
            "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "title": evil("field title"), "description": evil("field description")},
                "pick": {"type": "string", "title": evil("pick"), "enum": ["a", "b"], "enumNames": [evil("A"), evil("B")]}}}}
    mcp_init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}
    notify = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "notify", "arguments": {"message": evil("notify")}}}
    odd_names = [  # a method name and an id are shown too (the traffic inspector)
        {"send": {"jsonrpc": "2.0", "method": evil("x/method"), "params": {}}},
        {"request": {"method": evil("x/request"), "params": {}, "id": evil("id")}},
    ]
    turn1 = [{"update": u} for u in updates] + odd_names + [
        {"stderr": evil("stderr line")},
        {"request": {"method": "session/request_permission", "params": permission}},
        {"request": {"method": "elicitation/create", "params": form}},
        {"mcp_acp": {"conn": "a", "messages": [mcp_init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, notify]}},
        {"error": {"code": -32603, "message": evil("error message"), "data": {"details": evil("error details")}}},
    ]
    turn2 = [{"stderr": evil("last words")}, {"exit": 3}]
    return {
        "initialize_result": {
            "agentInfo": {"name": evil("agent name"), "title": evil("agent title"), "version": "6.6.6"},
            "authMethods": [{"id": "login", "name": evil("auth name"), "description": evil("auth description")}],
            "agentCapabilities": {"mcpCapabilities": {"acp": True}, "loadSession": False},
        },
        "new_session_result": {"modes": modes, "models": models, "configOptions": options},
        "turns": [turn1, turn2],
    }


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def malformed_script() -> dict:
    update = {"sessionUpdate": "usage_update", "used": 10**300, "size": 10**300, "cost": {"amount": 10**300, "currency": "USD"}}
    steps = [
        {"raw": json.dumps({"jsonrpc": "2.0", "method": "session/update",
                            "params": {"sessionId": "$SESSION", "update": {"sessionUpdate": "agent_message_chunk",
                                                                          "content": {"type": "text", "text": deep(10000)}}}})},
        {"raw": '{"jsonrpc":"2.0","method":"session/update","params":' + deep(10000) + "}"},
        {"raw": '{"jsonrpc":"2.0","id":"deep","method":"fs/read_text_file","params":{"x":' + deep(500) + "}}"},
        {"update": update},
        {"raw": '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"$SESSION","update":'
                '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"big number"},"n":' + "9" * 400 + "}}}"},
        {"raw": '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"$SESSION","update":{"x":NaN}}}'},
        {"send": {"jsonrpc": "2.0", "id": "no-method"}},
        {"send": {"jsonrpc": "2.0", "id": "bad-method", "method": 42}},
        {"send": {"jsonrpc": "2.0", "id": {"an": "object"}, "method": "fs/read_text_file", "params": {}}},
        {"send": {"jsonrpc": "2.0", "id": "bad-params", "method": "fs/read_text_file", "params": [1, 2]}},
        {"send": {"jsonrpc": "2.0", "method": "session/update", "params": "not an object"}},
        {"send": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "$SESSION", "update": "nope"}}},
        {"send": {"jsonrpc": "2.0", "method": "session/update",
                  "params": {"sessionId": "$SESSION", "update": {"sessionUpdate": "tool_call", "toolCallId": 5, "content": "x"}}}},
        {"send": {"jsonrpc": "2.0", "method": "session/update",
                  "params": {"sessionId": "$SESSION", "update": {"sessionUpdate": "plan", "entries": "x"}}}},
        {"raw": "x" * (2 * 1024 * 1024)},
        {"raw": "[1, 2, 3]"},
        {"chunk": "still alive after the garbage"},
    ]
    return {
        "new_session_result": {"modes": {"currentModeId": 7, "availableModes": "all of them"},
                               "models": {"availableModels": [None, 3, {"modelId": None}]},
                               "configOptions": [None, {"id": 1}, {"id": "o", "type": "select", "options": "x"}]},
        # Each prompt: the garbage, then an error answer of a broken shape (the last turn is fine).
        "on_request": {"session/prompt": [
            steps + [{"error": {"code": "not a number", "message": "string code"}}],
            [{"chunk": "turn two"}, {"error": {"code": None, "message": None}}],
            [{"chunk": "turn three"}, {"error": {"code": 1.5e300, "message": ["a", "list"]}}],
            [{"chunk": "turn four is fine"}],
        ]},
    }


def scope_script(args: dict) -> dict:
    outside = args["outside"]
    link = args["link"]
    steps = [
        {"request": {"method": "fs/read_text_file", "params": {"sessionId": "$SESSION", "path": f"{outside}/secret.txt"}}},
        {"request": {"method": "fs/read_text_file", "params": {"sessionId": "$SESSION", "path": f"{link}/secret.txt"}}},
        {"request": {"method": "fs/write_text_file", "params": {"sessionId": "$SESSION", "path": f"{link}/planted.txt", "content": "x"}}},
        {"request": {"method": "fs/read_text_file", "params": {"sessionId": "other-session", "path": args["inside_file"]}}},
        {"request": {"method": "fs/write_text_file", "params": {"path": args["inside_dir"] + "/no-session.txt", "content": "x"}}},
        {"request": {"method": "session/request_permission", "params": {
            "sessionId": "ghost", "toolCall": {"toolCallId": "g1", "title": "ghost"},
            "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}]}}},
        {"request": {"method": "terminal/create", "params": {"sessionId": "$SESSION", "command": "touch planted-by-terminal",
                                                             "cwd": outside}}},
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "d1", "title": "edit outside", "kind": "edit", "status": "completed",
                    "content": [{"type": "diff", "path": f"{outside}/victim.txt", "oldText": "agent-chosen original\n",
                                 "newText": "victim\n"}]}},
        {"request": {"method": "fs/read_text_file", "params": {"sessionId": "$SESSION", "path": args["inside_file"]}}},
        # rat-tui's own show_file, for a file outside: it must ask (and with nobody to ask, refuse)
        {"mcp_acp": {"conn": "t", "messages": [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "show_file", "arguments": {"path": f"{outside}/secret.txt"}}}]}},
    ]
    return {"initialize_result": {"agentCapabilities": {"mcpCapabilities": {"acp": True}}}, "turns": [steps]}


class HostileAgent(ScriptedAgent):
    async def step(self, step: dict, handling: Any) -> None:
        if "stop_reading" in step:
            keep = os.dup(0)  # the pipe stays open: rat sees a reader that never reads
            self._kept_stdin = keep
            quiet_r, _quiet_w = os.pipe()
            self._quiet = _quiet_w
            os.dup2(quiet_r, 0)
        elif "ignore_term" in step:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        elif "spawn_child" in step:
            child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1000)"])
            Path(step["spawn_child"]).write_text(str(child.pid))
        elif "write_race" in step:
            await self.write_race(**step["write_race"])
        else:
            await super().step(step, handling)

    async def write_race(self, dir: str, outside: str, count: int) -> None:
        """Exchange D (a directory) and D.link (a symlink to `outside`) atomically, over and over, while
        writing files into D: at any moment D is one or the other, never missing."""
        directory, link = Path(dir), Path(dir + ".link")
        directory.mkdir(exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(outside)
        exchange = _exchanger()
        stop = threading.Event()
        swaps = [0]

        def swap() -> None:
            while not stop.is_set():
                exchange(directory, link)
                swaps[0] += 1

        swapper = threading.Thread(target=swap, daemon=True)
        swapper.start()
        try:
            for start in range(0, count, 64):
                await asyncio.gather(*(self.wire.request("fs/write_text_file", {
                    "sessionId": self.session_id, "path": f"{dir}/f{n % 100}.txt", "content": f"write {n}\n"})
                    for n in range(start, min(count, start + 64))))
        finally:
            stop.set()
            swapper.join()
        if directory.is_symlink():
            exchange(directory, link)  # leave the real directory in place for the test to look at
        sys.stderr.write(f"hostile-agent: {swaps[0]} swaps\n")


def _exchanger():
    """renameat2(RENAME_EXCHANGE) on Linux; elsewhere two renames through a parking name."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is not None:
        def exchange(a: Path, b: Path) -> None:
            renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2)  # AT_FDCWD, RENAME_EXCHANGE
        return exchange

    def fallback(a: Path, b: Path) -> None:
        parked = a.with_name(a.name + ".parked")
        for x, y in ((a, parked), (b, a), (parked, b)):
            try:
                os.rename(x, y)
            except OSError:
                pass
    return fallback


def deaf_script(args: dict) -> dict:
    steps: list[dict] = [{"ignore_term": True}]
    if args.get("child_pid"):
        steps.append({"spawn_child": args["child_pid"]})
    steps += [{"stop_reading": True}]
    # Ask for a big file over and over without waiting: rat's answers can never be delivered.
    steps += [{"request": {"method": "fs/read_text_file", "params": {"sessionId": "$SESSION", "path": args["big_file"]}},
               "wait": False} for _ in range(int(args.get("reads", 40)))]
    steps += [{"chunk": "deaf now"}, {"sleep": 3600}]
    return {"turns": [steps]}


def script_for(case: str, args: dict) -> dict:
    if case == "escapes":
        return escapes_script()
    if case == "malformed":
        return malformed_script()
    if case == "scope":
        return scope_script(args)
    if case == "race":
        return {"turns": [[{"write_race": args}]]}
    if case == "deaf":
        return deaf_script(args)
    raise SystemExit(f"unknown case {case!r}")


def main() -> None:
    case = sys.argv[1] if len(sys.argv) > 1 else "escapes"
    args = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    try:
        asyncio.run(HostileAgent(script_for(case, args)).run())
    except (KeyboardInterrupt, BrokenPipeError):
        pass


if __name__ == "__main__":
    main()
