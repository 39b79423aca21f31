"""Provides the ACP v2 wire mapping: v2 messages onto the shapes the client and the reducer already use.

rat-tui keeps one state model and two wire mappings. v1 is the native one; this module maps ACP v2
(Preview, schema `v2-preview`) onto it, in both directions:

- `initialize_params` / `hello_from_v2`: the v2 handshake, and the agent's v2 capabilities read as the
  v1 `agentCapabilities` the rest of the client consults (`AgentHello.supports`, MCP planning,
  attachments). The request also carries the v1 fields, so an agent that answers v1 is spoken to in
  v1 on the same connection (the v2 schema allows extra keys there).
- `V2Codec`: installed on the `Connection` once the agent answered v2. It rewrites the client's
  outgoing calls (`authenticate` → `auth/login`, `logout` → `auth/logout`, stdio MCP servers tagged,
  `set_config_option` with its required `type`), maps results (`configOptions` by `configId`,
  `availableCommands`), maps permission requests (`title` + `subject`) to the v1 shape the
  PermissionBroker reads, and follows each session's `state_update`s: in v2 a prompt's answer only
  says the prompt was inserted, and the turn ends at `idle` (`wait_idle`).
- `UpdateMapper`: one per store; each v2 `session/update` becomes what the reducer applies: a v1
  update dict parsed by `wire.parse_update` where v1 has the same thing, or one of the dataclasses
  below for what v1 lacks (message upserts, agent-owned terminals, the session's activity).

Only plain data and asyncio here: no Textual, no state/.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any

from . import wire
from .sanitize import clean_data
from .client import PROTOCOL_V2  # (defined there: the client checks for v2 before importing this module)

log = logging.getLogger("rat.v2")

UNSUPPORTED_VERSION = -32022  # ErrorCode "Unsupported protocol version" (v2), data {requested, supported}

# Methods a v2 agent no longer calls on the client: no client file system, no client terminals.
V1_ONLY_CLIENT_METHODS = (
    "fs/read_text_file", "fs/write_text_file",
    "terminal/create", "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release",
)
# Outgoing methods renamed in v2.
RENAMED = {"authenticate": "auth/login", "logout": "auth/logout"}
V1_MESSAGE_KINDS = {"user_message": "user", "agent_message": "agent", "agent_thought": "thought"}


def client_capabilities() -> dict[str, Any]:
    """The client capabilities v2 has left: terminal logins, elicitation and prompt suggestions (all shown)."""
    return {"auth": {"terminal": {}}, "elicitation": {"form": {}, "url": {}}, "session": {"promptSuggestions": {}}}


def initialize_params(client_info: dict[str, Any], v1_capabilities: dict[str, Any]) -> dict[str, Any]:
    """A v2 `initialize` that a v1 agent can answer too (it reads `clientCapabilities`, answers version 1)."""
    return {
        "protocolVersion": PROTOCOL_V2,
        "info": client_info,
        "capabilities": client_capabilities(),
        # For an agent that answers v1 (v2 agents ignore keys they do not know).
        "clientCapabilities": v1_capabilities,
        "clientInfo": client_info,
    }


def v1_capabilities(result: dict[str, Any]) -> dict[str, Any]:
    """A v2 `initialize` result's capabilities, read as v1 `agentCapabilities`.

    list, resume and close are baseline in v2; there is no `session/load`; object flags (`{}`) become
    the booleans v1 used; `auth/logout` exists whenever the agent lists auth methods.
    """
    caps = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
    session = caps.get("session") if isinstance(caps.get("session"), dict) else {}
    prompt = session.get("prompt") if isinstance(session.get("prompt"), dict) else {}
    mcp = session.get("mcp") if isinstance(session.get("mcp"), dict) else {}
    sessions = {name: {} for name in ("list", "resume", "close")}
    for name in ("delete", "fork", "archive", "status", "title", "additionalDirectories", "systemPrompt", "options"):
        if isinstance(session.get(name), dict):
            sessions[name] = session[name]
    auth: dict[str, Any] = dict(caps.get("auth")) if isinstance(caps.get("auth"), dict) else {}
    methods = result.get("authMethods")
    if isinstance(methods, list) and methods:
        auth["logout"] = {}
    return {
        "loadSession": False,
        "promptCapabilities": {kind: isinstance(prompt.get(kind), dict) for kind in ("image", "audio", "embeddedContext")},
        # stdio needs its capability in v2; SSE is gone. MCP-over-ACP stays off: rat-tui's native transport
        # speaks v1's shape, so in v2 its own tools go through the stdio shim.
        "mcpCapabilities": {kind: isinstance(mcp.get(kind), dict) for kind in ("stdio", "http")} | {"sse": False, "acp": False},
        "sessionCapabilities": sessions,
        "auth": auth,
        "v2": caps,
    }


def v1_auth_methods(methods: Any) -> list[dict[str, Any]]:
    """v2 `AuthMethod`s (`methodId`, terminal `env` as `[{name, value}]`) in the v1 shape the UI reads."""
    out = []
    for method in methods if isinstance(methods, list) else []:
        if not isinstance(method, dict) or not isinstance(method.get("methodId"), str):
            continue
        item = {k: v for k, v in method.items() if k != "methodId"}
        item["id"] = method["methodId"]
        if isinstance(method.get("env"), list):
            item["env"] = {e["name"]: e["value"] for e in method["env"]
                           if isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("value"), str)}
        out.append(item)
    return out


# -- shapes shared by results and updates -------------------------------------------------------


def v1_config_options(options: Any) -> list[dict[str, Any]]:
    """v2 `SessionConfigOption`s (`configId`, groups by `groupId`) as v1 ones (`id`, `group`)."""
    out = []
    for option in options if isinstance(options, list) else []:
        if not isinstance(option, dict) or not isinstance(option.get("configId", option.get("id")), str):
            continue
        item = {k: v for k, v in option.items() if k != "configId"}
        item["id"] = option.get("configId", option.get("id"))
        if isinstance(option.get("options"), list):
            item["options"] = [
                ({**{k: v for k, v in o.items() if k != "groupId"}, "group": o["groupId"]}
                 if isinstance(o, dict) and "groupId" in o else o)
                for o in option["options"]
            ]
        out.append(item)
    return out


def v1_commands(commands: Any) -> list[dict[str, Any]]:
    """v2 `AvailableCommand`s (`type: "command"`, `input {type: "text", hint}`) as v1 ones."""
    out = []
    for command in commands if isinstance(commands, list) else []:
        if not isinstance(command, dict) or not isinstance(command.get("name"), str):
            continue
        item: dict[str, Any] = {"name": command["name"], "description": str(command.get("description") or "")}
        hint = command.get("input", {}).get("hint") if isinstance(command.get("input"), dict) else None
        if isinstance(hint, str):
            item["input"] = {"hint": hint}
        out.append(item)
    return out


def v2_mcp_servers(servers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The planned (v1-shaped) MCP servers for a v2 `session/new` / `resume`: stdio is tagged, SSE is gone."""
    out = []
    for server in servers:
        kind = server.get("type")
        if kind in (None, "stdio"):
            out.append({**server, "type": "stdio"})
        elif kind in ("http", "acp"):
            out.append(server)
        else:
            log.info("MCP server %s (%s) not sent: ACP v2 has no such transport", server.get("name"), kind)
    return out


