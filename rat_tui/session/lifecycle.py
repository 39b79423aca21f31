"""Provides SessionLifecycle: AgentSession's reattach, restart, hang watch and authentication (no UI).

Kept apart from the turn logic in agent_session.py. The rules, from the ACP schema:

- `session/load` only when `agentCapabilities.loadSession` is true; the agent replays the history
  as `session/update`s *before* it answers, so the session id is set before the request and the
  replay lands in the store as it streams. `session/resume` (`sessionCapabilities.resume`) does
  the same without a replay; `session/list`, `session/close`, `session/delete` and `logout` are
  each sent only when advertised.
- A restart keeps the store: the transcript on screen stays. When the new process reloads the
  session, the replayed history is *not* added a second time: transcript updates (messages,
  thoughts, tool calls, notices) are counted and dropped until the load answers, while session
  facts (commands, modes, config, plan, title, usage) are applied. Our transcript may then lack
  what the agent persisted after our last frame, which beats showing the whole history twice.
- -32000 ("Authentication required") from any request marks the session as needing a login and
  calls `on_auth_required` (the UI shows the picker). `agent` methods go through `authenticate`
  then the session is opened again; `terminal` methods are run by the UI (it owns the terminal)
  from `terminal_auth_command`, then the agent is restarted.
- A prompt answered -32000 is kept (`login_prompt`) and sent again, once, when the session is next
  ready after a login (`authenticate` succeeded, or the agent was restarted after a terminal login).
  If the login is dismissed or fails, the UI takes it back (`take_login_prompt`) into the composer,
  or the queue when the composer holds a draft: the user's words are never dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .defaults import apply_defaults
from .settings_restore import restore_settings
from ..protocol.client import AUTH_REQUIRED, ProtocolMismatch
from ..protocol.router import ConnectionClosed, RpcError
from ..state import reducer
from ..state.models import ERROR, EXITED, READY, STARTING

if TYPE_CHECKING:
    from .agent_session import AgentSession

log = logging.getLogger("rat.lifecycle")

# Updates that add to the transcript: dropped while a restarted agent replays what is already shown.
TRANSCRIPT_UPDATES = frozenset({
    "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "notice",
})
# Requests the handshake already bounds with its own timeout (a failure there is an error, not a hang).
HANDSHAKE_METHODS = frozenset({"initialize", "session/new", "session/load", "session/resume"})
NOT_REMEMBERED = "New agent session: the earlier conversation is kept above, but the agent does not remember it."


@dataclass(frozen=True)
class PendingPrompt:
    """A prompt the agent refused for want of a login, as it was given to `start_prompt`."""

    text: str
    blocks: list[dict[str, Any]] | None = None
    chips: Sequence[str] = ()


def auth_method_type(method: dict[str, Any]) -> str:
    """An auth method's type: no `type` means `agent` (schema AuthMethod)."""
    kind = method.get("type")
    return kind if isinstance(kind, str) and kind else "agent"


