"""Provides Login: a session's authentication — the agent's login methods, `authenticate`, `logout`, and the
prompt a missing login refused.

- -32000 ("Authentication required") from any request marks the session as needing a login and tells the UI
  (`SessionUI.login_needed`, which shows the picker). `agent` methods go through `authenticate`, then the
  session is opened if it was waiting on it; `terminal` methods are run by the UI (it owns the terminal) from
  `terminal_command`, then the agent is restarted.
- A prompt answered -32000 is kept (`prompt`) and sent again, once, when the session is next ready after a
  login. If the login is dismissed or fails, the UI takes it back (`take_prompt`) into the composer, or the
  queue when the composer holds a draft: the user's words are never dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..protocol.client import AcpClient, AgentHello
from ..protocol.router import ConnectionClosed, RpcError
from ..state import reducer
from ..state.models import ERROR, EXITED, READY
from ..state.store import SessionStore

log = logging.getLogger("rat.lifecycle")


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


class Login:
    """One per session. `reopen` opens the agent-side session (after a login that it waited on); `resend`
    starts a turn with a kept prompt and says whether it went out."""

    def __init__(self, store: SessionStore, argv: Sequence[str], env: Mapping[str, str],
                 hello: Callable[[], AgentHello | None], client: Callable[[], AcpClient | None],
                 has_session: Callable[[], bool], login_needed: Callable[[list[dict[str, Any]]], None],
                 reopen: Callable[[], Awaitable[Any]], resend: Callable[[PendingPrompt], bool]) -> None:
        self.store = store
        self.argv = argv
        self.env = env
        self.hello = hello
        self.client = client
        self.has_session = has_session
        self.login_needed = login_needed
        self.reopen = reopen
        self.resend = resend
        self.needed = False
        self.prompt: PendingPrompt | None = None  # refused with -32000: sent again after the login

    def _notice(self, text: str, severity: str = "info") -> None:
        self.store.dispatch(reducer.add_notice, text, severity)

    @property
    def methods(self) -> list[dict[str, Any]]:
        hello = self.hello()
        return list(hello.auth_methods) if hello else []

    def required(self, error: RpcError | None = None) -> None:
        """The agent answered -32000: say so, mark the session, and ask the UI for a login."""
        self.needed = True
        methods = self.methods
        text = "The agent needs you to log in" + (f" ({error.message})" if error and error.message else "") + ". "
        if methods:
            text += "Alt+L picks a login method."
        else:
            text += "It offers no login method: log in outside rat as its documentation says, then Alt+R restarts it."
        self._notice(text, "warning")
        self.store.dispatch(reducer.set_status, ERROR, "login required")
        try:
            self.login_needed(methods)
        except Exception:
            log.exception("the UI's login hook failed")

    async def authenticate(self, method: dict[str, Any]) -> str | None:
        """`authenticate` with an `agent` method, then open the session if it was waiting on it.

        Returns None on success, else a message for the user.
        """
        if auth_method_type(method) != "agent":
            return f"The {auth_method_type(method)} method {method.get('name')!r} is not done through authenticate."
        client = self.client()
        if client is None or self.store.state.status == EXITED:
            return "The agent is not running: Alt+R restarts it."
        name = str(method.get("name") or method.get("id"))
        self._notice(f"Logging in with {name}…")
        try:
            await client.authenticate(str(method.get("id")))
        except RpcError as error:
            self._notice(f"Login with {name} failed: {error}", "error")
            return f"Login failed: {error}"
        except ConnectionClosed:
            return "The agent exited during the login."
        self.needed = False
        self._notice(f"Logged in with {name}.")
        if not self.has_session():
            await self.reopen()  # which sends the refused prompt again
        elif self.store.state.status == ERROR:
            self.store.dispatch(reducer.set_status, READY)
            self.resend_pending()
        return None

    def resend_pending(self) -> None:
        """The prompt refused for want of a login, sent again now that the session is ready (once)."""
        pending = self.prompt
        if pending is None:
            return
        if self.resend(pending):
            self.prompt = None

    def take_prompt(self) -> PendingPrompt | None:
        """The login did not happen: hand the kept prompt to the UI (which puts it back for the user)."""
        pending, self.prompt = self.prompt, None
        return pending

    def terminal_command(self, method: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
        """The agent's own command plus the method's `args` and `env`, for the user to run interactively."""
        args, env = terminal_method_parts(method)
        return [*self.argv, *args], {**dict(self.env), **env}

    async def logout(self) -> str | None:
        """`logout`, when the agent advertises it; None on success, else a message for the user."""
        hello, client = self.hello(), self.client()
        if hello is None or not hello.supports("logout") or client is None:
            return "This agent does not support logging out."
        try:
            await client.logout()
        except (RpcError, ConnectionClosed) as error:
            return f"Logout failed: {error}"
        self._notice("Logged out of the agent.")
        return None
