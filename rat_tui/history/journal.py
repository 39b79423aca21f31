"""Provides HistoryJournal (SQLite in WAL mode) and SessionJournal, the traffic recorder of one session.

Durability is against a crash or `kill -9` of rat, not power loss: a message is safe once its
transaction is committed, which with `journal_mode=WAL` and `synchronous=NORMAL` means written to
the WAL file by write(2), without fsync. Messages are queued and committed on the event loop, in one
transaction per batch. Streamed updates are committed by the session's store right before it delivers
them to the widgets (`SessionStore.before_delivery`), or COMMIT_AFTER seconds after they came, whichever
is first; anything else (a request, a response, our own messages) before the agent's reader lets the loop
run anything else (`HistoryJournal.sync`, through the router), or on the next loop turn (`call_soon`).
So nothing is shown or served before it is in the OS, and a flood costs one commit per frame, not per
chunk. bench/journal.py measures this against JSONL; docs/architecture.md says why SQLite won.

Writing never stops for a bad message: text SQLite cannot bind (a lone surrogate) is stored with the
surrogate escaped in the JSON body (`\\ud800`, which reads back as the same string); a wire line that
is not UTF-8 is stored as a BLOB of its exact bytes, and `records` decodes it as the router did. Any
other failure is logged, said once through `on_problem`, and the next batch is tried as usual.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import concurrent.futures
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import priority
from ..protocol.lines import clean_text, decode_line, has_lone_surrogate
from ..protocol.wire import CHUNK_KINDS  # (the streamed chunks a journal row holds a run of)
from ..state.children import newer_update_text
from ..state.shell import RECORD_METHOD
from .records import IN, OUT, Recorded

log = logging.getLogger("rat.history")

SCHEMA_VERSION = 1
DRAFT_DELAY = 0.3
"""Seconds a composer draft waits before it is written, so typing writes once per pause, not per key."""
COMMIT_AFTER = 0.05
"""Seconds a streamed update waits at most for its commit; the store commits what it is about to show
first (`AgentSession` hooks `SessionStore.before_delivery`), so one commit serves a frame's updates."""
# Rows per INSERT statement: a commit's rows go in statements of these sizes, the largest first (fewer
# where SQLite allows fewer values a statement; 6 values a row). SQLite runs a statement with the GIL
# released, and the loop thread then waits for it back, a switch interval (5 ms) or more when another
# thread computes (the warm-up, a big diff): executemany hands it off once per row, and a 300-row commit
# took 150-270 ms while the warm-up ran. Sizes from a short list, not one statement of each commit's row
# count: Python's sqlite3 keeps up to 128 prepared statements, and one per count (up to 2,000 rows) grew
# the app by 15-100 MB (a 2,000-row statement is a large program).
INSERT_SIZES = (256, 64, 16, 4, 1)
BUSY_TIMEOUT = 0.1
"""Seconds a commit on the loop waits for another process's write lock before it tries again later."""
BUSY_RETRY = 0.5
"""Seconds before a batch that met a locked database is tried again (it stays queued meanwhile)."""
# The WAL is copied into the database (a checkpoint: the one write that waits for the disk, fsync) by a
# thread once this much was written since the last one, never by a commit on the UI thread.
CHECKPOINT_BYTES = 4 * 1024 * 1024
BACKGROUND_BYTES = 1024 * 1024
"""A batch with a line this long is committed on the journal's commit thread, not the loop's: SQLite
copies a 50 MB line for over a second (with the GIL released) while keys must still echo. Every commit
after it goes to the same thread until it is done, so the order on disk stays the order queued. Such a
line is shown while its commit runs; every other delivery still finds its lines committed first."""
EMPTY_SESSION_DAYS = 1
"""Sessions with no prompt (rat started and closed) are pruned after this many days."""
SETTING_METHODS = {"session/set_config_option", "session/set_mode", "session/set_model"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    agent TEXT NOT NULL,
    agent_title TEXT,
    argv TEXT NOT NULL,
    cwd TEXT NOT NULL,
    agent_session_id TEXT,
    title TEXT,
    first_prompt TEXT,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    messages INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0,
    draft TEXT NOT NULL DEFAULT '',
    settings TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS sessions_updated ON sessions(updated);
CREATE INDEX IF NOT EXISTS sessions_agent_session ON sessions(agent_session_id);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    t REAL NOT NULL,
    dir TEXT NOT NULL,
    method TEXT,
    body TEXT NOT NULL,
    text TEXT
);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session, id);
-- Sessions the user archived with their agent (session/archive): hidden from the history list unless asked.
-- A table of its own, so a journal written before it existed needs no migration.
CREATE TABLE IF NOT EXISTS archived (
    session INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE
);
"""


@dataclass
class SessionInfo:
    """One journaled session as the history screen lists it."""

    id: int
    agent: str
    agent_title: str | None
    argv: list[str]
    cwd: str
    agent_session_id: str | None
    title: str | None
    first_prompt: str | None
    created: float
    updated: float
    messages: int
    bytes: int
    draft: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    archived: bool = False

    @property
    def label(self) -> str:
        """Title, else the first prompt, on one line."""
        return " ".join((self.title or self.first_prompt or "").split())

    def header(self) -> dict[str, Any]:
        """The session facts written in an export's header line."""
        return {
            "agent": self.agent, "agent_title": self.agent_title, "argv": self.argv, "cwd": self.cwd,
            "agent_session_id": self.agent_session_id, "title": self.title, "created": self.created,
            "updated": self.updated, "settings": self.settings,
        }