_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def v1_diffs(item: dict[str, Any]) -> list[dict[str, Any]]:
    """A v2 diff (`changes` + an optional `git_patch`) as v1 diff items: one per hunk (`path`, `oldText`,
    `newText`, the hunk's sides; `oldText` absent for a new file), which the diff view, the permission
    dialog, the change tracker and the rules read. A change without a patch shows as an empty diff."""
    if item.get("type") != "diff" or "changes" not in item:
        return [item]  # already v1-shaped (or not a diff)
    changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
    operations = {str(c.get("path")): str(c.get("operation")) for c in changes}
    patch = item.get("patch") if isinstance(item.get("patch"), dict) else {}
    text = patch.get("text") if isinstance(patch.get("text"), str) else ""
    out = [_diff_item(path, operations.get(path, "modify"), old, new, line)
           for path, old, new, line in _hunks(text)]
    covered = {d["path"] for d in out}
    for change in changes:  # changes the patch does not show (binary files, moves without edits, no patch)
        path = change.get("path")
        if isinstance(path, str) and path not in covered:
            out.append(_diff_item(path, str(change.get("operation")), "" if change.get("operation") != "add" else None, "", None))
    return out


def _diff_item(path: str, operation: str, old: str | None, new: str, line: int | None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "diff", "path": path, "newText": new, "operation": operation}
    if operation != "add":
        item["oldText"] = old if old is not None else ""
    if line is not None:
        item["line"] = line
    return item


