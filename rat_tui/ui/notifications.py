"""Provides Notifier: tells the user outside the app when an agent needs them or is done — a terminal
notification (OSC 9, OSC 777 or kitty's OSC 99; wrapped for tmux passthrough inside tmux; the bell as the
last resort), a desktop notification where one is reachable (`notify-send`), and the terminal title (OSC 2)
carrying the sessions' state and how many wait on the user.

Nothing is sent while the user is looking: an event of the visible tab while the terminal window has the
focus (Textual reports focus in and out, DECSET 1004) is only shown in the app itself.

The escape sequences are built by pure functions (`terminal_sequence`, `title_sequence`) and written
through the app's driver, as Textual itself writes the bell and OSC 52.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .textual_ext.driver import driver_of

if TYPE_CHECKING:
    from textual.app import App

log = logging.getLogger("rat.notify")

EVENTS = ("permission", "question", "turn_done", "agent_exited")
"""permission: a permission request; question: an agent's form, link or ask_user; turn_done: a turn ended;
agent_exited: an agent process ended by itself."""

TERMINAL_KINDS = ("osc9", "osc777", "osc99", "bell", "none")

ESC, BEL, ST = "\x1b", "\x07", "\x1b\\"
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f;]")


def clean(text: str, limit: int = 200) -> str:
    """Text safe inside an OSC string: no control characters (an agent's text could end the sequence and
    start another), no `;` (the field separator of OSC 777 and 99), one line, bounded."""
    text = _UNPRINTABLE.sub(" ", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def detect_terminal(env: Mapping[str, str]) -> str:
    """The notification escape this terminal understands, from its environment; "bell" when unknown."""
    term = env.get("TERM", "")
    program = env.get("TERM_PROGRAM", "")
    if env.get("KITTY_WINDOW_ID") or term == "xterm-kitty":
        return "osc99"
    if program in ("iTerm.app", "WezTerm", "ghostty", "vscode") or env.get("WT_SESSION") or env.get("ConEmuPID"):
        return "osc9"
    if term.startswith(("foot", "rxvt")) or env.get("VTE_VERSION") or term == "xterm-ghostty":
        return "osc777"
    return "bell"


def in_tmux(env: Mapping[str, str]) -> bool:
    return bool(env.get("TMUX"))


def tmux_wrap(sequence: str) -> str:
    """DCS passthrough: tmux hands the sequence to the outer terminal (needs `allow-passthrough on`)."""
    return f"{ESC}Ptmux;" + sequence.replace(ESC, ESC + ESC) + ST


def terminal_sequence(kind: str, title: str, body: str, tmux: bool = False) -> str:
    """The bytes that raise a notification in a terminal of `kind` (see TERMINAL_KINDS)."""
    title, body = clean(title), clean(body, 400)
    if kind == "osc9":
        sequence = f"{ESC}]9;{title}: {body}{BEL}"
    elif kind == "osc777":
        sequence = f"{ESC}]777;notify;{title};{body}{BEL}"
    elif kind == "osc99":  # kitty: title then body, tied by an id; d=0 means more parts follow
        sequence = f"{ESC}]99;i=rat:d=0;{title}{ST}{ESC}]99;i=rat:d=1:p=body;{body}{ST}"
    elif kind == "bell":
        return BEL  # tmux forwards the bell itself (and flags the window)
    else:
        return ""
    return tmux_wrap(sequence) if tmux else sequence


def title_sequence(title: str) -> str:
    """OSC 2: the terminal window's title (tmux takes it as the pane title without passthrough)."""
    return f"{ESC}]2;{clean(title, 120)}{BEL}"


def window_title(states: list[tuple[str, str]], waiting: int) -> str:
    """"rat · 2 waiting · claude: working, demo: ready" from (agent, status word) pairs."""
    parts = ["rat"]
    if waiting:
        parts.append(f"{waiting} waiting")
    if states:
        shown = ", ".join(f"{name}: {status}" for name, status in states[:4])
        parts.append(shown + (f" +{len(states) - 4}" if len(states) > 4 else ""))
    return " · ".join(parts)


@dataclass(frozen=True)
class NotifySettings:
    """What `[notifications]` says (config.NotificationsConfig), resolved."""

    events: frozenset[str] = frozenset(EVENTS)
    terminal: str = "auto"
    desktop: str = "auto"
    title: bool = True
    per_agent: Mapping[str, frozenset[str]] = None  # type: ignore[assignment]

    def wants(self, event: str, agent: str) -> bool:
        if self.per_agent and agent in self.per_agent:
            return event in self.per_agent[agent]
        return event in self.events


def desktop_command(title: str, body: str, env: Mapping[str, str], which: Callable[[str], str | None] = shutil.which
                    ) -> list[str] | None:
    """`notify-send` where a desktop session is reachable (a display, and the program on PATH)."""
    if not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")):
        return None
    program = which("notify-send")
    if program is None:
        return None
    return [program, "--app-name=rat", clean(title), clean(body, 400)]


def notify_settings(config: Any) -> NotifySettings:
    """NotifySettings from config.NotificationsConfig."""
    return NotifySettings(events=frozenset(config.events), terminal=config.terminal, desktop=config.desktop,
                          title=config.title, per_agent={name: frozenset(events) for name, events in config.agents.items()})


class Notifier:
    """One per app. `event()` is called where an agent needs the user or is done; `update_title()` when a
    session's state changes."""

    def __init__(self, app: App[Any], settings: NotifySettings, env: Mapping[str, str] | None = None,
                 write: Callable[[str], None] | None = None) -> None:
        self.app = app
        self.settings = settings
        self.env = dict(os.environ if env is None else env)
        self._write = write
        self.kind = detect_terminal(self.env) if settings.terminal == "auto" else settings.terminal
        self._last_title: str | None = None
        self.considered: list[tuple[str, bool]] = []  # every event seen and whether it was sent (newest last)

    def write(self, data: str) -> None:
        """To the real terminal, through Textual's driver (as `App.bell` and `copy_to_clipboard` do)."""
        if not data:
            return
        if self._write is not None:
            self._write(data)
            return
        driver = driver_of(self.app)
        if driver is not None:
            driver.write(data)
            driver.flush()

    def user_is_looking(self, visible: bool) -> bool:
        return visible and bool(self.app.app_focus)

    def event(self, event: str, agent: str, text: str, visible: bool) -> bool:
        """Notify about `event` of `agent` unless the user is looking at it; True when something was sent."""
        if not self.settings.wants(event, agent) or self.user_is_looking(visible):
            self.considered = [*self.considered[-19:], (event, False)]
            return False
        self.considered = [*self.considered[-19:], (event, True)]
        title = f"rat · {agent}"
        self.write(terminal_sequence(self.kind, title, text, in_tmux(self.env)))
        if self.settings.desktop != "never":
            command = desktop_command(title, text, self.env)
            if command is not None:
                try:
                    subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
                except OSError as error:
                    log.info("notify-send failed: %s", error)
        return True

    def save_title(self) -> None:
        """Push the terminal's own title (xterm's title stack), to give it back on exit."""
        if self.settings.title:
            self.write(f"{ESC}[22;0t")

    def restore_title(self) -> None:
        if self.settings.title and self._last_title is not None:
            self.write(f"{ESC}[23;0t")

    def update_title(self, states: list[tuple[str, str]], waiting: int) -> None:
        """The terminal title, written only when it changes."""
        if not self.settings.title:
            return
        title = window_title(states, waiting)
        if title != self._last_title:
            self._last_title = title
            self.write(title_sequence(title))
