"""Provides StatusBar: the agent's name, one state word, mode and model, the cwd, plan progress and usage."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...session.controls import current_name, speed_name
from ...state.models import SessionState
from ...session.auth_status import badge as auth_badge
from ...state.quota import quota_words
from .status_fit import Part, fit

# Theme colour for each state word.
STATE_COLOURS = {
    "starting": "warning",
    "ready": "success",
    "working": "accent",
    "cancelled": "secondary",
    "error": "error",
    "exited": "error",
    "disconnected": "warning",
}


class StatusBar(Static):
    """One line at the bottom of a session. End-to-end tests read `agent_name` and `state_word`."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    """

    agent_name: str = ""
    state_word: str = ""
    # The usage gauge as plain text, and "ok", "warning" (above 80%) or "critical" (above 95%).
    usage_text: str = ""
    context_level: str = "ok"
    # Agent requests of this tab waiting for a deliberate key (ui/tabs/request_gate.py), and that key.
    waiting: int = 0
    waiting_key: str = "Ctrl+G"
    # Requests waiting in other tabs, and those tabs' numbers: the reminder stays in sight in the tab the user
    # works in (a toast fades, a badge on another tab's label is easily missed).
    waiting_elsewhere: int = 0
    waiting_tabs: tuple[int, ...] = ()
    _state: SessionState | None = None

    def set_waiting(self, count: int, key: str = "Ctrl+G", elsewhere: int = 0, tabs: tuple[int, ...] = ()) -> None:
        if (count, key, elsewhere, tabs) != (self.waiting, self.waiting_key, self.waiting_elsewhere, self.waiting_tabs):
            self.waiting, self.waiting_key = count, key
            self.waiting_elsewhere, self.waiting_tabs = elsewhere, tabs
            if self._state is not None:
                self.show(self._state)

    def show(self, state: SessionState) -> None:
        self._state = state
        self.agent_name = state.agent_name
        self.state_word = state.status
        self.context_level = context_level(state.usage)
        self.usage_text = ""
        parts = self._parts(state)
        width = self.size.width if self.is_attached and self.size.width else None  # inside the padding
        # One line as wide as the screen whatever it says: no layout of the whole screen for a new status
        # (one at each turn's start and end).
        self.update(fit(parts, width), layout=False)

    def on_resize(self) -> None:
        if self._state is not None:
            self.show(self._state)

    def _parts(self, state: SessionState) -> list[Part]:
        """The bar's parts in the order shown, each with its priority (PRIORITIES) when space runs out."""
        variables = self.app.theme_variables if self.is_attached else {}
        style = variables.get(STATE_COLOURS.get(state.status, ""), "")
        parts = [Part(Text(state.agent_name, style="bold"), PRIORITIES["agent"], essential=True, shorten="end",
                      min_cells=6)]
        if state.host:  # a remote agent: where it runs, next to its name
            parts.append(Part(Text(f"@ {state.host}", style="dim"), PRIORITIES["host"], prefix=" ", shorten="end",
                              min_cells=6))
        word = Text("● ", style=style or "")
        word.append(state.status, style=f"bold {style}".strip())
        parts.append(Part(word, PRIORITIES["state"], prefix="  ", essential=True))
        if state.protocol_version != 1:  # the session speaks ACP v2: said once, dimly
            version = Text(f"v{state.protocol_version}", style="dim")
            if state.activity in ("running", "requires_action") and state.status not in ("working", "starting"):
                version.append(" · agent at work", style="dim")  # work the agent started itself (v2 allows it)
            parts.append(Part(version, PRIORITIES["version"], prefix=" ", shorten="end", min_cells=4))
        if state.status_detail and state.status in ("working", "error", "exited", "disconnected"):
            detail = state.status_detail.splitlines()[0][:60]
            parts.append(Part(Text(f"({detail})", style="dim"), PRIORITIES["detail"], prefix=" ", shorten="end"))
        if state.shell_running is not None:  # the user's own `!command` (state/shell.py)
            command = " ".join(state.shell_running.split())
            parts.append(Part(Text(f"$ {_short(command, 30)} · Esc stops", style=variables.get("accent", "")),
                              PRIORITIES["shell"], shorten="end", compact=Text("$ running"), min_cells=9))
        warn = variables.get("warning", "")
        if self.waiting or self.waiting_elsewhere:
            count = self.waiting or self.waiting_elsewhere
            where = "" if self.waiting else " in tab " + ", ".join(map(str, self.waiting_tabs))
            parts.append(Part(
                Text(f"⚠ {count} request{'s' if count != 1 else ''} waiting{where} · {self.waiting_key} opens",
                     style=f"bold reverse {warn}".strip()),
                PRIORITIES["waiting"], essential=True,
                compact=Text(f"⚠ {count} waiting{where} · {self.waiting_key}", style=f"bold reverse {warn}".strip())))
        elif state.pending_permissions:
            count = state.pending_permissions
            parts.append(Part(
                Text(f"⚠ {count} permission request{'s' if count != 1 else ''}", style=f"bold {warn}".strip()),
                PRIORITIES["waiting"], essential=True, compact=Text(f"⚠ {count} asking", style=f"bold {warn}".strip())))
        for category in ("mode", "model"):
            name = current_name(state, category)
            if name:
                parts.append(Part(Text(f"{category} {_short(name)}"), PRIORITIES[category], shorten="end",
                                  compact=Text(_short(name)), min_cells=6))
        speed = speed_name(state)
        if speed:  # the `speed` category (fast mode), beside the model as the other categories are shown
            parts.append(Part(Text(f"speed {_short(speed, 16)}"), PRIORITIES["speed"], shorten="end",
                              compact=Text(_short(speed, 16)), min_cells=4))
        if state.plan:
            done = sum(1 for item in state.plan if item.status == "completed")
            parts.append(Part(Text(f"plan {done}/{len(state.plan)}"), PRIORITIES["plan"]))
        if state.usage and isinstance(state.usage.get("used"), int):
            gauge = usage_gauge(state.usage, variables)
            self.usage_text = gauge.plain
            parts.append(Part(gauge, PRIORITIES["usage"], compact=usage_gauge(state.usage, variables, compact=True)))
        words, warns = auth_badge(state.auth)
        if words:  # the account (`auth/status`), or "not logged in" before a prompt fails for it
            style = f"bold {variables.get('warning', '')}".strip() if warns else "dim"
            parts.append(Part(Text(words, style=style), PRIORITIES["usage"] + (30 if warns else -2), shorten="end"))
        if state.quota:  # `_meta.quota`: the account's tokens so far, beside the context gauge
            words = quota_words(state.quota)
            if words:
                parts.append(Part(Text(words, style="dim"), PRIORITIES["usage"] - 1, shorten="end",
                                  compact=Text(words.split(" (")[0], style="dim")))
        if state.title:
            parts.append(Part(Text(state.title[:40]), PRIORITIES["title"], shorten="end"))
        parts.append(Part(Text(state.cwd, style="dim"), PRIORITIES["cwd"], shorten="start"))
        return parts