@dataclass(frozen=True)
class HistoryQuery:
    """A search: free text (in the messages, title and first prompt) plus `agent:`, `cwd:`, `date:` filters."""

    text: str = ""
    agent: str = ""
    cwd: str = ""
    date: str = ""  # a prefix of YYYY-MM-DD (local time) of the session's start or last message

    @classmethod
    def parse(cls, query: str) -> HistoryQuery:
        words: list[str] = []
        filters = {"agent": "", "cwd": "", "date": ""}
        for word in query.split():
            key, sep, value = word.partition(":")
            if sep and key.lower() in filters and value:
                filters[key.lower()] = value
            else:
                words.append(word)
        return cls(" ".join(words), **filters)


def prompt_text(prompt: Any) -> str:
    """The text of a `session/prompt` prompt (a list of content blocks); other blocks as a short mark."""
    if not isinstance(prompt, list):
        return ""
    parts = []
    for block in prompt:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") in ("resource_link", "resource"):
            resource = block.get("resource") if isinstance(block.get("resource"), dict) else block
            parts.append(f"@{resource.get('uri', '')}")
    return "\n".join(parts)


def searchable_text(direction: str, message: Any) -> str | None:
    """What the search box finds a message by: prompt text out, message and thought chunks in."""
    if not isinstance(message, dict):
        return None
    method = message.get("method")
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    if direction == OUT and method == "session/prompt":
        return prompt_text(params.get("prompt")) or None
    if direction == OUT and method == RECORD_METHOD:  # a `!command` of the tab's own shell: found by its text
        return f"!{params.get('command', '')}"
    if direction == IN and method == "session/update":
        update = params.get("update")
        if isinstance(update, dict):
            content = update.get("content")
            if isinstance(content, dict) and content.get("type") == "text":
                return str(content.get("text", "")) or None
            if update.get("sessionUpdate") in ("tool_call", "tool_call_update") and update.get("title"):
                return str(update["title"])
            return newer_update_text(update)  # subagents, session messages, compaction, notices
    return None


