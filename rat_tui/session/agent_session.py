"""Provides AgentSession: one agent process driving one SessionStore (no UI; the UI only calls it)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from . import auth_status
from . import mcp_servers as mcp
from ..client_tools.hosting import ClientTools
from ..client_tools.tools import ToolHost
from .defaults import apply_defaults
from .elicitation_broker import ElicitationBroker
from .hang_watch import HANDSHAKE_METHODS, HangWatch
from .reader_activity import ReaderActivity
from .login import Login, PendingPrompt
from .opening import Opener
from .permission_broker import PermissionBroker
from .prompting import Prompting
from .shell_runs import ShellRuns
from .settings_restore import restore_settings
from .ui import HeadlessUI, SessionUI
from .. import priority
from ..agents.quirks import quirks_for
from ..protocol import wire
from ..protocol.client import AUTH_REQUIRED, AcpClient, AgentHello, ProtocolMismatch
from ..protocol.fs import FileAccess, FileWrite
from ..protocol.router import Connection, ConnectionClosed, RpcError
from ..protocol.rpc_log import RpcLog
from ..protocol.traffic import TrafficLog
from ..protocol.terminals import TerminalManager
from ..protocol.remote_link import RemoteError
from ..protocol.transport import AgentProcess, AgentSpawnError
from .edge import for_this_session
from .setup import SessionSetup
from ..state import children, quota, reducer
from ..state.models import CANCELLED, DISCONNECTED, ERROR, EXITED, READY, STARTING, WORKING
from ..state.permission_policy import PermissionPolicy
from ..state.store import SessionStore

if TYPE_CHECKING:
    from .change_tracker import ChangeTracker
    from .remote_side import RemoteSide

log = logging.getLogger("rat.session")

# Seconds between closing the agent's stdin, SIGTERM and SIGKILL when the session stops.
STOP_GRACE = 0.25
RELEASE_SLICE = 0.004  # seconds of held updates applied per turn of the loop (_release)

STOP_REASON_NOTICES = {
    "max_tokens": ("The agent stopped: it reached its token limit.", "warning"),
    "max_turn_requests": ("The agent stopped: it reached its limit of model requests for one turn.", "warning"),
    "refusal": ("The agent refused to continue this turn.", "warning"),
}


class AgentCommand(Protocol):
    name: str
    argv: Sequence[str]
    env: Mapping[str, str]


class AgentSession:
    """Owns the agent process of one tab: start, handshake, prompt turns, cancel, restart, shutdown.

    Every outcome, good or bad, ends up in the store as a status word and, where the user must
    know, a notice in the transcript; nothing here raises into the UI. The screen is reached only
    through `ui` (SessionUI). Its collaborators: `opener` (new / load / resume and a load's replay),
    `hang_watch` (unanswered requests), `login`, `prompts` (the queue rules), `permissions` and
    `elicitations` (the agent's questions), `files` and `terminals` (what the agent may touch).
    """

    def __init__(
        self,
        command: AgentCommand,
        cwd: Path,
        store: SessionStore | None = None,
        rpc_log: RpcLog | None = None,
        handshake_timeout: float = 60.0,
        policy: PermissionPolicy | None = None,
        ui: SessionUI | None = None,
        ask_outside_files: bool = False,
        attach_session_id: str | None = None,
        recorders: Sequence[Any] = (),
        mcp_config: Sequence[Any] = (),
        request_timeout: float = 120.0,
        client_tools: Any = None,
        restore_settings: Mapping[str, Any] | None = None,
        setup: SessionSetup | None = None,
        agent_nice: int = 0,
    ) -> None:
        self.command = command
        self.agent_nice = agent_nice  # the agent's CPU priority below ours (config `agent_nice`, transport)
        self.ui: SessionUI = ui if ui is not None else HeadlessUI()
        # An agent-side session to reattach to (session/load or session/resume) instead of session/new.
        self.attach_session_id = attach_session_id
        # Extra traffic recorders (`record(direction, message, size, method=, latency=)`), e.g. history.
        self.recorders = list(recorders)
        # MCP servers from the config (mcp_servers.configured); `mcp_servers` is what goes on the wire,
        # filtered by the agent's capabilities once `initialize` has told them (sent in session/new,
        # load and resume); `mcp_report` says why.
        self.mcp_config = list(mcp_config)
        self.mcp_servers: list[dict[str, Any]] = []
        self.mcp_report: list[mcp.McpServerRow] = []
        # Per-agent session defaults (`[agents.NAME.defaults]`), applied after session/new.
        self.defaults: dict[str, Any] = dict(getattr(command, "defaults", None) or {})
        # Settings a continued session had (its history journal's), set again once it is reattached.
        self.restore_settings: dict[str, Any] = dict(restore_settings or {})
        self.cwd = Path(os.path.abspath(cwd))
        self.store = store or SessionStore()
        self.store.before_delivery = self._commit_recorders
        self.rpc_log = rpc_log
        # Always on (a few µs a message, bench/traffic.py) so the inspector (F8) shows the start too.
        self.traffic = TrafficLog()
        self.handshake_timeout = handshake_timeout
        self.process: AgentProcess | Any = None  # a RemoteProcess for a remote agent (remote_side.py)
        self.connection: Connection | None = None
        self.client: AcpClient | None = None
        self.session_id: str | None = None
        self.hello: AgentHello | None = None
        self._early_updates: list[dict[str, Any]] = []
        self._held: list[dict[str, Any]] | None = None  # updates waiting for the ACP models (_receive)
        self._releasing: asyncio.Task[None] | None = None
        # Set by an app: updates that need the ACP models are held while they import in a thread, which
        # starts once this is done (its first frame drawn). Unset (headless), they import on the loop.
        self.models_gate: Callable[[], Awaitable[Any]] | None = None
        self._stopping = False
        self._turn_failed = False
        self._running = False
        self._restarting = False
        self._run_done = asyncio.Event()
        self._run_done.set()
        self.restarts = 0
        self._turn: asyncio.Task[None] | None = None
        # Told the stop reason each time a turn ends (the queue sends its next prompt from here).
        self.turn_listeners: list[Callable[[str | None], None]] = []
        self._cancel_requested = False
        self.opener = Opener(self.store, self.cwd, lambda: self.client, self.supports, lambda: self.mcp_servers)
        self.hang_watch = HangWatch(lambda: self.connection, request_timeout, self._notice, lambda: self.command.name)
        self.reader_activity = ReaderActivity(lambda: self.connection, self.store)  # (what the UI reads of its timing)
        self.login = Login(self.store, command.argv, command.env, lambda: self.hello, lambda: self.client,
                           lambda: self.session_id is not None, self.ui.login_needed, self.establish_session,
                           self._resend)
        self.prompts = Prompting(self, self.ui)
        self.store.state.cwd = str(self.cwd)
        self.store.dispatch(reducer.set_agent, command.name)
        # Where the agent runs when it is not a local process (None: local): its connection, host and cwd.
        self.remote: RemoteSide | None = None
        if getattr(command, "remote", None) is not None:
            from .remote_side import RemoteSide  # only a remote session loads the network transport

            self.remote = RemoteSide(self, command.remote)
        self.file_listeners: list[Callable[[FileWrite], None]] = []
        self._changes: ChangeTracker | None = None
        self._raw_content: dict[str, list[dict[str, Any]]] = {}
        self.file_listeners.append(self._track_write)
        # System prompt and additional directories (session/setup.py); the directories widen file access.
        self.setup = setup or SessionSetup()
        for problem in self.setup.problems:
            self.store.dispatch(reducer.add_notice, problem, "warning")
        self.files = FileAccess(
            [self.cwd, *self.setup.directories],
            missing_file_empty=bool(getattr(command, "missing_file_empty", False)),
            ask_outside=self.ui.ask_outside if ask_outside_files else None,
            on_write=self._on_file_write,
        )
        self.terminals = TerminalManager(
            self.cwd,
            on_output=lambda tid, text: self.store.dispatch(reducer.terminal_output, tid, text),
            on_exit=lambda tid, code, sig: self.store.dispatch(reducer.terminal_exit, tid, code, sig),
        )
        # The user's own shell for `!command` (never the agent's: no request of its reaches it).
        self.shell = ShellRuns(self.store, self.cwd, lambda: self.recorders)
        self.permissions = PermissionBroker(self.store, lambda: self.state.agent_name, policy)
        self.permissions.before_apply = self._models_for
        self.permissions.ask = self.ui.ask_permission
        self.elicitations = ElicitationBroker(self.store, lambda: self.state.agent_name)
        self.elicitations.ask = self.ui.ask_elicitation
        # Notifications other than session/update, by method.
        self.notification_handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "elicitation/complete": self.elicitations.complete,
            **{method: lambda params: auth_status.on_update(self, params) for method in auth_status.UPDATE_METHODS},
        }
        # rat-tui's own MCP server (client_tools.settings.ClientToolsSettings; None: not offered).
        self.client_tools: ClientTools | None = None
        if client_tools is not None:
            host = ToolHost(client_tools, self.store.apply_update, self.permissions.handle,
                            lambda: self.store.state, self.cwd, self.permissions.by_rule)
            host.ui = self.ui.tools
            self.client_tools = ClientTools(host, lambda: self.connection)
            self.notification_handlers["mcp/message"] = self.client_tools.on_message_notification

    @property
    def state(self):
        return self.store.state

    @property
    def remote_host(self) -> str | None:
        """`host:port` of a remote agent; None when the agent is a local process."""
        return self.remote.host if self.remote is not None else None

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    # -- lifecycle ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Start the agent and serve it until it exits; returns when the process is gone."""
        self._running = True
        self._run_done.clear()
        try:
            while await self._run() and not self._stopping:  # a remote agent's new connection: start over on it
                self._reset_for_reattach()
        finally:
            self._running = False
            self._run_done.set()

    async def _run(self) -> bool:
        """One agent process (or connection) from start to end; True when a remote agent's connection came
        back as a new one and the session must start over on it."""
        self.store.dispatch(reducer.set_status, STARTING)
        try:
            if self.remote is not None:
                self.process = self.remote.new_process()
            else:
                self.process = AgentProcess(self.command.argv, self.cwd, self.command.env, nice=self.agent_nice)
            await self.process.start()
        except (AgentSpawnError, RemoteError) as error:
            self._fail(ERROR, str(error))
            return False
        if self.remote is not None:
            self.remote.started(self.process)
        local_files = self.remote is None or self.remote.local_files
        handlers = {
            **(self.files.handlers() if local_files else {}),  # a remote agent's files are on its machine
            **(self.terminals.handlers() if local_files else {}),
            "session/request_permission": self.permissions.handle,
            "elicitation/create": self.elicitations.handle,
            **(self.client_tools.handlers() if self.client_tools else {}),
        }
        # fs, terminals, permissions: for this session, or one of its subagents (state/children.py)
        handlers = for_this_session(handlers, lambda: self.session_id,
                                    also=lambda named: children.find(self.state, named) is not None)
        self.connection = Connection(self.process, self._on_notification, handlers, rpc_log=self.rpc_log, traffic=self.traffic)
        self.connection.on_problem = self._connection_problem
        self.connection.recorders.extend(self.recorders)
        self.connection.on_error = self._on_request_error
        self.connection.on_idle = self.store.reader_idle
        self.client = AcpClient(self.connection, int(getattr(self.command, "protocol", 1) or 1), local_files)
        reader = asyncio.create_task(self.connection.run(), name="agent-reader")
        handshake = asyncio.create_task(self._handshake(), name="agent-handshake")
        watchdog = asyncio.create_task(self.hang_watch.run(), name="agent-watchdog")
        try:
            await reader
        except asyncio.CancelledError:
            await self.stop()
            raise
        finally:
            watchdog.cancel()
            if not handshake.done():
                handshake.cancel()
        if self._stopping:
            return False
        if self.remote is not None:
            if self.remote.renewed(self.process):
                return True
            self.remote.ended(self.process)
            return False
        try:
            code = await asyncio.wait_for(self.process.wait(), 3.0)
        except asyncio.TimeoutError:  # stdout closed but the process lingers
            code = await self.process.close()
        self._on_exit(code)
        if self.client_tools is not None:
            await self.client_tools.close()
        return False

    async def _handshake(self) -> None:
        assert self.client is not None
        hello = await self._guarded(self.client.initialize())
        if hello is None:
            return
        self.hello = hello
        self.store.dispatch(reducer.set_protocol, hello.protocol_version)  # v2: the store maps its updates
        if self.client is not None and self.client.protocol > hello.protocol_version:
            self._notice(f"ACP v{self.client.protocol} was asked for; this agent speaks v{hello.protocol_version}.")
        if hello.display_name:
            self.store.dispatch(reducer.set_agent, hello.display_name)
        self._adopt_quirks(hello)
        self._plan_mcp_servers()
        self.client.session_extras, notes = self.setup.params(hello.capabilities)
        for note in notes:
            self.store.dispatch(reducer.add_notice, note, "info")
        await self._plan_client_tools()  # joins mcp_servers: before session/new, load or resume
        await auth_status.check(self)  # the account badge, and "not logged in" before a prompt fails
        # session/new, or session/load / session/resume of attach_session_id (opening.py).
        await self.establish_session()

    def _adopt_quirks(self, hello: AgentHello) -> None:
        """Turn on the quirks of the agent recognised by its `agentInfo`, however it was launched."""
        quirks = quirks_for(hello.name, hello.version, hello.title)
        if quirks.missing_file_empty and not self.files.missing_file_empty:
            self.files.missing_file_empty = True
            log.info("%s %s recognised: a read of a missing file answers empty content", hello.name, hello.version)

    def supports(self, feature: str) -> bool:
        """Whether the running agent advertised `feature` (see AgentHello.supports)."""
        return self.hello is not None and self.hello.supports(feature)

    async def _guarded(self, awaitable: Awaitable[Any]) -> Any:
        """Await one handshake step within the handshake timeout; any failure becomes a notice and None."""
        try:
            return await asyncio.wait_for(awaitable, self.handshake_timeout)
        except asyncio.TimeoutError:
            self._fail(ERROR, f"The agent did not answer within {self.handshake_timeout:g} s while starting. "
                              "Alt+R restarts it.")
        except ProtocolMismatch as error:
            self._fail(ERROR, str(error))
        except RpcError as error:
            if error.code == AUTH_REQUIRED:
                self.login.required(error)
            else:
                self._fail(ERROR, f"The agent refused to start a session: {error}")
        except ConnectionClosed:
            pass  # run() reports the exit with the agent's stderr
        except ValueError as error:
            self._fail(ERROR, f"The agent sent an unusable answer: {error}")
        return None

    async def establish_session(self) -> bool:
        """Open the agent-side session (new, load or resume) and mark the tab ready; False on failure."""
        self.store.dispatch(reducer.set_status, STARTING, "opening a session")
        opened = await self._guarded(self.opener.open(self.attach_session_id))
        if opened is None:
            return False
        session_id, result = opened
        self.session_id = session_id
        self.login.needed = False
        self.store.dispatch(reducer.set_session, session_id, result)
        early, self._early_updates = self._early_updates, []
        for params in early:
            self._receive(params)
        if session_id != self.attach_session_id:  # a fresh agent session: the profile's defaults apply
            await apply_defaults(self, self.defaults)
        elif self.restore_settings:  # a continued one: the settings its journal recorded (once)
            settings, self.restore_settings = self.restore_settings, {}
            await restore_settings(self, settings)
        self.store.dispatch(reducer.set_status, READY)
        # Shown at once, not a frame later: at launch the handshake ends while the first frame is being
        # laid out, and delivered now the first frame says `ready` (a frame later it took one more layout).
        self.store.flush()
        self.login.resend_pending()
        self.prompts.status_changed()  # prompts queued while the agent was starting go out now
        return True

    def _plan_mcp_servers(self) -> None:
        """The configured MCP servers this agent can take; the others are skipped with a notice."""
        capabilities = self.hello.capabilities if self.hello else {}
        self.mcp_servers, self.mcp_report = mcp.plan(self.mcp_config, capabilities, self.cwd)
        for warning in mcp.warnings(self.mcp_report):
            log.warning("%s", warning)
            self.store.dispatch(reducer.add_notice, warning, "warning")

    async def _plan_client_tools(self) -> None:
        """rat-tui's own MCP server, after the configured ones: native or bridged (client_tools.hosting)."""
        if self.client_tools is None:
            return
        entry, row = await self.client_tools.plan(self.hello.capabilities if self.hello else {}, self.remote is None)
        self.mcp_report.append(row)
        if entry is not None:
            self.mcp_servers.append(entry)
        elif row.warn:
            self.store.dispatch(reducer.add_notice, f"rat-tui's own tools are not offered: {row.why}.", "warning")

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method != "session/update":
            handler = self.notification_handlers.get(method)
            if handler is None:
                log.debug("ignored notification %s", method)
            else:
                handler(params if isinstance(params, dict) else {})
            return
        if self.session_id is None and self.opener.loading is None:
            # Some agents send updates (commands, modes) before answering session/new.
            self._early_updates.append(params)
            return
        self._receive(params)

    def _receive(self, params: dict[str, Any]) -> None:
        """Apply an update, or hold it (and every one after it, in order) while the ACP models import.

        The models cost about 0.3 s to import, with the GIL held (half a second before protocol/acp_models.py);
        imported on the loop, the first update that needs them (an agent's commands, sent with the session)
        froze the screen that long.
        They import in a thread instead, and the updates held meanwhile are applied in order after.
        """
        if self._held is None:
            if self.models_gate is None or not wire.needs_models(params.get("update")):
                self._apply(params)  # (no UI to keep live: a headless session imports them here)
                return
            self._held = []
            self._releasing = asyncio.get_running_loop().create_task(self._release(self.models_gate))
        self._held.append(params)

    async def _release(self, gate: Callable[[], Awaitable[Any]]) -> None:
        try:
            await gate()  # the app's first frame comes first (RatApp.make_session)
            await asyncio.get_running_loop().run_in_executor(None, wire.schema_off_loop)
        except Exception:
            log.exception("importing the ACP models failed")  # parse_update says what it can per update
        while self._held:
            held, self._held = self._held, []
            started = time.monotonic()
            for params in held:
                self._apply(params)
                if time.monotonic() - started > RELEASE_SLICE:
                    # Typing stays live while a long queue drains (a `session/load` replay held for the models):
                    # a key on its way to the screen goes first, as for the agent's reader (protocol/priority).
                    await priority.give_turn()
                    started = time.monotonic()
        self._held = None

    async def _models_for(self, update: dict[str, Any]) -> None:
        """An update a request carries (a permission's tool call) is applied as a streamed one would be:
        after the updates held for the ACP models, and with the models imported off the loop when it needs
        them (the first permission a second after launch imported them on the loop: half a second frozen)."""
        await self.updates_applied()
        if self.models_gate is not None and wire.needs_models(update):
            await self.models_gate()
            await asyncio.get_running_loop().run_in_executor(None, wire.schema_off_loop)

    async def updates_applied(self) -> None:
        """Wait until no update is held for the models' import (a turn's end comes after its updates)."""
        task = self._releasing
        if task is not None and not task.done():
            await asyncio.shield(task)

    def _apply(self, params: dict[str, Any]) -> None:
        update = params.get("update")
        if not isinstance(params.get("sessionId"), str):
            # No session named (absent, null, a number): not ours to show, whatever is loading or not.
            log.warning("update without a sessionId ignored: %r", params.get("sessionId"))
            return
        if params.get("sessionId") not in (self.session_id, self.opener.loading):
            # A subagent's own updates go to its child state (state/children.py); others are not ours.
            if children.find(self.state, params.get("sessionId")) is None:
                log.warning("update for another session %r ignored", params.get("sessionId"))
            elif not self.opener.replaying() or self.opener.accept_replayed(update):
                self.store.apply_notification(params)
            return
        if self.opener.replaying():  # session/load's replay: history, not changes made now
            if self.opener.accept_replayed(update):
                self.store.apply_update(update)
            return
        self.store.apply_streamed(update)
        self._track_tool_call(update)

    def _commit_recorders(self) -> None:
        """The store is about to show updates: the recorders that batch (the history journal) write them first."""
        for recorder in self.recorders:
            flush = getattr(recorder, "flush", None)
            if flush is not None:
                flush()

    def _connection_problem(self, kind: str, text: str) -> None:
        """A message dropped, a line too big, an agent that stopped reading: a notice (stuck: in the status too)."""
        self.store.dispatch(reducer.add_notice, text, "warning")
        if kind == "stalled":
            self.store.dispatch(reducer.set_status, self.state.status, "stuck: not reading its input · Alt+R restarts")

    def _on_file_write(self, write: FileWrite) -> None:
        for listener in list(self.file_listeners):
            try:
                listener(write)
            except Exception:
                log.exception("file write listener failed")

    def _on_exit(self, code: int | None) -> None:
        if self._stopping:
            return
        tail = self.process.stderr.tail() if self.process else ""
        text = f"The agent exited with code {code}." if code is not None else "The agent closed its output."
        if code is not None and code < 0 and -code in signal.Signals._value2member_map_:
            text = f"The agent was killed by {signal.Signals(-code).name} (exit code {code})."
        if self._turn_failed or self.busy:
            text += " The running turn failed."
        if tail:
            text += f"\n\nLast lines it wrote to stderr:\n{tail}"
        text += "\n\nAlt+R restarts it (the transcript and your draft stay)."
        severity = "info" if code == 0 and self.state.status == READY else "error"
        self.store.dispatch(reducer.add_notice, text, severity)
        self.store.dispatch(reducer.set_status, EXITED, f"code {code} · Alt+R restarts")

    def _fail(self, status: str, message: str) -> None:
        tail = self.process.stderr.tail() if self.process else ""
        log.error("%s: %s", self.command.name, message)
        text = message + (f"\n\nLast lines the agent wrote to stderr:\n{tail}" if tail else "")
        self.store.dispatch(reducer.add_notice, text, "error")
        self.store.dispatch(reducer.set_status, status, message)

    async def close(self) -> None:
        """The user closed the tab: `session/close` when the agent supports it, then stop it."""
        closable = self.supports("close")
        if closable and self.client is not None and self.session_id and self.state.status not in (EXITED,):
            try:
                await asyncio.wait_for(self.client.close_session(self.session_id), 2.0)
            except (asyncio.TimeoutError, RpcError, ConnectionClosed) as error:
                log.info("session/close failed: %s", error)
        await self.stop()

    async def stop(self) -> None:
        """Shut the agent down: close stdin, then SIGTERM, then SIGKILL its group, STOP_GRACE apart (quit
        must take a second at most, even with an agent that stopped reading or ignores SIGTERM)."""
        log.info("stopping the agent %s", self.command.name)
        self._stopping = True
        if self.connection is not None:
            self.connection.close()
        if self._turn and not self._turn.done():
            self._turn.cancel()
        self.permissions.cancel_all()
        self.elicitations.cancel_all()
        await self.terminals.close_all()
        await self.shell.close()
        if self.client_tools is not None:
            await self.client_tools.close()
        if self.process is not None:
            await self.process.close(STOP_GRACE)

    def _notice(self, text: str, severity: str = "info") -> None:
        self.store.dispatch(reducer.add_notice, text, severity)

    # -- restart ----------------------------------------------------------------------------------

    async def restart(self) -> None:
        """A new agent process in this session and store, then reattach (load/resume) or start anew.

        Stops the old process first if it still runs (a hung agent). Like `run()`, returns when the
        new process is gone: the UI runs it in the session's worker.
        """
        if self._restarting:
            return  # a restart is already stopping the old process
        self._restarting = True
        try:
            if self.busy:
                self.store.dispatch(reducer.fail_turn)
                self._notice("The running turn was abandoned: the agent is being restarted.", "warning")
            if self._running:
                await self.stop()
                await self._run_done.wait()
            await self.terminals.close_all()
        finally:
            self._restarting = False
        self._reset_for_reattach()
        self._stopping = False
        self._notice("Restarting the agent…" if self.remote is None else f"Reconnecting to {self.remote.host}…")
        await self.run()

    def _reset_for_reattach(self) -> None:
        """Before a new process (or connection) serves this session: it reattaches the agent-side session."""
        if self.session_id:
            self.attach_session_id = self.session_id
        self.session_id = None
        self.hello = None
        self._turn_failed = False
        self.hang_watch.reset()
        self._early_updates = []
        self.restarts += 1

    # -- hangs, logins, the agent's other sessions --------------------------------------------------

    @property
    def request_timeout(self) -> float:
        return self.hang_watch.request_timeout

    @property
    def stalled_requests(self) -> dict[int, str]:
        """Requests reported as unanswered: id -> method."""
        return self.hang_watch.stalled

    async def cancel_stalled(self) -> int:
        """Give up on every reported request (`$/cancel_request`); returns how many were cancelled."""
        return await self.hang_watch.cancel_stalled()

    def _on_request_error(self, method: str, error: RpcError) -> None:
        """-32000 from any request asks for a login; the handshake and turns handle their own."""
        if error.code == AUTH_REQUIRED and method not in HANDSHAKE_METHODS | {"session/prompt", "authenticate"}:
            self.login.required(error)

    def _resend(self, pending: PendingPrompt) -> bool:
        """Send again the prompt a missing login refused, if a turn can start now."""
        if self.can_prompt() is not None:
            return False
        self._notice("Logged in; sending your prompt again.")
        self.start_prompt(pending.text, pending.blocks, pending.chips)
        return True

    @property
    def auth_needed(self) -> bool:
        return self.login.needed

    @property
    def login_prompt(self) -> PendingPrompt | None:
        """The prompt a missing login refused, sent again once the login succeeds."""
        return self.login.prompt

    @property
    def replay_skipped(self) -> int:
        """Updates of the last restart's `session/load` replay not shown again (they were on screen)."""
        return self.opener.replay_skipped

    @property
    def auth_methods(self) -> list[dict[str, Any]]:
        return self.login.methods

    async def authenticate(self, method: dict[str, Any]) -> str | None:
        """`authenticate` with an `agent` method (Login.authenticate); None on success, else why not."""
        return await self.login.authenticate(method)

    def take_login_prompt(self) -> PendingPrompt | None:
        return self.login.take_prompt()

    def terminal_auth_command(self, method: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
        return self.login.terminal_command(method)

    async def logout(self) -> str | None:
        return await self.login.logout()

    async def list_agent_sessions(self, cwd: Any = None, cursor: str | None = None, archived: bool = False
                                  ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of `session/list` (with the archived ones too when `archived` and the agent archives);
        raises RpcError / ConnectionClosed, or LookupError if unsupported."""
        if not self.supports("list") or self.client is None:
            raise LookupError("This agent does not list its sessions (no session/list capability).")
        include = "include" if archived and self.supports("archive") else None
        return await self.client.list_sessions(cwd, cursor, include)

    async def delete_agent_session(self, session_id: str) -> str | None:
        """`session/delete`; None on success, else a message for the user."""
        if not self.supports("delete") or self.client is None:
            return "This agent does not delete sessions."
        try:
            await self.client.delete_session(session_id)
        except (RpcError, ConnectionClosed) as error:
            return f"Could not delete the session: {error}"
        return None

    async def archive_agent_session(self, session_id: str, archived: bool = True) -> str | None:
        """`session/archive` / `session/unarchive` (unstable, ACP 1.34); None on success, else a message."""
        verb = "archive" if archived else "unarchive"
        if not self.supports("archive") or self.client is None:
            return f"This agent does not {verb} sessions (it does not advertise session/archive)."
        try:
            await self.client.archive_session(session_id, archived)
        except (RpcError, ConnectionClosed) as error:
            return f"Could not {verb} the session: {error}"
        return None

    # -- turns ----------------------------------------------------------------------------------

    def can_prompt(self) -> str | None:
        """None when a prompt can be sent now, else why not (shown to the user)."""
        if self.busy:
            return "A turn is running: wait for it or press Esc to cancel it."
        if self.state.status == EXITED:
            return "The agent has exited: Alt+R restarts it."
        if self.state.status == DISCONNECTED:
            return (f"The agent at {self.remote_host} is not connected ({self.state.status_detail}). "
                    "Your prompt stays here.")
        if self.login.needed:
            return "The agent needs a login first: Alt+L picks a method."
        if self.state.status == ERROR and self.session_id is None:
            # A failed start: say what failed and what to do next, not only that nothing is there.
            why = self.state.status_detail.rstrip(".") or "it failed"
            return (f"The agent did not start ({why}). Alt+R tries again; Ctrl+N starts another agent (the demo "
                    "among them) and Ctrl+P → Agents lists the installed ones. Your prompt stays here.")
        if self.session_id is None or self.state.status == STARTING:
            return "The agent is not ready yet." if self.state.status == STARTING else "There is no session."
        return None

    def start_prompt(
        self, text: str, blocks: list[dict[str, Any]] | None = None, chips: Sequence[str] = ()
    ) -> asyncio.Task[None] | None:
        """Start a turn in the background; returns None (and leaves a notice) if it cannot start.

        `blocks` is the whole prompt when given (text plus attachments, see attachments.py); `chips`
        name the attachments under the user's message.
        """
        why = self.can_prompt()
        if why is not None:
            self.store.dispatch(reducer.add_notice, why, "warning")
            return None
        self._cancel_requested = False
        self._turn = asyncio.create_task(self._tracked_turn(text, blocks, tuple(chips)), name="prompt-turn")
        self._turn.add_done_callback(self._turn_ended)
        return self._turn

    def _turn_ended(self, task: asyncio.Task[None]) -> None:
        if self._stopping:
            return
        reason = None if task.cancelled() or task.exception() is not None else self.state.stop_reason
        for listener in list(self.turn_listeners):
            try:
                listener(reason)
            except Exception:
                log.exception("turn listener failed")

    async def _run_turn(self, text: str, blocks: list[dict[str, Any]] | None = None, chips: tuple[str, ...] = ()) -> None:
        assert self.client is not None and self.session_id is not None
        if chips:
            self.store.dispatch(reducer.add_user_message, text, chips)
        else:
            self.store.dispatch(reducer.add_user_message, text)
        self.store.dispatch(reducer.set_status, WORKING)
        try:
            result = await self.client.prompt(self.session_id, blocks or [{"type": "text", "text": text}])
        except RpcError as error:
            await self.updates_applied()  # an error answer too comes after the turn's held updates
            if self._cancel_requested:  # some agents answer a cancelled prompt with an error
                log.info("cancelled prompt answered with an error: %s", error)
                self.store.dispatch(reducer.end_turn, "cancelled")
                self.store.dispatch(reducer.add_notice, "Turn cancelled.", "info")
                self.store.dispatch(reducer.set_status, CANCELLED)
                return
            self.store.dispatch(reducer.end_turn, "error")
            if error.code == AUTH_REQUIRED:
                self.login.prompt = PendingPrompt(text, blocks, chips)  # sent again after the login
                self.login.required(error)
                return
            # A remote server that refused the prompt answers for the agent (RemoteProcess): the agent never saw it.
            refused = isinstance(error.data, dict) and "refusedBy" in error.data
            said = "The server refused this turn" if refused else "The agent failed this turn"
            self.store.dispatch(reducer.add_notice, f"{said}: {error}", "error")
            self.store.dispatch(reducer.set_status, ERROR, str(error))
            return
        except ConnectionClosed:
            self._turn_failed = True
            await self.updates_applied()  # what the agent sent before it died, then the turn fails
            self.store.dispatch(reducer.fail_turn)
            if self.remote is not None and not self._stopping and self.process.returncode is not None:
                self._notice("The turn was cut by the network: what the agent sent before is kept above.", "warning")
            return  # run() reports the exit
        await self.updates_applied()
        stop_reason = str(result.get("stopReason", "end_turn"))
        if isinstance(result.get("_meta"), dict):  # `_meta.quota` (Claude 0.101, Codex 2.6): the quota meter
            self.store.dispatch(quota.set_quota, result["_meta"])
        self.store.dispatch(reducer.end_turn, stop_reason)
        if stop_reason == "cancelled":
            self.store.dispatch(reducer.add_notice, "Turn cancelled.", "info")
            self.store.dispatch(reducer.set_status, CANCELLED)
            return
        if stop_reason in STOP_REASON_NOTICES:
            notice, severity = STOP_REASON_NOTICES[stop_reason]
            self.store.dispatch(reducer.add_notice, notice, severity)
        elif stop_reason != "end_turn":
            self.store.dispatch(reducer.add_notice, f"The agent stopped ({stop_reason}).", "info")
        self.store.dispatch(reducer.set_status, READY)

    async def cancel(self) -> bool:
        """Ask the agent to stop the running turn; the turn ends when it answers `cancelled`."""
        if not self.busy or self.client is None or self.session_id is None:
            return False
        self._cancel_requested = True
        self.store.dispatch(reducer.set_status, WORKING, "cancelling")
        self.permissions.cancel_all()  # pending permission requests are answered `cancelled`
        self.elicitations.cancel_all()  # and pending elicitations `cancel`
        if self.client_tools is not None:
            self.client_tools.host.cancel_all()  # and rat-tui's own questions "dismissed"
        await self.client.cancel(self.session_id)
        return True

    # -- change tracker: what the agent changed per turn, for review and revert (F3) --------------

    @property
    def changes(self) -> ChangeTracker:
        """Created on first use; it writes nothing to disk until a file actually changes."""
        if self._changes is None:
            from .change_tracker import ChangeTracker  # at the first turn, not at launch

            remote = self.remote if self.remote is not None and not self.remote.local_files else None
            # A remote agent's files are on its machine: its reported diffs, under its own directory.
            self._changes = ChangeTracker.create(str(self.opener.cwd), remote=remote.host) if remote else \
                ChangeTracker.create(str(self.cwd))
        return self._changes

    async def _tracked_turn(self, text: str, blocks: list[dict[str, Any]] | None = None, chips: tuple[str, ...] = ()) -> None:
        """`_run_turn` between a tracked turn and the "files changed" notice (also after errors)."""
        turn = self.changes.begin_turn(self.state.turns + 1, text)  # _run_turn counts it in state.turns
        try:
            await self._run_turn(text, blocks, chips)
        finally:
            if turn.files:
                count = len(turn.files)
                self.store.dispatch(reducer.add_notice,
                                    f"{count} file{'' if count == 1 else 's'} changed in this turn · F3 to review", "info")
            self.store.deliver_soon()  # the turn is over: its end on screen now, not at the frame's pace

    def _track_write(self, write: FileWrite) -> None:
        self.changes.record(str(write.path), write.old_text, write.new_text, "write")

    def _track_tool_call(self, update: Any) -> None:
        """Agents that edit files themselves report only diffs in tool calls: track those too."""
        if not isinstance(update, dict) or update.get("sessionUpdate") not in ("tool_call", "tool_call_update"):
            return
        call = self.state.tool_calls.get(str(update.get("toolCallId")))
        if call is None or not any(item.get("type") == "diff" for item in call.content):
            return
        # The store holds the text sanitised for the screen; a revert must write the agent's own bytes.
        if isinstance(update.get("content"), list):
            self._raw_content[call.tool_call_id] = [i for i in update["content"] if isinstance(i, dict)]
        try:
            self.changes.observe_tool_call(call.tool_call_id, call.status,
                                           self._raw_content.get(call.tool_call_id, call.content))
        except Exception:  # the review is a convenience: never let it break the session
            log.exception("could not track tool call %s", call.tool_call_id)