# What the status bar keeps longest when the terminal is narrow (higher: kept longer). The agent's name,
# the state word and a request waiting for the user are never dropped (status_fit.py). The directory goes
# first (shortened from the left, its last components stay), then the title (also in the tab's label);
# the plan has its panel (F2); the v2 marker says how, not what; then usage, model, mode, and the detail
# of the state word last.
PRIORITIES = {
    "agent": 100, "state": 100, "waiting": 90, "host": 80, "shell": 70,
    "detail": 60, "mode": 50, "model": 45, "speed": 44, "usage": 40, "version": 30, "plan": 20, "title": 10, "cwd": 5,
}


def _short(name: str, limit: int = 24) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


# -- usage gauge (usage_update) -----------------------------------------------------------------

GAUGE_CELLS = 5
# Context fill above which the gauge takes the theme's warning, then error colour.
CONTEXT_WARNING, CONTEXT_CRITICAL = 0.80, 0.95
LEVEL_COLOURS = {"warning": "warning", "critical": "error"}
CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def context_level(usage: dict | None) -> str:
    """How full the context window is: "ok", "warning" (above 80%) or "critical" (above 95%)."""
    if not usage or not isinstance(usage.get("used"), int) or not isinstance(usage.get("size"), int):
        return "ok"
    if usage["size"] <= 0:
        return "ok"
    fraction = usage["used"] / usage["size"]
    return "critical" if fraction > CONTEXT_CRITICAL else "warning" if fraction > CONTEXT_WARNING else "ok"


def usage_gauge(usage: dict, colours: dict[str, str], compact: bool = False) -> Text:
    """`ctx ▰▰▰▱▱ 62% 124k/200k  $0.42` from a usage_update (`colours`: the app's theme variables);
    `compact`: `ctx 62%` (or `ctx 124k`), for a narrow status bar."""
    used, size = usage["used"], usage.get("size")
    text = Text()
    if compact:
        if isinstance(size, int) and size > 0:
            level = context_level(usage)
            colour = colours.get(LEVEL_COLOURS.get(level, ""), "")
            text.append(f"ctx {int(min(used / size, 1.0) * 100)}%", style=f"bold {colour}" if colour else "")
        else:
            text.append(f"ctx {format_tokens(used)}")
        return text
    if isinstance(size, int) and size > 0:
        fraction = min(used / size, 1.0)
        filled = min(GAUGE_CELLS, round(fraction * GAUGE_CELLS))
        level = context_level(usage)
        colour = colours.get(LEVEL_COLOURS.get(level, ""), "")
        text.append("ctx ")
        text.append("▰" * filled + "▱" * (GAUGE_CELLS - filled), style=colour)
        text.append(f" {int(fraction * 100)}%", style=f"bold {colour}" if colour else "")
        text.append(f" {format_tokens(used)}/{format_tokens(size)}", style="dim")
    else:
        text.append(f"ctx {format_tokens(used)}")
    cost = format_cost(usage.get("cost"))
    if cost:
        text.append(f"  {cost}")
    return text


def format_tokens(count: int) -> str:
    """51, 1.2k, 124k, 1.2M."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}".rstrip("0").rstrip(".") + "M"


def format_cost(cost: object) -> str:
    """`$0.42`, `<$0.01`, `1.20 CHF` from a Cost {amount, currency}; "" when absent or malformed."""
    if not isinstance(cost, dict) or not isinstance(cost.get("amount"), (int, float)):
        return ""
    amount, currency = float(cost["amount"]), str(cost.get("currency") or "")
    symbol = CURRENCY_SYMBOLS.get(currency.upper())
    shown = f"{amount:,.2f}" if amount == 0 or amount >= 0.01 else None
    if symbol:
        return f"{symbol}{shown}" if shown else f"<{symbol}0.01"
    return f"{shown} {currency}".strip() if shown else f"<0.01 {currency}".strip()
