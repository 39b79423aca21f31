"""The first agent, started before the app is imported, so its own startup overlaps ours.

`rat` knows which agent it runs once the arguments and config are read; importing Textual and the app
and drawing the first frame takes about half a second more. Node agents take as long again to start,
so `__main__` starts the agent first (`start`), and the first session's `AgentProcess.start` adopts
it when it asks for the same command in the same directory with the same environment (`take`).
Spawned the way AgentProcess spawns (pipes, its own process group). An agent nobody adopts (another
agent chosen, the app failing to start) is killed at exit. Stdlib only: it runs before the imports.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

_waiting: dict[tuple, subprocess.Popen] = {}


def _key(argv: Sequence[str], cwd: Path | str, env: Mapping[str, str] | None) -> tuple:
    return tuple(argv), str(Path(cwd).resolve()), tuple(sorted((env or {}).items()))


def why_not(argv: Sequence[str], cwd: Path | str) -> str | None:
    """Why this agent cannot be started here, or None (AgentProcess.start says it to the user)."""
    if not argv:
        return "No agent command given"
    if not Path(cwd).is_dir():
        return f"Working directory does not exist: {cwd}"
    if os.sep not in argv[0] and shutil.which(argv[0]) is None:
        return f"Agent command not found on PATH: {argv[0]}"
    return None


def environment(env: Mapping[str, str] | None) -> dict[str, str]:
    """The agent's environment: ours, with its profile's variables over it."""
    return {**os.environ, **(env or {})}


def start(argv: Sequence[str], cwd: Path | str, env: Mapping[str, str] | None) -> bool:
    """Spawn the agent now if it can be (else the session's own start says why it cannot)."""
    if why_not(argv, cwd) is not None:
        return False
    try:  # as AgentProcess.start spawns: pipes, its own process group
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=str(cwd), env=environment(env), start_new_session=True, bufsize=0)
    except OSError:
        return False
    if not _waiting:
        atexit.register(discard)
    _waiting[_key(argv, cwd, env)] = proc
    return True


def take(argv: Sequence[str], cwd: Path | str, env: Mapping[str, str] | None) -> subprocess.Popen | None:
    """The agent started for this command, still running, or None; any other one started is killed."""
    proc = _waiting.pop(_key(argv, cwd, env), None)
    discard()
    if proc is not None and proc.poll() is not None:  # it died already: spawn again, its error shows then
        _close(proc)
        return None
    return proc


def discard() -> None:
    """Kill the agents started and not adopted (their whole process group)."""
    while _waiting:
        _key_, proc = _waiting.popitem()
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        proc.wait()
        _close(proc)


def _close(proc: subprocess.Popen) -> None:
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