class SessionJournal:
    """The traffic recorder of one session (`AgentSession(recorders=[...])`), plus its draft and settings."""

    def __init__(self, journal: HistoryJournal, session_id: int, agent_session_id: str | None = None,
                 settings: dict[str, Any] | None = None, draft: str = "", first_prompt: str | None = None) -> None:
        self.journal = journal
        self.id = session_id
        self.agent_session_id = agent_session_id
        self.settings: dict[str, Any] = dict(settings or {})
        self.draft = draft
        self.first_prompt = first_prompt
        self.dirty: dict[str, Any] = {}
        self.added = 0
        self.added_bytes = 0

    def record(self, direction: str, message: Any, size: int, *, method: str | None = None,
               latency: float | None = None, raw: bytes | None = None) -> None:
        """Queue one message for the next commit; also notes session facts it carries (id, title, settings).

        The line as it crossed the wire is stored when the router hands it over: encoding the message
        again cost more than everything else here together. A line that is not UTF-8 is stored as
        its exact bytes (a BLOB), which `HistoryJournal.records` decodes as the router did.
        """
        if raw is not None and direction == IN and method is None and type(message) is dict:
            text = self._chunk_text(message)
            if text is not None:
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError:
                    pass  # stored as its exact bytes, in a row of its own (below)
                else:
                    self.added += 1
                    self.added_bytes += size
                    self.journal.queue_chunk(self, line, text)
                    return
        if isinstance(message, dict):
            method = method or message.get("method")
            self._observe(direction, message, method)
            if raw is not None:
                try:
                    body: str | bytes = raw.decode("utf-8")
                except UnicodeDecodeError:
                    body = bytes(raw)
            else:
                body = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        else:
            body = json.dumps(str(message), ensure_ascii=False)
        self.added += 1
        self.added_bytes += size
        self.journal.queue((self.id, time.time(), direction, method, body, searchable_text(direction, message)), self,
                            urgent=direction != IN or method != "session/update")

    def _chunk_text(self, message: dict[str, Any]) -> str | None:
        """The text of a streamed message or thought chunk of this session's own (joined with the chunks
        next to it in one row, see HistoryJournal.queue_chunk), else None. Such a chunk tells `_observe`
        nothing: the session's id is known already."""
        if message.get("method") != "session/update" or "id" in message:
            return None
        params = message.get("params")
        if type(params) is not dict or params.get("sessionId") != self.agent_session_id or self.agent_session_id is None:
            return None
        update = params.get("update")
        if type(update) is not dict or update.get("sessionUpdate") not in CHUNK_KINDS:
            return None
        content = update.get("content")
        if type(content) is not dict or content.get("type") != "text" or type(content.get("text")) is not str:
            return None
        return content["text"]

    def _observe(self, direction: str, message: dict[str, Any], method: str | None) -> None:
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        result = message.get("result") if isinstance(message.get("result"), dict) else None
        if direction == IN and result is not None and "method" not in message:
            if isinstance(result.get("sessionId"), str) and method in (None, "session/new"):
                self._set_agent_session(result["sessionId"])
            info = result.get("agentInfo") or result.get("info")  # v1, v2
            if method == "initialize" and isinstance(info, dict):
                title = info.get("title") or info.get("name")
                if isinstance(title, str):
                    self.dirty["agent_title"] = title
        elif direction == OUT and "id" in message and isinstance(message.get("method"), str):
            name = message["method"]
            if name in ("session/load", "session/resume") and isinstance(params.get("sessionId"), str):
                self._set_agent_session(params["sessionId"])
            elif name == "session/prompt" and self.first_prompt is None:
                self.first_prompt = prompt_text(params.get("prompt"))[:500]
                self.dirty["first_prompt"] = self.first_prompt
            elif name in SETTING_METHODS:
                self._set_setting(name, params)
        elif direction == IN and message.get("method") == "session/update":
            if self.agent_session_id is None and isinstance(params.get("sessionId"), str):
                self._set_agent_session(params["sessionId"])
            update = params.get("update") if isinstance(params.get("update"), dict) else {}
            # A subagent's updates come under its own sessionId: its title and mode are not the session's.
            kind = update.get("sessionUpdate") if params.get("sessionId") == self.agent_session_id else None
            if kind == "session_info_update" and isinstance(update.get("title"), str):
                self.dirty["title"] = update["title"]
            elif kind == "current_mode_update" and isinstance(update.get("currentModeId"), str):
                self.settings["mode"] = update["currentModeId"]
                self.dirty["settings"] = self.settings

    def _set_agent_session(self, session_id: str) -> None:
        if session_id != self.agent_session_id:
            self.agent_session_id = session_id
            self.dirty["agent_session_id"] = session_id

    def _set_setting(self, method: str, params: dict[str, Any]) -> None:
        if method == "session/set_config_option" and isinstance(params.get("configId"), str):
            self.settings.setdefault("config", {})[params["configId"]] = params.get("value")
        elif method == "session/set_mode" and "modeId" in params:
            self.settings["mode"] = params["modeId"]
        elif method == "session/set_model" and "modelId" in params:
            self.settings["model"] = params["modelId"]
        else:
            return
        self.dirty["settings"] = self.settings

    def keep_setting(self, key: str, value: Any) -> None:
        """A fact about the session kept with its settings (a remote session's endpoint), written with the next
        commit."""
        if self.settings.get(key) != value:
            self.settings[key] = value
            self.dirty["settings"] = self.settings

    def set_draft(self, text: str) -> None:
        """The composer's text now; written after a short pause (the latest draft wins)."""
        if text == self.draft:
            return
        self.draft = text
        self.dirty["draft"] = text
        self.journal.schedule(self, DRAFT_DELAY)

    def sync(self) -> None:
        """The reader is about to give the loop a turn (see HistoryJournal.sync)."""
        self.journal.sync()

    def flush(self) -> None:
        self.journal.flush()


