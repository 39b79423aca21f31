"""Provides the session state: transcript entries, tool calls, plan and session facts, plus change events.

Entries are mutable on purpose: a streamed message grows by appending to its `parts` list, which is
O(1) per chunk, where a frozen snapshot would copy the whole text on every chunk. Changes are
immutable events that say exactly what grew, so views re-render only that.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "agent", "thought"]
Severity = Literal["info", "warning", "error"]

# The one state word the status bar shows (end-to-end tests rely on these exact words).
STARTING, READY, WORKING, CANCELLED, ERROR, EXITED = "starting", "ready", "working", "cancelled", "error", "exited"
DISCONNECTED = "disconnected"  # a remote agent's connection dropped (rat reconnects by itself)


@dataclass(eq=False)
class MessageEntry:
    """A user message, an agent message or a thought, grouped by messageId or by adjacency."""

    key: str
    role: Role
    message_id: str | None = None
    parts: list[str] = field(default_factory=list)
    # What a user's prompt carried besides its text, as chips ("📎 notes.txt", "🔗 big.log").
    attachments: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return "".join(self.parts)


@dataclass(eq=False)
class ToolCallEntry:
    """One tool call, upserted by `tool_call` and patched by `tool_call_update`."""

    key: str
    tool_call_id: str
    title: str = "Tool call"
    # The tool's own name (`name`, schema 1.22), shown dim beside the title.
    name: str | None = None
    kind: str | None = None
    status: str = "pending"
    content: list[dict[str, Any]] = field(default_factory=list)
    locations: list[dict[str, Any]] = field(default_factory=list)
    raw_input: Any = None
    raw_output: Any = None
    meta: dict[str, Any] | None = None
    # How rat-tui itself answered a permission request for this call without asking (a rule).
    auto_decision: str | None = None
    # A reject option was chosen for it (by the user or a rule): a `failed` status then reads "rejected".
    rejected: bool = False
    expanded: bool = False
    # v2: what the agent lets the client do with the call (`capabilities.cancel`: `tool_call/cancel`).
    capabilities: dict[str, Any] | None = None
    # The user stopped it (its terminal killed, or `tool_call/cancel`): shown as a state, never an error.
    stopped_by_user: bool = False
    since: float = field(default_factory=time.monotonic)  # when it was first seen (the board's "for how long")


@dataclass(eq=False)
class NoticeEntry:
    """A line from rat-tui itself: a cancelled turn, an agent that exited, a stop reason."""

    key: str
    text: str
    severity: Severity = "info"


@dataclass(eq=False)
class GenericEntry:
    """An update we cannot model (newer protocol, malformed): shown as its raw JSON."""

    key: str
    kind: str
    raw: dict[str, Any]
    problem: str | None = None


@dataclass(eq=False)
class CompactionEntry:
    """A context compaction (`compaction_update`), at the place it first appeared; its summary collapsed."""

    key: str
    compaction_id: str
    status: str = "in_progress"
    summary_parts: list[str] = field(default_factory=list)
    error: str | None = None
    expanded: bool = False

    @property
    def summary(self) -> str:
        return "".join(self.summary_parts)


@dataclass(eq=False)
class ChildSessionEntry:
    """A subagent's session (`subagent_update`), shown as a card where it was spawned.

    `state` is a whole SessionState fed by the child's own updates (its transcript, tool calls,
    plan), so a full-screen view shows it with the same widgets as a tab.
    """

    key: str
    child_id: str
    state: SessionState
    title: str | None = None
    description: str | None = None
    run_state: str | None = None  # running | idle | requires_action | unknown | None (not reported)
    stop_reason: str | None = None
    can_cancel: bool = False
    parent_tool_call_id: str | None = None
    last_activity: str = ""
    expanded: bool = False
    stopped_by_user: bool = False  # the user cancelled it (k, or the board)
    since: float = field(default_factory=time.monotonic)  # when run_state last changed
    # Known from before a session/load or resume and not named live by the agent since: history. Its last
    # state is what it was then; nothing is sent naming it (Claude 0.109 answers -32602 for a replayed child).
    replayed: bool = False

    @property
    def name(self) -> str:
        return self.title or self.description or f"subagent {self.child_id[:8]}"

    @property
    def running(self) -> bool:
        return not self.replayed and self.run_state in ("running", "requires_action")

    @property
    def waiting(self) -> bool:
        """It says it needs the user (a replayed child cannot: its process is gone), or a question is open."""
        return (self.run_state == "requires_action" and not self.replayed) or bool(self.state.pending_permissions)


Entry = MessageEntry | ToolCallEntry | NoticeEntry | GenericEntry | CompactionEntry | ChildSessionEntry


@dataclass(eq=False)
class TerminalState:
    """Output of a terminal shown in tool-call cards: one we run, or display-only via `_meta`."""

    terminal_id: str
    output: str = ""
    exit_code: int | None = None
    signal: str | None = None
    exited: bool = False
    # An escape sequence cut off at the end of the last chunk, put before the next one (sanitize.py).
    pending: str = ""
    stopped_by_user: bool = False  # the user killed it (the board, or S on its card): not a failure
    cancellable: bool = False  # v2: an agent-owned terminal advertising `capabilities.cancel` (`terminal/cancel`)
    since: float = field(default_factory=time.monotonic, compare=False)


# A terminal card keeps this much of the live output (the agent reads the full output itself).
TERMINAL_DISPLAY_LIMIT = 256 * 1024


@dataclass(frozen=True)
class PlanItem:
    content: str
    priority: str
    status: str


@dataclass(frozen=True)
class PlanDocument:
    """One plan of `plan_update`, keyed by planId: a checklist, a Markdown document or a file's URI."""

    plan_id: str
    kind: str  # items | markdown | file
    items: tuple[PlanItem, ...] = ()
    markdown: str = ""
    uri: str | None = None