def _hunks(text: str) -> list[tuple[str, str | None, str, int]]:
    """(path, old side, new side, first new line) of every hunk of a git patch (paths absolute, no a/ b/)."""
    hunks: list[tuple[str, str | None, str, int]] = []
    path = ""
    new_file = False
    old: list[str] = []
    new: list[str] = []
    line = 0
    open_hunk = False

    def close() -> None:
        if open_hunk:
            hunks.append((path, None if new_file else "".join(old), "".join(new), line))

    last: list[list[str]] = []
    for raw in text.splitlines():
        if raw.startswith("diff --git "):
            close()
            open_hunk, new_file, path = False, False, raw[len("diff --git "):].split(" ")[-1]
        elif raw.startswith("new file mode"):
            new_file = True
        elif raw.startswith("--- ") and not open_hunk:
            new_file = new_file or raw[4:].strip() == "/dev/null"
        elif raw.startswith("+++ ") and not open_hunk:
            target = raw[4:].strip()
            if target != "/dev/null":
                path = target
        elif raw.startswith("@@"):
            close()
            match = _HUNK.match(raw)
            line = int(match.group(2)) if match else 0
            old, new, open_hunk = [], [], True
        elif open_hunk and raw.startswith("\\"):
            for side in last:  # "\ No newline at end of file": the line before has no newline
                if side and side[-1].endswith("\n"):
                    side[-1] = side[-1][:-1]
        elif open_hunk and raw[:1] in (" ", "-", "+", ""):
            body = raw[1:] + "\n"
            mark = raw[:1]
            last = []
            if mark in (" ", ""):
                old.append(body)
                new.append(body)
                last = [old, new]
            elif mark == "-":
                old.append(body)
                last = [old]
            else:
                new.append(body)
                last = [new]
    close()
    return hunks


def v1_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    """A v2 tool call (upsert) with its content in v1 shapes (diffs split per hunk)."""
    content = call.get("content")
    if not isinstance(content, list):
        return call
    mapped: list[Any] = []
    for item in content:
        mapped.extend(v1_diffs(item) if isinstance(item, dict) else [item])
    return {**call, "content": mapped}


def v1_permission_params(params: dict[str, Any], serial: int) -> dict[str, Any]:
    """A v2 `session/request_permission` (`title`, `description?`, `subject?`) in the v1 shape
    (`toolCall` required). A `command` subject becomes an execute call showing the command."""
    title = params.get("title") if isinstance(params.get("title"), str) else "Permission"
    subject = params.get("subject") if isinstance(params.get("subject"), dict) else {}
    if subject.get("type") == "tool_call" and isinstance(subject.get("toolCall"), dict):
        call = v1_tool_call(subject["toolCall"])
    elif subject.get("type") == "command":
        call_id = subject.get("toolCallId") if isinstance(subject.get("toolCallId"), str) else f"permission-{serial}"
        call = {"toolCallId": call_id, "title": title, "kind": "execute",
                "rawInput": {"command": subject.get("command"), "cwd": subject.get("cwd")}}
    else:
        call = {"toolCallId": f"permission-{serial}", "title": title, "kind": "other"}
    out = {**params, "toolCall": call}
    if isinstance(params.get("description"), str) and params["description"]:
        out.setdefault("description", params["description"])
    return out


# -- updates --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MessageUpsert(wire.MappedUpdate):
    """`user_message` / `agent_message` / `agent_thought`: the whole content of a message by id."""

    role: str
    message_id: str
    text: str
    session_update: str = "message_upsert"


