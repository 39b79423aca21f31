"""Provides the UI side of a session's lifecycle: restart in the view's worker, the login picker and
the interactive run of a `terminal` login method.

A terminal login runs the agent's own command with the method's args and env in the real terminal,
with the app suspended (`App.suspend()`); it blocks the event loop meanwhile, as an editor launched
from the app would, so nothing draws over it. Without a terminal (tests, headless) it runs as a
plain subprocess with its output captured.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App, SuspendNotSupported

from ...session.login import auth_method_type
from ...state import reducer
from ..screens.auth import AuthScreen
from ..app_api import rat_app

if TYPE_CHECKING:
    from .view import SessionView

log = logging.getLogger("rat.ui.lifecycle")


def restart_agent(view: SessionView) -> None:
    """A new agent process for the view's session, served in the view's agent worker."""
    view.run_worker(view.session.restart(), group="agent", exit_on_error=False, name="agent session")


def show_auth_picker(view: SessionView, reason: str = "", agent_raised: bool = False) -> None:
    """The login methods; `agent_raised` (the agent asked for a login) goes through the request gate."""
    session = view.session
    if session.hello is None:
        session.ui.tell("The agent has not started yet: its login methods come with its first answer.", "warning",
                        about_state=True)
        return
    if isinstance(view.app.screen, AuthScreen):
        return  # already asking
    methods = session.auth_methods
    if not methods:
        view.notify("This agent offers no login methods.", severity="warning")
        give_back_prompt(view)
        return

    def chosen(method: dict[str, Any] | None) -> None:
        if method is not None:
            view.run_worker(use_auth_method(view, method), group="auth", exit_on_error=False)
        else:
            give_back_prompt(view)

    def screen() -> AuthScreen:
        return AuthScreen(session.state.agent_name, methods, list(session.command.argv), reason)

    app = rat_app(view)
    gate = app.request_gate if app is not None else None
    if agent_raised and gate is not None:
        if any(item.view is view and item.what == "login" for item in gate.pending):
            return  # already asking

        async def through_gate() -> None:
            chosen(await gate.ask(view, "login", screen))

        view.run_worker(through_gate(), group="auth-ask", exit_on_error=False)
        return
    view.app.push_screen(screen(), callback=chosen)


async def use_auth_method(view: SessionView, method: dict[str, Any]) -> None:
    session = view.session
    kind = auth_method_type(method)
    if kind == "agent":
        error = await session.authenticate(method)
        if error:
            view.notify(error, severity="error")
            give_back_prompt(view)
        return
    if kind != "terminal":
        return
    argv, env = session.terminal_auth_command(method)
    name = str(method.get("name") or method.get("id"))
    session.store.dispatch(reducer.add_notice, f"Running the login {name!r}: {' '.join(argv)}")
    code, output = await run_interactive(view.app, argv, env, session.cwd)
    if output.strip():
        session.store.dispatch(reducer.add_notice, f"The login command wrote:\n{output.strip()[-2000:]}")
    if code != 0:
        what = f"exited with code {code}" if code is not None else f"could not start: {output}"
        session.store.dispatch(reducer.add_notice, f"The login {name!r} {what}: the agent was not restarted.", "error")
        give_back_prompt(view)
        return
    session.store.dispatch(reducer.add_notice, "Login finished: restarting the agent.")
    restart_agent(view)


def give_back_prompt(view: SessionView) -> None:
    """No login happened: the prompt the agent refused goes back to the composer (or the queue), never lost."""
    pending = view.session.take_login_prompt()
    if pending is None:
        return
    where = view.flow.give_back(pending.text)
    text = ("Not logged in: your prompt is back in the composer." if where == "composer" else
            "Not logged in: your prompt is first in the queue (the composer holds a draft).")
    view.session.store.dispatch(reducer.add_notice, text, "warning")


async def run_interactive(app: App, argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int | None, str]:
    """Run a command in the user's terminal with the app suspended; (exit code, captured output)."""
    full_env = {**os.environ, **env}
    try:
        with app.suspend():
            print(f"rat: running the agent's login: {' '.join(argv)}\n", flush=True)
            completed = subprocess.run(argv, cwd=str(cwd), env=full_env)
            return completed.returncode, ""
    except SuspendNotSupported:
        pass
    except OSError as error:
        return None, str(error)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), env=full_env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
    except OSError as error:
        return None, str(error)
    output, _ = await process.communicate()
    return process.returncode, output.decode("utf-8", "replace")
