"""Provides the tab's side of `!command`: run it from the composer, Esc interrupts it, `a` attaches a card.

The engine is the session's `ShellRuns` (session/shell_runs.py); the cards are tool-call cards of the
store (state/shell.py) drawn by the view like any other. This module only moves keys and text between the
composer, the engine and the user, and says plainly when `!` cannot run here.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ...state import shell

if TYPE_CHECKING:
    from .view import SessionView

log = logging.getLogger("rat.shell")

# Agent commands that run the agent on another machine: `!` would run on this one, not where it works.
REMOTE_LAUNCHERS = {"ssh", "mosh", "kubectl", "docker", "podman", "gcloud", "az", "toolbox", "distrobox"}


def refusal(view: SessionView) -> str | None:
    """Why `!` cannot run in this tab at all: `rat serve`'s browser, or an agent on another machine."""
    if view.app.is_web:
        return ("`!` is off in `rat serve`: whoever reaches the page would run commands on the machine serving "
                "it. Run rat in a terminal for your own shell.")
    session = view.session
    argv = list(getattr(session.command, "argv", ()) or ())
    launcher = os.path.basename(argv[0]) if argv else ""
    if launcher in REMOTE_LAUNCHERS:
        return (f"The agent runs through `{launcher}`, on another machine or container: `!` would run on this "
                "one, not where the agent works, so it is off in this tab.")
    if not Path(session.cwd).is_dir():
        return f"The session's directory {session.cwd} is not on this machine: `!` has nowhere to run."
    return None


def mount(view: SessionView) -> None:
    """Wire the composer: Tab after `!` completes paths where the shell is now."""
    runs = view.session.shell
    view.composer.shell_cwd = lambda: runs.shell_cwd  # type: ignore[attr-defined]


def is_command(text: str) -> bool:
    return text.startswith("!")


def submit(view: SessionView, text: str) -> bool:
    """Enter on `!command`: run it (True), the composer cleared; when it cannot run, why, and the text stays."""
    if not is_command(text):
        return False
    runs = view.session.shell
    if runs.refusal is None:
        runs.refusal = refusal(view)
    why = runs.run(text[1:])
    if why is not None:
        log.info("shell command not run: %s", why)
        view.notify(why, title="Shell", severity="warning", timeout=8, markup=False)
        return True
    view.composer.take(text)
    view.transcript.action_scroll_end()
    return True


def escape(view: SessionView) -> bool:
    """Esc: interrupt the running shell command (a second Esc kills it). False when none runs."""
    done = view.session.shell.interrupt()
    if done is None:
        return False
    if done == "interrupt":
        view.notify("Interrupting the shell command (Esc again kills it).", timeout=3)
    else:
        view.notify("Killing the shell command.", timeout=3)
    return True


def nearest(view: SessionView) -> shell.ShellEntry | None:
    """The shell card under the cursor, else the one nearest the bottom of the view."""
    cards = {entry.key: entry for entry in shell.shell_entries(view.session.state)}
    if not cards:
        return None
    transcript = view.transcript
    cursor = transcript.cursor_key if transcript.has_focus else None
    if cursor in cards:
        return cards[cursor]
    key = transcript.nearest_key(cards)
    return cards.get(key) if key else None


def attach(view: SessionView) -> None:
    """`a`: mention the nearest shell card (`@!N`) in the composer; it goes to the agent with the next prompt."""
    entry = nearest(view)
    if entry is None:
        view.notify("No shell command to attach (type `!command` to run one).", timeout=3)
        return
    composer = view.composer
    mention = f"@!{entry.number}"
    if mention not in composer.text.split():
        text = composer.text
        composer.move_cursor(composer.document.end)
        composer.insert(("" if not text or text.endswith((" ", "\n")) else " ") + mention + " ")
    composer.focus()
    view.notify(f"!{entry.number} ({entry.command[:40]}) goes to the agent with your next prompt.", timeout=3)