@dataclass(frozen=True)
class ToolCallPatch(wire.MappedUpdate):
    """A v2 `tool_call_update`: create on first sight, else patch; `fields` in ToolCallEntry attribute names
    (`meta` patches by key)."""

    tool_call_id: str
    fields: dict[str, Any]
    session_update: str = "tool_call_patch"


@dataclass(frozen=True)
class ToolContentAppend(wire.MappedUpdate):
    """`tool_call_content_chunk`: one more content item for a tool call."""

    tool_call_id: str
    items: tuple[dict[str, Any], ...]
    session_update: str = "tool_call_content_chunk"


@dataclass(frozen=True)
class TerminalSnapshot(wire.MappedUpdate):
    """`terminal_update` of an agent-owned terminal: `output` replaces (None: unchanged); `exited` when
    the agent said it exited."""

    terminal_id: str
    output: str | None = None
    exited: bool = False
    exit_code: int | None = None
    signal: str | None = None
    command: str | None = None
    cancellable: bool | None = None  # `capabilities.cancel` (None: not said): the client may send `terminal/cancel`
    session_update: str = "terminal_update"


@dataclass(frozen=True)
class TerminalAppend(wire.MappedUpdate):
    """`terminal_output_chunk`: bytes appended to an agent-owned terminal (decoded)."""

    terminal_id: str
    text: str
    session_update: str = "terminal_output_chunk"


@dataclass(frozen=True)
class ActivityUpdate(wire.MappedUpdate):
    """`state_update`: the session's foreground activity (running, requires_action, idle, …)."""

    state: str
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    background: tuple[dict[str, Any], ...] = ()
    meta: dict[str, Any] | None = None  # `_meta` (`quota` on the idle that ends a turn: state/quota.py)
    session_update: str = "state_update"


TOOL_FIELDS = {"title": "title", "kind": "kind", "status": "status", "content": "content", "locations": "locations",
               "rawInput": "raw_input", "rawOutput": "raw_output", "_meta": "meta"}


def checked_tool_fields(call_id: str, call: dict[str, Any]) -> dict[str, Any]:
    """The fields of a (v1-shaped) v2 tool call as v1 checks them: the same update read by `wire.parse_update`
    (its plain-shape checks, else the ACP models: a field of the wrong type reads as absent, a content or
    location item that fails is skipped), in ToolCallEntry attribute names. What was dropped is logged
    once, on one line: the tool call is shown without it."""
    given = {key: call[key] for key in TOOL_FIELDS if key in call}
    # v2 has more statuses than v1 (`paused`, `cancelled`, and any future one, read as still in progress):
    # a string is kept as it is, where v1's check would drop it.
    status = given.pop("status", None)
    dropped: list[str] = []
    if status is not None and not isinstance(status, str):
        dropped.append(f"status ({type(status).__name__})")
    for key in ("content", "locations"):  # the one check that fails the whole update in v1: not a list
        if key in given and given[key] is not None and not isinstance(given[key], list):
            dropped.append(f"{key} ({type(given.pop(key)).__name__})")
    parsed = wire.parse_update({"sessionUpdate": "tool_call_update", "toolCallId": call_id, **given})
    if isinstance(parsed, wire.UnknownUpdate):  # (not expected once the lists are checked: keep nothing unchecked)
        dropped.append(str(parsed.problem))
        parsed = None
    fields: dict[str, Any] = {}
    for key, value in given.items():
        target = TOOL_FIELDS[key]
        if parsed is None:
            if value is None or key in ("rawInput", "rawOutput"):
                fields[target] = value
            else:
                dropped.append(f"{key} ({type(value).__name__})")
            continue
        checked = getattr(parsed, "field_meta" if key == "_meta" else target)
        if key in ("content", "locations") and checked is not None:
            checked = [item if isinstance(item, dict) else item.model_dump(by_alias=True, exclude_none=True, mode="json")
                       for item in checked]
            if isinstance(value, list) and len(checked) < len(value):
                dropped.append(f"{len(value) - len(checked)} of {len(value)} {key} items")
        elif value is not None and checked is None:
            dropped.append(f"{key} ({type(value).__name__})")
        fields[target] = checked
    if isinstance(status, str):
        fields["status"] = clean_data(status)
    if dropped:
        log.warning("v2 tool_call_update %r: malformed fields dropped: %s", call_id, ", ".join(dropped))
    return fields