class HistoryJournal:
    """The history database: one SQLite file in WAL mode, shared safely by several rat processes.

    The event loop queues each message's wire line; the batch is committed in one transaction when
    the agent's reader is about to give the loop a turn (`sync`), or on the next loop turn for what
    else was recorded, so the stream pays about what a JSONL append per tick would (bench/journal.py).
    Commits use their own connection with a short busy timeout: a database another process holds
    locked keeps the batch queued and retries later, instead of freezing the loop.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The UI thread's connection waits at most UI_BUSY_SECONDS on a lock (another rat writing, a
        # stuck process): startup must not hang on it; the writer thread's may wait longer.
        self._db = self._connect(UI_BUSY_SECONDS)
        self._db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect on a new file only
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        self._writer = self._connect(BUSY_TIMEOUT)
        most = self._writer.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // 6
        self._insert_sizes = tuple(size for size in INSERT_SIZES if size <= most)  # (SQLite allows 999 at least)
        self._rows: list[tuple[Any, ...] | _Run] = []
        self._run: _Run | None = None  # the last row queued, while it is a run of chunks (queue_chunk)
        self._dirty: set[SessionJournal] = set()
        self._handle: asyncio.Handle | priority.Later | None = None
        self._due = 0.0  # when the scheduled commit runs (the loop's clock)
        self._urgent = False  # something queued must be committed before the loop's next turn
        self._rows_scheduled = False  # streamed updates queued and their commit scheduled
        self._busy_until = 0.0  # after a locked database, commits wait until then (monotonic)
        self.failures = 0
        self.written = 0  # messages committed by this process
        self.commits = 0  # transactions committed by this process
        self.closed = False
        self._reported: set[str] = set()
        self.committed_bytes = 0  # bytes committed in all
        self._asked_at = 0  # ... when a checkpoint was last asked for
        self.checkpointed_bytes = 0  # ... of which the last finished checkpoint saw committed
        self._checkpoint_due = threading.Event()
        self._checkpointer: threading.Thread | None = None
        self.checkpoints = 0  # checkpoints run, and the thread the last one ran on (tests: never the UI's)
        self.checkpointed_on: str | None = None
        # Called on the loop's thread the first time a write fails, so the user hears of it.
        self.on_problem: Callable[[str], None] | None = None
        self._committer: concurrent.futures.ThreadPoolExecutor | None = None  # made for the first big batch
        self._pending: concurrent.futures.Future[None] | None = None  # the last batch handed to it
        self._committer_ident: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # where a problem met on the committer is said
        self._closing = False
        self.committed_off_loop = 0  # batches committed on the commit thread (tests)
        self._big = False  # a line of BACKGROUND_BYTES or more is queued

    def _connect(self, timeout: float = 10.0) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=timeout)
        db.execute("PRAGMA synchronous=NORMAL")  # in WAL: a commit is a write(2) to the WAL, no fsync
        db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints (fsync) run in their own thread (_checkpoint)
        db.execute(f"PRAGMA journal_size_limit={4 * CHECKPOINT_BYTES}")  # a WAL grown in a flood is cut back
        db.execute("PRAGMA foreign_keys=ON")
        return db

    # -- writing --------------------------------------------------------------------------------

    def start_session(self, agent: str, argv: Sequence[str], cwd: str,
                      attach_session_id: str | None = None) -> SessionJournal:
        """A new journaled session; reattaching to an agent session already journaled continues its row."""
        now = time.time()
        if attach_session_id:
            self.flush(wait=True)  # the row's latest draft and settings may still be on their way
            row = self._db.execute(
                "SELECT id, settings, draft, first_prompt FROM sessions WHERE agent_session_id=? AND cwd=? "
                "ORDER BY updated DESC LIMIT 1", (attach_session_id, cwd)).fetchone()
            if row is not None:
                self._db.execute("UPDATE sessions SET updated=? WHERE id=?", (now, row[0]))
                return SessionJournal(self, row[0], attach_session_id, _loads(row[1]), row[2], row[3])
        cursor = self._db.execute(
            "INSERT INTO sessions(agent, argv, cwd, agent_session_id, created, updated) VALUES(?,?,?,?,?,?)",
            (agent, json.dumps(list(argv)), cwd, attach_session_id, now, now))
        return SessionJournal(self, int(cursor.lastrowid or 0), attach_session_id)

    def queue(self, row: tuple[Any, ...], session: SessionJournal, urgent: bool = True) -> None:
        self._run = None
        if len(row[4]) >= BACKGROUND_BYTES:
            self._big = True
        self._rows.append(row)
        self._dirty.add(session)
        if urgent:
            self._urgent = True
            self.schedule(session, 0.0)
        elif not self._rows_scheduled:
            self._rows_scheduled = True
            self.schedule(session, COMMIT_AFTER)

    def queue_chunk(self, session: SessionJournal, line: str, text: str) -> None:
        """A streamed chunk's line (see SessionJournal._chunk_text): it joins the row queued last when that
        one holds chunks of the same session (a run), else begins one. A run is one row whose body is its
        lines joined by newlines (a wire line has none) and whose text is theirs joined: a flood of 20,000
        chunks is a few hundred rows, not 20,000 (the cost of a commit is mostly per row)."""
        if len(line) >= BACKGROUND_BYTES:
            self._big = True
        run = self._run
        if run is not None and run.session is session:
            run.lines.append(line)
            run.texts.append(text)
        else:
            self._run = run = _Run(session, time.time(), [line], [text])
            self._rows.append(run)
        self._dirty.add(session)
        if not self._rows_scheduled:
            self._rows_scheduled = True
            self.schedule(session, COMMIT_AFTER)

    def schedule(self, session: SessionJournal, delay: float) -> None:
        self._dirty.add(session)
        if self.closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()  # no loop (a script, a test): write at once
            return
        due = loop.time() + delay
        if self._handle is not None:
            if self._due <= due:
                return  # a commit is already coming, soon enough
            self._handle.cancel()
        self._due = due
        # A timed commit (streamed updates) is put off while a key the user typed is on its way to the
        # screen (`priority`); what must be on disk first is committed at once.
        self._handle = priority.Later(loop, delay, self.flush) if delay > 0 else loop.call_soon(self.flush)

    def sync(self) -> None:
        """The agent's reader is about to give the loop a turn: commit now what must be on disk before
        anything else runs (a request, a response, our own messages). Streamed updates wait for the
        store's next delivery (which commits before it shows them) or COMMIT_AFTER, whichever is first:
        one commit per frame instead of one per turn of the loop (a 20,000-chunk flood made hundreds)."""
        if self._urgent:
            self.flush()

    def flush(self, wait: bool = False) -> None:
        """Commit everything queued so far in one transaction; `wait`: on disk when this returns (readers
        pass it before they read), else a big batch may still be on its way on the commit thread.

        Never raises: a failure is logged and said once; a locked database keeps the batch for later.
        """
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self.closed or (not self._rows and not self._dirty):
            self._urgent = self._rows_scheduled = False
            if wait:
                self._wait_committed()
            return
        if self._busy_until and time.monotonic() < self._busy_until:
            self._retry_later()
            return
        # Nothing else runs on this thread until the commit returned, so the queue is taken as it is.
        queued = self._rows
        rows = queued if self._big or self._committing() else [row.row() if type(row) is _Run else row for row in queued]
        updates = []
        for session in self._dirty:
            fields = dict(session.dirty)
            if "settings" in fields:
                fields["settings"] = json.dumps(fields["settings"])
            updates.append((session, session.added, session.added_bytes, fields))
        if self._big or self._committing():
            self._hand_off(rows, updates)  # its runs are joined there, too
            if wait:
                self._wait_committed()
        elif self._commit(rows, updates) == "busy":  # keep it all, in order, for the next try
            self._busy_until = time.monotonic() + BUSY_RETRY
            self._retry_later()
            return
        self._busy_until = 0.0
        self._rows = []
        self._run = None
        self._big = False
        self._urgent = self._rows_scheduled = False
        for session in self._dirty:
            session.dirty.clear()
            session.added = session.added_bytes = 0
        self._dirty = set()

    def _committing(self) -> bool:
        return self._pending is not None and not self._pending.done()

    def _hand_off(self, rows: list[Any], updates: list[tuple[Any, ...]]) -> None:
        """Commit on the commit thread; the batch is taken from the queue now, as a commit here would."""
        if self._committer is None:
            self._committer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="journal-commit")
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self._pending = self._committer.submit(self._commit_off_loop, rows, updates)

    def _commit_off_loop(self, rows: list[Any], updates: list[tuple[Any, ...]]) -> None:
        """On the commit thread: a locked database is waited for here (nothing else waits on this thread);
        when rat is closing, one last try with the long timeout."""
        self._committer_ident = threading.get_ident()
        rows = [row.row() if type(row) is _Run else row for row in rows]
        while self._commit(rows, updates) == "busy":
            if self._closing:
                self._writer.execute(f"PRAGMA busy_timeout={int(10_000)}")
                if self._commit(rows, updates) == "busy":
                    self._failed(sqlite3.OperationalError("database is locked by another process"), len(rows))
                return
            time.sleep(BUSY_RETRY)
        self.committed_off_loop += 1

    def _wait_committed(self) -> None:
        if self._pending is not None:
            self._pending.result()  # never raises: _commit_off_loop catches what a commit can raise

    def _retry_later(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: the next flush (or close) tries again
        if self._handle is None:
            delay = max(0.0, self._busy_until - time.monotonic())
            self._due = loop.time() + delay
            self._handle = loop.call_later(delay, self.flush)

    def _commit(self, rows: list[tuple[Any, ...]], updates: list[tuple[Any, ...]]) -> str:
        """One transaction; "ok", "busy" (locked by another process: try again) or "failed" (said and dropped)."""
        try:
            self._transaction(rows, updates)
            return "ok"
        except (UnicodeEncodeError, sqlite3.InterfaceError, sqlite3.ProgrammingError, OverflowError, ValueError):
            pass  # a value SQLite cannot bind: store the batch again, made bindable
        except sqlite3.OperationalError as error:
            if _is_busy(error):
                log.info("the history journal %s is locked by another process; retrying", self.path)
                return "busy"
            return self._failed(error, len(rows))
        except Exception as error:
            return self._failed(error, len(rows))
        try:
            self._transaction([_bindable_row(row) for row in rows],
                              [(s, a, b, {k: _bindable(v) for k, v in f.items()}) for s, a, b, f in updates])
            return "ok"
        except sqlite3.OperationalError as error:
            if _is_busy(error):
                return "busy"
            return self._failed(error, len(rows))
        except Exception as error:
            return self._failed(error, len(rows))

    def _transaction(self, rows: list[tuple[Any, ...]], updates: list[tuple[Any, ...]]) -> None:
        now = time.time()
        db = self._writer
        with db:
            db.execute("BEGIN IMMEDIATE")
            start = 0
            for size in self._insert_sizes:
                while len(rows) - start >= size:
                    batch = rows[start : start + size]
                    db.execute(_insert_sql(size), [value for row in batch for value in row])
                    start += size
            for session, added, added_bytes, fields in updates:
                assignments = "".join(f", {name}=?" for name in fields)
                db.execute(f"UPDATE sessions SET updated=?, messages=messages+?, bytes=bytes+?{assignments} WHERE id=?",
                           (now, added, added_bytes, *fields.values(), session.id))
        self.written += len(rows)
        self.commits += 1
        size = sum(len(row[4] or "") + len(row[5] or "") for row in rows)
        self.committed_bytes += size
        if self.committed_bytes - self._asked_at >= CHECKPOINT_BYTES:
            self._asked_at = self.committed_bytes
            self._checkpoint_soon()

    def _checkpoint_soon(self) -> None:
        if self._checkpointer is None:
            self._checkpointer = threading.Thread(target=self._checkpoint, name="journal-checkpoint", daemon=True)
            self._checkpointer.start()
        self._checkpoint_due.set()

    def _checkpoint(self) -> None:
        """The checkpointer thread: copy the WAL into the database when asked (SQLite releases the GIL)."""
        db = None
        while True:
            # Asked (CHECKPOINT_BYTES more), or every second while commits outran the last one: a
            # checkpoint that ran while commits went on left their frames, and the WAL starts again from
            # its beginning only once every frame in it is in the database.
            self._checkpoint_due.wait(1.0 if self.checkpointed_bytes < self.committed_bytes else None)
            self._checkpoint_due.clear()
            if self.closed:
                break
            seen = self.committed_bytes
            try:
                if db is None:
                    db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT)
                db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()  # never waits for a writer or reader
                self.checkpointed_bytes = seen
                self.checkpoints += 1
                self.checkpointed_on = threading.current_thread().name
            except sqlite3.Error as error:  # another process busy with it: the next one catches up
                log.info("checkpointing the history journal %s: %s", self.path, error)
        if db is not None:
            db.close()

    def _failed(self, error: BaseException, count: int) -> str:
        self.failures += 1
        log.error("could not write %d messages to the history journal %s", count, self.path,
                  exc_info=(type(error), error, error.__traceback__))
        self._report("write", f"The history journal {self.path} cannot be written ({error}); "
                              "messages are not being saved.")
        return "failed"

    def _report(self, kind: str, text: str) -> None:
        """Say a problem once per kind, not per batch; a failing listener is only logged."""
        if kind in self._reported or self.on_problem is None:
            return
        if threading.get_ident() == self._committer_ident and self._loop is not None:
            try:
                self._loop.call_soon_threadsafe(self._report, kind, text)
            except RuntimeError:  # the loop is closed: the log has it
                pass
            return
        self._reported.add(kind)
        try:
            self.on_problem(text)
        except Exception:
            log.exception("reporting a history problem failed")

    def close(self) -> None:
        if self.closed:
            return
        self._busy_until = 0.0
        self._closing = True
        self.flush(wait=True)
        if self._rows:  # still locked: one last try with the full timeout
            self._writer.execute(f"PRAGMA busy_timeout={int(10_000)}")
            self._busy_until = 0.0
            self.flush(wait=True)
        self.closed = True
        if self._committer is not None:
            self._committer.shutdown()
        if self._checkpointer is not None:
            self._checkpoint_due.set()
            self._checkpointer.join(5)
        self._writer.close()
        self._db.close()  # the last connection to close checkpoints what is left

    # -- reading --------------------------------------------------------------------------------

    def sessions(self, query: HistoryQuery | str = "", limit: int = 500, include_empty: bool = True,
                 include_archived: bool = True) -> list[SessionInfo]:
        """Sessions matching the query, the most recently used first; `include_empty=False` skips never-prompted
        ones, `include_archived=False` the archived ones."""
        if isinstance(query, str):
            query = HistoryQuery.parse(query)
        where, args = [], []
        if not include_empty:
            where.append("first_prompt IS NOT NULL")
        if not include_archived:
            where.append("id NOT IN (SELECT session FROM archived)")
        if query.agent:
            where.append("(agent LIKE ? OR agent_title LIKE ?)")
            args += [f"%{query.agent}%"] * 2
        if query.cwd:
            where.append("cwd LIKE ?")
            args.append(f"%{query.cwd}%")
        if query.date:
            where.append("(strftime('%Y-%m-%d', created, 'unixepoch', 'localtime') LIKE ? "
                         "OR strftime('%Y-%m-%d', updated, 'unixepoch', 'localtime') LIKE ?)")
            args += [f"{query.date}%"] * 2
        if query.text:
            # The session's texts joined in order, so a phrase split across streamed chunks is found too.
            where.append("(title LIKE ? OR first_prompt LIKE ? OR (SELECT group_concat(text, '') FROM "
                         "(SELECT text FROM messages m WHERE m.session = sessions.id AND m.text IS NOT NULL "
                         "ORDER BY m.id)) LIKE ?)")
            args += [f"%{query.text}%"] * 3
        sql = SELECT_INFO + (" WHERE " + " AND ".join(where) if where else "")
        rows = self._db.execute(sql + " ORDER BY updated DESC, id DESC LIMIT ?", (*args, limit)).fetchall()
        return [_info(row) for row in rows]

    def session(self, session_id: int) -> SessionInfo | None:
        row = self._db.execute(SELECT_INFO + " WHERE id=?", (session_id,)).fetchone()
        return _info(row) if row else None

    def set_archived(self, session_id: int, archived: bool) -> None:
        """Mark a session archived (its agent archived it) or not."""
        with self._db:
            if archived:
                self._db.execute("INSERT OR IGNORE INTO archived(session) VALUES(?)", (session_id,))
            else:
                self._db.execute("DELETE FROM archived WHERE session=?", (session_id,))

    def records(self, session_id: int, methods: Sequence[str] = ()) -> list[Recorded]:
        """Every message of a session (only those of `methods`, requests and their answers, when given), in
        the order it crossed the wire, decoded as the router decoded it."""
        if methods:
            rows = self._db.execute(
                f"SELECT t, dir, method, body FROM messages WHERE session=? AND method IN "
                f"({','.join('?' * len(methods))}) ORDER BY id", (session_id, *methods))
        else:
            rows = self._db.execute("SELECT t, dir, method, body FROM messages WHERE session=? ORDER BY id",
                                    (session_id,))
        out = []
        for t, direction, method, stored in rows:
            # A run of streamed chunks is one row, its lines joined by newlines (queue_chunk).
            for body in stored.split("\n") if isinstance(stored, str) and "\n" in stored else (stored,):
                try:
                    message = decode_line(body)
                except (ValueError, RecursionError):
                    log.warning("skipped a journaled message that is not JSON: %r", body[:200])
                    continue
                response_method = method if isinstance(message, dict) and "method" not in message else None
                out.append(Recorded(t, direction, message, response_method))
        return out

    def delete(self, session_id: int) -> None:
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM messages WHERE session=?", (session_id,))
            self._db.execute("DELETE FROM archived WHERE session=?", (session_id,))
            self._db.execute("DELETE FROM sessions WHERE id=?", (session_id,))

    def prune(self, retention_days: float | None = None, max_sessions: int | None = None,
              max_megabytes: float | None = None, now: float | None = None) -> int:
        """Drop the oldest sessions past the retention policy; returns how many went. Run at startup."""
        now = time.time() if now is None else now
        rows = self._db.execute(
            "SELECT id, updated, bytes, first_prompt IS NULL FROM sessions ORDER BY updated DESC, id DESC").fetchall()
        # A session never prompted is only a handshake: gone after a day, and never counted against
        # the limits, so launching rat many times cannot push real conversations out.
        doomed = [session_id for session_id, updated, _, empty in rows if empty and updated < now - EMPTY_SESSION_DAYS * 86400]
        rows = [row for row in rows if not row[3]]
        total = 0
        for index, (session_id, updated, size, _) in enumerate(rows):
            total += size
            if ((retention_days is not None and updated < now - retention_days * 86400)
                    or (max_sessions is not None and index >= max_sessions)
                    or (max_megabytes is not None and total > max_megabytes * 1024 * 1024 and index > 0)):
                doomed.append(session_id)
        if doomed:
            with self._db:
                self._db.execute("BEGIN")
                self._db.executemany("DELETE FROM messages WHERE session=?", [(i,) for i in doomed])
                self._db.executemany("DELETE FROM archived WHERE session=?", [(i,) for i in doomed])
                self._db.executemany("DELETE FROM sessions WHERE id=?", [(i,) for i in doomed])
            self._db.execute("PRAGMA incremental_vacuum")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return len(doomed)


def _loads(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


SELECT_INFO = ("SELECT id, agent, agent_title, argv, cwd, agent_session_id, title, first_prompt, created, updated, "
               "messages, bytes, draft, settings, id IN (SELECT session FROM archived) FROM sessions")


def _info(row: tuple[Any, ...]) -> SessionInfo:
    (session_id, agent, agent_title, argv, cwd, agent_session_id, title, first_prompt,
     created, updated, messages, size, draft, settings, archived) = row
    try:
        argv_list = json.loads(argv)
    except ValueError:
        argv_list = []
    return SessionInfo(session_id, agent, agent_title, argv_list if isinstance(argv_list, list) else [], cwd,
                       agent_session_id, title, first_prompt, created, updated, messages, size, draft or "",
                       _loads(settings), bool(archived))


UI_BUSY_SECONDS = 1.0


def open_journal(path: Path) -> tuple[HistoryJournal | None, str | None]:
    """Open the journal, or say why not (a locked, corrupt or unwritable file must not stop rat)."""
    try:
        return HistoryJournal(path), None
    except (sqlite3.Error, OSError) as error:
        # Expected (a corrupt, locked, read-only or foreign file, a directory): no traceback; the caller logs
        # the problem, once (RatApp.report_problem). Any other exception is a bug and keeps its traceback.
        log.debug("cannot open the history journal %s: %s: %s", path, type(error).__name__, error)
        return None, f"History is off: cannot open {path} ({error})."


def default_path() -> Path:
    """`history.sqlite3` in the platformdirs user data dir."""
    from .. import paths

    return paths.data_dir() / "history.sqlite3"


def _is_busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _bindable(value: Any) -> Any:
    """A value SQLite can store: a str holding a lone surrogate gets U+FFFD, an int too big becomes text."""
    if isinstance(value, str) and has_lone_surrogate(value):
        return clean_text(value)
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return str(value)
    return value


@dataclass(slots=True, eq=False)
class _Run:
    """Chunks of one session streamed in a row, queued as one message row (HistoryJournal.queue_chunk)."""

    session: SessionJournal
    t: float
    lines: list[str]
    texts: list[str]

    def row(self) -> tuple[Any, ...]:
        return (self.session.id, self.t, IN, "session/update", "\n".join(self.lines), "".join(self.texts) or None)


@lru_cache(maxsize=8)
def _insert_sql(count: int) -> str:
    return "INSERT INTO messages(session, t, dir, method, body, text) VALUES" + ",".join(["(?,?,?,?,?,?)"] * count)


def _bindable_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A message row SQLite can store. A JSON body's lone surrogates are escaped (`\\ud800`), which
    reads back as the very same string; other text columns get U+FFFD."""
    session, t, direction, method, body, text = row
    if isinstance(body, str) and has_lone_surrogate(body):
        body = body.encode("utf-8", "backslashreplace").decode("utf-8")
    return (session, t, _bindable(direction), _bindable(method), body, _bindable(text))