def terminal_method_parts(method: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """A `terminal` auth method's extra `args` and `env`; malformed parts are dropped."""
    raw_args, raw_env = method.get("args"), method.get("env")
    args = [a for a in raw_args if isinstance(a, str)] if isinstance(raw_args, list) else []
    env = {k: v for k, v in raw_env.items() if isinstance(v, str)} if isinstance(raw_env, dict) else {}
    return args, env


class SessionLifecycle:
    """Mixed into AgentSession; `_init_lifecycle` runs in its __init__."""

    def _init_lifecycle(self: AgentSession, request_timeout: float) -> None:
        # Requests unanswered this long are reported, with the offer to cancel them or restart.
        self.request_timeout = request_timeout
        # The UI's hook: the agent asked for a login (called with the agent's auth methods).
        self.on_auth_required: Callable[[list[dict[str, Any]]], None] | None = None
        self.auth_needed = False
        self.login_prompt: PendingPrompt | None = None  # refused with -32000: sent again after the login
        self._replay: str | None = None  # "show" (a fresh tab) or "skip" (a restart) while session/load runs
        self.replay_skipped = 0
        self._stalled: dict[int, str] = {}
        self._silent_reported = False
        self._turn_failed = False
        self._running = False
        self._restarting = False
        self._run_done = asyncio.Event()
        self._run_done.set()
        self.restarts = 0

    # -- opening the agent-side session: new, load or resume -------------------------------------

    def supports(self: AgentSession, feature: str) -> bool:
        """Whether the running agent advertised `feature` (see AgentHello.supports)."""
        return self.hello is not None and self.hello.supports(feature)

    async def _guarded(self: AgentSession, awaitable: Awaitable[Any]) -> Any:
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
                self._auth_required(error)
            else:
                self._fail(ERROR, f"The agent refused to start a session: {error}")
        except ConnectionClosed:
            pass  # run() reports the exit with the agent's stderr
        except ValueError as error:
            self._fail(ERROR, f"The agent sent an unusable answer: {error}")
        return None

    async def establish_session(self: AgentSession) -> bool:
        """Open the agent-side session (new, load or resume) and mark the tab ready; False on failure."""
        self.store.dispatch(reducer.set_status, STARTING, "opening a session")
        opened = await self._guarded(self._open_session())
        if opened is None:
            return False
        session_id, result = opened
        self.session_id = session_id
        self.auth_needed = False
        self.store.dispatch(reducer.set_session, session_id, result)
        early, self._early_updates = self._early_updates, []
        for params in early:
            self._apply(params)
        if session_id != self.attach_session_id:  # a fresh agent session: the profile's defaults apply
            await apply_defaults(self, self.defaults)
        elif self.restore_settings:  # a continued one: the settings its journal recorded (once)
            settings, self.restore_settings = self.restore_settings, {}
            await restore_settings(self, settings)
        self.store.dispatch(reducer.set_status, READY)
        self._resend_login_prompt()
        return True

    async def _open_session(self: AgentSession) -> tuple[str, dict[str, Any]]:
        assert self.client is not None
        target = self.attach_session_id
        populated = bool(self.state.entries)  # a restart (or a tab that already shows a transcript)
        if target and self.supports("load"):
            try:
                result = await self._load(target, populated)
            except RpcError as error:
                if error.code == AUTH_REQUIRED:
                    raise
                self._notice(f"The agent could not load session {target}: {error}", "warning")
            else:
                if populated:
                    self._notice(f"Agent restarted; session {target} reloaded "
                                 f"({self.replay_skipped} replayed updates not shown again: they are above).")
                return target, result
        elif target and self.supports("resume"):
            try:
                result = await self.client.resume_session(target, self.cwd, self.mcp_servers)
            except RpcError as error:
                if error.code == AUTH_REQUIRED:
                    raise
                self._notice(f"The agent could not resume session {target}: {error}", "warning")
            else:
                self._notice(f"{'Agent restarted; s' if populated else 'S'}ession {target} resumed "
                             "(the agent does not replay its history on resume).")
                return target, result
        elif target:
            self._notice("This agent cannot reopen a session (it advertises neither session/load nor "
                         "session/resume).", "warning")
        result = await self.client.new_session(self.cwd, self.mcp_servers)
        if target and populated:
            self._notice(NOT_REMEMBERED, "warning")
        elif target:
            self._notice(f"Started a new session instead of {target}.", "warning")
        return result["sessionId"], result

    async def _load(self: AgentSession, target: str, populated: bool) -> dict[str, Any]:
        """`session/load`, with the replay applied as it arrives (or, on a restart, skipped)."""
        assert self.client is not None
        self.session_id = target  # the replay comes before the answer and must land in this session
        self._replay = "skip" if populated else "show"
        self.replay_skipped = 0
        try:
            return await self.client.load_session(target, self.cwd, self.mcp_servers)
        except BaseException:
            self.session_id = None
            raise
        finally:
            self._replay = None

    def _accept_replayed(self: AgentSession, update: Any) -> bool:
        """During a restart's load: drop what the transcript already shows, keep session facts."""
        if self._replay != "skip":
            return True
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        if kind in TRANSCRIPT_UPDATES:
            self.replay_skipped += 1
            return False
        return True

    def _notice(self: AgentSession, text: str, severity: str = "info") -> None:
        self.store.dispatch(reducer.add_notice, text, severity)

    # -- restart ----------------------------------------------------------------------------------

    async def restart(self: AgentSession) -> None:
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
        if self.session_id:
            self.attach_session_id = self.session_id
        self.session_id = None
        self.hello = None
        self._stopping = False
        self._turn_failed = False
        self._stalled.clear()
        self._silent_reported = False
        self._early_updates = []
        self.restarts += 1
        self._notice("Restarting the agent…")
        await self.run()

    # -- hangs ------------------------------------------------------------------------------------

    async def _watch_requests(self: AgentSession) -> None:
        """Report requests the agent leaves unanswered (and turns with no traffic) past the timeout."""
        tick = max(0.05, min(1.0, self.request_timeout / 4))
        while True:
            await asyncio.sleep(tick)
            try:
                self._check_stalled(time.monotonic())
            except Exception:  # the watch is a convenience: never let it kill the session
                log.exception("request watch failed")

    def _check_stalled(self: AgentSession, now: float) -> None:
        connection = self.connection
        if connection is None:
            return
        timeout = self.request_timeout
        pending = connection.pending_requests()
        live = {request_id for request_id, _, _ in pending}
        for request_id in [r for r in self._stalled if r not in live]:
            del self._stalled[request_id]  # answered (or cancelled) after all
        for request_id, method, started in pending:
            if method == "session/prompt":
                silent = now - max(started, connection.last_inbound)
                if silent < timeout:
                    self._silent_reported = False
                elif not self._silent_reported:
                    self._silent_reported = True
                    self._notice(f"The agent has sent nothing for {timeout:g} s during this turn. "
                                 "Esc cancels the turn; Alt+R restarts the agent.", "warning")
                continue
            if method in HANDSHAKE_METHODS or request_id in self._stalled or now - started < timeout:
                continue
            self._stalled[request_id] = method
            log.warning("%s: no answer to %s (id %s) after %g s", self.command.name, method, request_id, timeout)
            self._notice(f"The agent has not answered {method} for {timeout:g} s. "
                         "Esc cancels the request; Alt+R restarts the agent.", "warning")

    @property
    def stalled_requests(self: AgentSession) -> dict[int, str]:
        """Requests reported as unanswered: id -> method."""
        return dict(self._stalled)

    async def cancel_stalled(self: AgentSession) -> int:
        """Give up on every reported request (`$/cancel_request`); returns how many were cancelled."""
        if self.connection is None:
            return 0
        count = 0
        for request_id, method in list(self._stalled.items()):
            del self._stalled[request_id]
            if await self.connection.cancel_request(request_id):
                count += 1
                self._notice(f"Cancelled the unanswered {method} request.")
        return count

    # -- authentication ---------------------------------------------------------------------------

    @property
    def auth_methods(self: AgentSession) -> list[dict[str, Any]]:
        return list(self.hello.auth_methods) if self.hello else []

    def _on_request_error(self: AgentSession, method: str, error: RpcError) -> None:
        """-32000 from any request asks for a login; the handshake and turns handle their own."""
        if error.code == AUTH_REQUIRED and method not in HANDSHAKE_METHODS | {"session/prompt", "authenticate"}:
            self._auth_required(error)

    def _auth_required(self: AgentSession, error: RpcError | None = None) -> None:
        self.auth_needed = True
        methods = self.auth_methods
        text = "The agent needs you to log in" + (f" ({error.message})" if error and error.message else "") + ". "
        if methods:
            text += "Alt+L picks a login method."
        else:
            text += "It offers no login method: log in outside rat as its documentation says, then Alt+R restarts it."
        self._notice(text, "warning")
        self.store.dispatch(reducer.set_status, ERROR, "login required")
        if self.on_auth_required is not None:
            try:
                self.on_auth_required(methods)
            except Exception:
                log.exception("auth hook failed")

    async def authenticate(self: AgentSession, method: dict[str, Any]) -> str | None:
        """`authenticate` with an `agent` method, then open the session if it was waiting on it.

        Returns None on success, else a message for the user.
        """
        if auth_method_type(method) != "agent":
            return f"The {auth_method_type(method)} method {method.get('name')!r} is not done through authenticate."
        if self.client is None or self.state.status == EXITED:
            return "The agent is not running: Alt+R restarts it."
        name = str(method.get("name") or method.get("id"))
        self._notice(f"Logging in with {name}…")
        try:
            await self.client.authenticate(str(method.get("id")))
        except RpcError as error:
            self._notice(f"Login with {name} failed: {error}", "error")
            return f"Login failed: {error}"
        except ConnectionClosed:
            return "The agent exited during the login."
        self.auth_needed = False
        self._notice(f"Logged in with {name}.")
        if self.session_id is None:
            await self.establish_session()  # which sends the refused prompt again
        elif self.state.status == ERROR:
            self.store.dispatch(reducer.set_status, READY)
            self._resend_login_prompt()
        return None

    def _resend_login_prompt(self: AgentSession) -> None:
        """The prompt refused for want of a login, sent again now that the session is ready (once)."""
        pending = self.login_prompt
        if pending is None or self.can_prompt() is not None:
            return
        self.login_prompt = None
        self._notice("Logged in; sending your prompt again.")
        self.start_prompt(pending.text, pending.blocks, pending.chips)

    def take_login_prompt(self: AgentSession) -> PendingPrompt | None:
        """The login did not happen: hand the kept prompt to the UI (which puts it back for the user)."""
        pending, self.login_prompt = self.login_prompt, None
        return pending

    def terminal_auth_command(self: AgentSession, method: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
        """The agent's own command plus the method's `args` and `env`, for the user to run interactively."""
        args, env = terminal_method_parts(method)
        return [*self.command.argv, *args], {**dict(self.command.env), **env}

    async def logout(self: AgentSession) -> str | None:
        """`logout`, when the agent advertises it; None on success, else a message for the user."""
        if not self.supports("logout"):
            return "This agent does not support logging out."
        assert self.client is not None
        try:
            await self.client.logout()
        except (RpcError, ConnectionClosed) as error:
            return f"Logout failed: {error}"
        self._notice("Logged out of the agent.")
        return None

    # -- the agent's other sessions ---------------------------------------------------------------

    async def list_agent_sessions(self: AgentSession, cwd: Any = None, cursor: str | None = None
                                  ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of `session/list`; raises RpcError / ConnectionClosed, or LookupError if unsupported."""
        if not self.supports("list") or self.client is None:
            raise LookupError("This agent does not list its sessions (no session/list capability).")
        return await self.client.list_sessions(cwd, cursor)

    async def delete_agent_session(self: AgentSession, session_id: str) -> str | None:
        """`session/delete`; None on success, else a message for the user."""
        if not self.supports("delete") or self.client is None:
            return "This agent does not delete sessions."
        try:
            await self.client.delete_session(session_id)
        except (RpcError, ConnectionClosed) as error:
            return f"Could not delete the session: {error}"
        return None