@dataclass
class UpdateMapper:
    """Maps each v2 `update` to what the reducer applies (a list: usually one item). Keeps the state the
    mapping needs: a UTF-8 decoder per terminal (chunks may split a character) and the shown plan's id."""

    decoders: dict[str, Any] = field(default_factory=dict)
    plan_id: str | None = None

    def map(self, raw: Any) -> list[Any]:
        if not isinstance(raw, dict):
            return [wire.parse_update(raw)]
        kind = raw.get("sessionUpdate")
        try:
            return self._map(kind, raw)
        except Exception as error:  # one malformed update drops to generic display, never the session
            log.warning("malformed v2 %s update: %s", kind, error)
            return [wire.UnknownUpdate(str(kind), raw, f"malformed {kind}: {error}")]

    def _map(self, kind: Any, raw: dict[str, Any]) -> list[Any]:
        if kind in V1_MESSAGE_KINDS:
            content = raw.get("content")
            blocks = content if isinstance(content, list) else []
            text = "".join(_block_text(block) for block in blocks)
            return [MessageUpsert(V1_MESSAGE_KINDS[kind], str(raw["messageId"]), text)]
        if kind == "tool_call_update":
            call_id = str(raw["toolCallId"])
            fields = checked_tool_fields(call_id, v1_tool_call(raw))
            if "capabilities" in raw:  # `capabilities.cancel`: the client may send `tool_call/cancel`
                caps = raw.get("capabilities")
                fields["capabilities"] = clean_data(caps) if isinstance(caps, dict) else None
            return [ToolCallPatch(call_id, fields)]
        if kind == "tool_call_content_chunk":
            call_id = str(raw["toolCallId"])
            items = v1_tool_call({"content": [raw["content"]]})["content"]
            checked = checked_tool_fields(call_id, {"content": items})
            return [ToolContentAppend(call_id, tuple(checked.get("content") or ()))]
        if kind == "terminal_update":
            return [self._terminal(raw)]
        if kind == "terminal_output_chunk":
            return [TerminalAppend(str(raw["terminalId"]), self._decode(str(raw["terminalId"]), raw.get("data")))]
        if kind == "state_update":
            error = raw.get("error") if isinstance(raw.get("error"), dict) else None
            background = raw.get("background") if isinstance(raw.get("background"), list) else []
            usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else None
            stop = raw.get("stopReason")
            meta = raw.get("_meta") if isinstance(raw.get("_meta"), dict) else None
            return [ActivityUpdate(str(raw.get("state")), stop if isinstance(stop, str) else None, usage, error,
                                   tuple(b for b in background if isinstance(b, dict)), meta)]
        if kind in ("plan_update", "plan_removed"):
            # v1's unstable plan operations have the same shape: once the v1 path models them (several
            # plans by id), they go there; until then the plan panel's one plan shows the latest.
            parsed = wire.parse_update(raw)
            if not isinstance(parsed, wire.UnknownUpdate) or parsed.problem:
                return [parsed]
        if kind == "plan_update":
            return self._plan(raw.get("plan") if isinstance(raw.get("plan"), dict) else {})
        if kind == "plan_removed":
            if raw.get("planId") == self.plan_id:
                self.plan_id = None
                return [wire.parse_update({"sessionUpdate": "plan", "entries": []})]
            return []
        if kind == "replay_complete":
            # The end of a `session/resume` replay (v2 RFD "Replay Complete Signal"): a marker, nothing to show;
            # the answer that follows still ends the replay for rat, as before.
            return []
        if kind == "config_option_update":
            return [wire.parse_update({**raw, "configOptions": v1_config_options(raw.get("configOptions"))})]
        if kind == "available_commands_update":
            return [wire.parse_update({**raw, "availableCommands": v1_commands(raw.get("availableCommands"))})]
        if kind in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk"):
            return [wire.parse_update(raw)]
        # Same shape as v1 (usage_update, session_info_update, notice) or v1's unstable ones (compaction,
        # subagents, session messages): the v1 path decides.
        return [wire.parse_update(raw)]

    def _terminal(self, raw: dict[str, Any]) -> TerminalSnapshot:
        terminal_id = str(raw["terminalId"])
        output = None
        if isinstance(raw.get("output"), dict):
            self.decoders.pop(terminal_id, None)  # a snapshot restarts the byte stream
            output = self._decode(terminal_id, raw["output"].get("data"))
        status = raw.get("exitStatus")
        code = status.get("exitCode") if isinstance(status, dict) else None
        signal = status.get("signal") if isinstance(status, dict) else None
        command = raw.get("command") if isinstance(raw.get("command"), str) else None
        caps = raw.get("capabilities")
        cancellable = (isinstance(caps.get("cancel"), dict)) if isinstance(caps, dict) else (False if "capabilities" in raw else None)
        return TerminalSnapshot(terminal_id, output, isinstance(status, dict), code if isinstance(code, int) else None,
                                signal if isinstance(signal, str) else None, command, cancellable)

    def _decode(self, terminal_id: str, data: Any) -> str:
        decoder = self.decoders.get(terminal_id)
        if decoder is None:
            decoder = self.decoders[terminal_id] = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            raw = base64.b64decode(str(data or ""), validate=False)
        except ValueError:
            return ""
        return decoder.decode(raw)

    def _plan(self, plan: dict[str, Any]) -> list[Any]:
        kind = plan.get("type")
        plan_id = plan.get("planId") if isinstance(plan.get("planId"), str) else None
        if kind == "items":
            entries = plan.get("entries") if isinstance(plan.get("entries"), list) else []
        elif kind == "markdown":
            entries = [{"content": str(plan.get("content") or ""), "priority": "medium", "status": "pending"}]
        elif kind == "file":
            entries = [{"content": f"Plan in {plan.get('uri')}", "priority": "medium", "status": "pending"}]
        else:
            return [wire.UnknownUpdate("plan_update", {"sessionUpdate": "plan_update", "plan": plan})]
        self.plan_id = plan_id
        # v1's plan (one whole list) is what the plan panel shows; v2's open statuses read as pending.
        entries = [
            {"content": str(e.get("content") or ""), "priority": _known(e.get("priority"), ("high", "medium", "low"), "medium"),
             "status": _known(e.get("status"), ("pending", "in_progress", "completed"), "pending")}
            for e in entries if isinstance(e, dict)
        ]
        return [wire.parse_update({"sessionUpdate": "plan", "entries": entries})]


