"""For the tab's own shell (`!command`): typing commands key by key, waiting for cards, finding processes."""

from __future__ import annotations

import os
from pathlib import Path

from textual.pilot import Pilot

from rat_tui.state import shell

from .app import until, view


async def run_command(pilot: Pilot, app, command: str, *, wait: bool = True) -> shell.ShellEntry:
    """Type `!command` one key at a time, Enter, and (with `wait`) wait for its card to end."""
    session = view(app).session
    before = len(shell.shell_entries(session.state))
    await pilot.press("!", *command)
    await pilot.press("enter")
    await until(pilot, lambda: len(shell.shell_entries(session.state)) > before, f"the card of !{command}")
    entry = shell.shell_entries(session.state)[-1]
    if wait:
        await until(pilot, lambda: not entry.running and not session.shell.running, f"!{command} to end")
    return entry


def output(app, entry: shell.ShellEntry) -> str:
    return shell.output_of(view(app).session.state, entry)


def processes_in(directory: Path) -> list[int]:
    """Our processes whose working directory is `directory` or below it (read from /proc)."""
    root = os.path.realpath(directory)
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{name}/cwd")
            with open(f"/proc/{name}/stat", "rb") as file:
                if file.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    continue
        except OSError:
            continue
        if cwd == root or cwd.startswith(root + "/"):
            found.append(int(name))
    return found