@dataclass
class SessionState:
    """Everything one session shows; changed only by the reducer."""

    agent_name: str = "agent"
    status: str = STARTING
    status_detail: str = ""
    status_since: float = field(default_factory=time.monotonic, compare=False)  # when `status` last changed
    # The user stopped the running turn from the board (`cancelled` then reads "stopped by you").
    stopped_by_user: bool = False
    session_id: str | None = None
    cwd: str = ""
    host: str = ""  # where a remote agent runs (`host:port`); "" for a local agent
    entries: list[Entry] = field(default_factory=list)
    by_key: dict[str, Entry] = field(default_factory=dict)
    tool_calls: dict[str, ToolCallEntry] = field(default_factory=dict)
    messages: dict[tuple[str, str], MessageEntry] = field(default_factory=dict)
    plan: tuple[PlanItem, ...] = ()
    commands: tuple[dict[str, Any], ...] = ()
    modes: dict[str, Any] | None = None
    current_mode_id: str | None = None
    config_options: tuple[dict[str, Any], ...] = ()
    # The unstable `models` field of session/new ({availableModels, currentModelId}), kept raw.
    models: dict[str, Any] | None = None
    title: str | None = None
    updated_at: str | None = None
    usage: dict[str, Any] | None = None
    # `_meta.quota` of the last turn's answer (state/quota.py): the account's tokens so far, per model.
    quota: dict[str, Any] | None = None
    # `session/status` (session/session_status.py): open | saved | unknown (None: not asked), and v2's snapshot.
    agent_status: str | None = None
    agent_activity: str | None = None
    # `auth/status` and its updates (session/auth_status.py): {"state", "account"}; None: not reported.
    auth: dict[str, Any] | None = None
    # `prompt_suggestions_update`: the prompts the agent predicts next, most likely first (ghost text).
    suggestions: tuple[str, ...] = ()
    stop_reason: str | None = None
    terminals: dict[str, TerminalState] = field(default_factory=dict)
    pending_permissions: int = 0
    turns: int = 0
    next_key: int = 0
    # The entry that adjacent chunks without a messageId extend; cleared at turn boundaries.
    open_message: MessageEntry | None = None
    # The ACP version the agent speaks (1, or 2 once `initialize` answered 2): picks the wire mapping.
    protocol_version: int = 1
    # v2: the session's foreground activity from `state_update` ("running", "requires_action", "idle", …;
    # None before any) and its background work snapshot.
    activity: str | None = None
    background: tuple[dict[str, Any], ...] = ()
    # v2: the user's prompt shown at once, until the agent's echo of it (same text, the prompt's
    # messageId) claims it, so the prompt shows once.
    pending_echo: MessageEntry | None = None
    echo_ids: set[str] = field(default_factory=set)
    # The prompt's text not yet echoed by an agent that sends it back without a messageId (Qwen Code's daemon
    # tells every client of a session what was asked, the one that asked too): those chunks are not shown again.
    echo_left: str = ""
    # Images the agent sent (message chunks and tool call content), in arrival order (state/media.py ImageRef).
    images: list[Any] = field(default_factory=list)
    # Plans of `plan_update`, by planId, in the order first seen (the legacy `plan` stays in `plan`).
    plans: dict[str, PlanDocument] = field(default_factory=dict)
    compactions: dict[str, CompactionEntry] = field(default_factory=dict)
    # The compactions in progress now: the board asks this (a set), never walks every compaction of the session.
    compacting: set[str] = field(default_factory=set)
    # Subagent sessions this session owns, by their sessionId (state/children.py).
    children: dict[str, ChildSessionEntry] = field(default_factory=dict)
    # For a child's state: the state that owns it and its card there; for the top session's state: every
    # child at any depth by its sessionId (children.find is one lookup, not a walk of the tree).
    parent: SessionState | None = field(default=None, compare=False, repr=False)
    owner: ChildSessionEntry | None = field(default=None, compare=False, repr=False)
    descendants: dict[str, ChildSessionEntry] = field(default_factory=dict, compare=False, repr=False)
    # session_message ids -> (transcript, role, key) they were filed under, for their later chunks.
    message_routes: dict[str, Any] = field(default_factory=dict)
    # What the last non-empty message chunk was: "id" (had a messageId), "discrete" (a background
    # task's message) or "plain"; a chunk without a messageId extends the open block only after "plain".
    last_chunk_kind: str = "plain"
    # The `!command` running in the tab's own shell, or None (state/shell.py): the status bar and tab label show it.
    shell_running: str | None = None


# -- change events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EntryAdded:
    entry: Entry


@dataclass(frozen=True)
class TextAppended:
    key: str
    text: str


@dataclass(frozen=True)
class EntryChanged:
    key: str


@dataclass(frozen=True)
class FieldChanged:
    """A session-level field changed: plan, commands, mode, config, info, usage, status, agent."""

    name: str


@dataclass(frozen=True)
class ChildChanged:
    """A child session's own state changed: `changes` are its change events (for a full-screen view)."""

    key: str
    child_id: str
    changes: tuple[Any, ...]


@dataclass(frozen=True)
class ReaderIdle:
    """Last in a delivery: the agent's output was drained (the end of a burst), so what paces its drawing
    during a flood (the transcript) draws now; nothing of the state changed."""


Change = EntryAdded | TextAppended | EntryChanged | FieldChanged | ChildChanged | ReaderIdle