def _known(value: Any, known: tuple[str, ...], default: str) -> str:
    return value if value in known else default


def _block_text(block: Any) -> str:
    if isinstance(block, dict) and block.get("type") == "text":
        return str(block.get("text") or "")
    return ""


# -- the connection codec -------------------------------------------------------------------------


@dataclass
class _Activity:
    state: str = "idle"
    waiters: list[asyncio.Future[dict[str, Any]]] = field(default_factory=list)
    # The `running` / `requires_action` seen since the oldest waiter began (an idle then ends its turn).
    busy_seen: bool = False
    # An idle that came while a waiter waited but before any sign of its turn (kept for `inserted`).
    early_idle: dict[str, Any] | None = None


class V2Codec:
    """Installed on a Connection that negotiated v2 (see `Connection.codec`)."""

    version = PROTOCOL_V2

    def __init__(self) -> None:
        self._sessions: dict[str, _Activity] = {}
        self._permission_serial = 0
        self._closed = False
        self._started: dict[asyncio.Future[dict[str, Any]], float] = {}  # turn waiter -> when it began

    # outgoing requests and their results

    def outgoing(self, method: str, params: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
        method = RENAMED.get(method, method)
        if params is None:
            return method, params
        if method in ("session/new", "session/resume", "session/load", "session/fork") and "mcpServers" in params:
            servers = v2_mcp_servers(params["mcpServers"] or [])
            params = {**params, "mcpServers": servers} if servers else {k: v for k, v in params.items() if k != "mcpServers"}
        if method == "session/set_config_option" and "type" not in params:
            params = {**params, "type": "boolean" if isinstance(params.get("value"), bool) else "id"}
        if isinstance(params.get("configOptions"), list):  # initial values (a fork's): v2 tags every one
            params = {**params, "configOptions": [
                {**value, "type": "boolean" if isinstance(value.get("value"), bool) else "id"}
                if isinstance(value, dict) and "type" not in value else value for value in params["configOptions"]]}
        return method, params

    def result(self, method: str, result: Any) -> Any:
        if not isinstance(result, dict):
            return result
        if "configOptions" in result:
            result = {**result, "configOptions": v1_config_options(result["configOptions"])}
        if "availableCommands" in result:
            result = {**result, "availableCommands": v1_commands(result["availableCommands"])}
        return result

    # incoming

    def serve(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Params of an agent request, mapped to what the v1 handler reads."""
        if method == "session/request_permission":
            self._permission_serial += 1
            return v1_permission_params(params, self._permission_serial)
        return params

    def notification(self, method: str, params: dict[str, Any]) -> None:
        """Follow `state_update`s (foreground activity per session) for `wait_idle`."""
        if method != "session/update":
            return
        update = params.get("update")
        session_id = params.get("sessionId")
        if not isinstance(update, dict) or update.get("sessionUpdate") != "state_update" or not isinstance(session_id, str):
            return
        activity = self._sessions.setdefault(session_id, _Activity())
        state = update.get("state")
        activity.state = str(state)
        if state in ("running", "requires_action"):
            activity.busy_seen = True
            activity.early_idle = None
        elif state == "idle" and activity.waiters:
            outcome = {k: update[k] for k in ("stopReason", "usage", "error", "_meta") if k in update}
            if activity.busy_seen:
                self._resolve(activity, outcome)
            else:
                activity.early_idle = outcome

    @staticmethod
    def _resolve(activity: _Activity, outcome: dict[str, Any]) -> None:
        waiters, activity.waiters = activity.waiters, []
        activity.busy_seen = False
        activity.early_idle = None
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(outcome)

    def expect_turn(self, session_id: str) -> asyncio.Future[dict[str, Any]]:
        """A future for the `idle` that ends the next turn of `session_id` (call before sending the prompt)."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if self._closed:
            future.set_exception(ConnectionError("agent is gone"))
            return future
        activity = self._sessions.setdefault(session_id, _Activity())
        if not activity.waiters:
            activity.busy_seen = False
            activity.early_idle = None
        activity.waiters.append(future)
        self._started[future] = time.monotonic()
        future.add_done_callback(lambda done: self._started.pop(done, None))
        return future

    def waiting(self) -> list[tuple[int, str, float]]:
        """Turns waiting for their `idle`, as `Connection.pending_requests` lists a v1 prompt (id -1): the
        hang watch reports a turn in which the agent says nothing, as in v1."""
        return [(-1, "session/prompt", started) for future, started in self._started.items() if not future.done()]

    def inserted(self, session_id: str) -> None:
        """The prompt was inserted (its answer came): an idle from now on ends the turn, even without a
        `running` first (an agent may fail a prompt at once: idle with stopReason error)."""
        activity = self._sessions.get(session_id)
        if activity is None:
            return
        if activity.early_idle is not None and activity.waiters:
            # The turn ended before its answer came, with no `running` seen: it was that quick.
            self._resolve(activity, activity.early_idle)
        else:
            activity.busy_seen = True

    def drop_turn(self, session_id: str, future: asyncio.Future[Any]) -> None:
        self._started.pop(future, None)
        activity = self._sessions.get(session_id)
        if activity is not None and future in activity.waiters:
            activity.waiters.remove(future)

    def state_of(self, session_id: str) -> str | None:
        activity = self._sessions.get(session_id)
        return activity.state if activity else None

    def closed(self) -> None:
        self._closed = True
        for activity in self._sessions.values():
            for waiter in activity.waiters:
                if not waiter.done():
                    waiter.set_exception(ConnectionError("agent exited before its turn ended"))
            activity.waiters = []
