"""Provides render_tool_call: a tool call as a Rich card for the transcript (collapsed or expanded)."""

from __future__ import annotations

import re

import json
import logging
from typing import Any, Callable

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from ...state import diff_cache
from ...state.media import annotation_badge, media_placeholder
from ...state.models import TerminalState, ToolCallEntry
from ...state.shell import ShellEntry
from ...protocol.sanitize import clean, clean_ansi

log = logging.getLogger("rat.ui")

KIND_ICONS = {
    "read": "📖",
    "edit": "✏️ ",
    "delete": "🗑 ",
    "move": "📦",
    "search": "🔎",
    "execute": "▶ ",
    "think": "💭",
    "fetch": "🌐",
    "switch_mode": "🔀",
    "other": "⚙ ",
}
STATUS_MARKS = {
    "pending": ("○", "tool-pending"),
    "in_progress": ("◐", "tool-running"),
    "running": ("◐", "tool-running"),  # a `!command` in the user's own shell (state/shell.py)
    "queued": ("○", "tool-pending"),  # a `!command` typed while another runs
    "completed": ("●", "tool-completed"),
    "failed": ("✗", "tool-failed"),
    "cancelled": ("⊘", "tool-pending"),
    "paused": ("⏸", "tool-pending"),  # v2: started, waiting for something to resume it
}
COLLAPSED_LINES = 8
EXPANDED_LINES = 400
INDENT = "   "


class LazyCard:
    """A card built when it is first drawn: the transcript draws only what is near the viewport, so
    20,000 tool calls scrolled past (or replaced by their next update before a frame) cost nothing."""

    def __init__(self, build: Callable[[], RenderableType]) -> None:
        self._build = build
        self._card: RenderableType | None = None

    @property
    def built(self) -> bool:
        return self._card is not None

    def __rich_console__(self, console, options):
        if self._card is None:
            self._card = self._build()
        yield self._card


class Hanging:
    """`lead` then `text`, the lines `text` wraps to indented under its start (a long command as a title)."""

    def __init__(self, lead: Text, text: Text) -> None:
        self.lead, self.text = lead, text

    def __rich_console__(self, console, options):
        indent = self.lead.cell_len
        for index, line in enumerate(self.text.wrap(console, max(options.max_width - indent, 1))):
            row = self.lead.copy() if index == 0 else Text(" " * indent)
            row.append_text(line)
            yield row


def absolute_title(call: ToolCallEntry) -> str | None:
    """The absolute location a relative-path title names (`home/u/p/notes.txt` for `/home/u/p/notes.txt`)."""
    title = call.title or ""
    if not title or title.startswith("/") or " " in title or "/" not in title:
        return None
    for location in call.locations:
        path = str(location.get("path") or "")
        if path.startswith("/") and (path == "/" + title or path.endswith("/" + title)):
            return path
    return None


def render_tool_call(
    call: ToolCallEntry, terminals: dict[str, TerminalState], colours: dict[str, str] | None = None,
    on_diff_ready: Callable[[], None] | None = None,
) -> RenderableType:
    """The card (`_render_tool_call`); a call it cannot draw shows as one line saying so, never stops the app
    (the last line of defence: the reducer stores only fields of the right types)."""
    try:
        return _render_tool_call(call, terminals, colours, on_diff_ready)
    except Exception as error:
        log.warning("tool call %r could not be drawn: %s: %s", call.tool_call_id, type(error).__name__, error)
        return Text(f"⚠ tool call {clean(str(call.tool_call_id))} could not be drawn ({type(error).__name__})",
                    style="dim italic")


def _render_tool_call(
    call: ToolCallEntry, terminals: dict[str, TerminalState], colours: dict[str, str] | None = None,
    on_diff_ready: Callable[[], None] | None = None,
) -> RenderableType:
    """The card: header, locations, content (text, diffs, terminals), raw input/output when expanded.

    `colours` maps theme variable names (tool-completed, diff-added, …) to colours. A big diff is
    computed in a worker thread (state/diff_cache.py, shared with the diff viewer): the card shows a
    placeholder until then, and `on_diff_ready` is called (from that thread) once it can be drawn.
    """
    colours = colours or {}
    rejected = call.rejected and call.status == "failed"
    mark, variable = ("✗", "tool-pending") if rejected else STATUS_MARKS.get(call.status, ("?", "tool-pending"))
    colour = colours.get(variable, "")
    lead = Text()
    lead.append(f"{mark} ", style=colour)
    lead.append(f"{KIND_ICONS.get(call.kind or 'other', '⚙ ')} ")
    header = Text()
    header.append(call.title or "Tool call", style="bold")
    absolute = absolute_title(call)
    if absolute:  # opencode titles a call with its path relative to /: the real location beside it
        header.append(f" → {absolute}", style="dim")
    if call.name and call.name != call.title:  # the tool's own name (schema 1.22)
        header.append(f"  {call.name}", style="dim")
    if call.stopped_by_user:  # the user's decision: a state, drawn as quietly as `cancelled`
        shown = [terminals.get(item.get("terminalId")) for item in call.content if item.get("terminalId")]
        stopping = call.status not in ("completed", "failed", "cancelled") and not (shown and all(t is not None and t.exited for t in shown))
        header.append("  ⏹ stopping…" if stopping else "  ⏹ stopped by you", style=colours.get("tool-pending", "") + " dim")
    else:
        header.append(f"  {'rejected' if rejected else call.status.replace('_', ' ')}", style=f"{colour} dim".strip())
    if call.auto_decision:
        header.append(f"  ✓ {call.auto_decision}", style=colours.get("tool-completed", ""))
    parts: list[RenderableType] = [Hanging(lead, header)]
    for location in call.locations:
        line = location.get("line")
        if absolute and not line and location.get("path") == absolute:
            continue  # already beside the title
        parts.append(_indented(Text(f"↳ {location.get('path', '?')}" + (f":{line}" if line else ""), style="dim")))
    limit = EXPANDED_LINES if call.expanded else COLLAPSED_LINES
    # A command's output ends with what matters (the error, the summary): its last lines are shown.
    tail = call.kind == "execute"
    hidden = earlier = 0
    for item in call.content:
        body, cut = _content(item, terminals, colours, limit, on_diff_ready, tail)
        if cut < 0:
            earlier -= cut
        else:
            hidden += cut
        if body is not None:
            parts.append(body)
    if call.expanded:
        for label, value in (("input", call.raw_input), ("output", call.raw_output)):
            if value not in (None, {}, ""):
                parts.append(Text(f"{INDENT}{label}:", style="bold dim"))
                parts.append(_clip(_json(value), EXPANDED_LINES, "dim")[0])
    hint = []
    if hidden:
        hint.append(f"{hidden} more lines")
    if not call.expanded and (hidden or earlier or call.raw_input not in (None, {}, "") or call.raw_output is not None):
        hint.append("x expands")
    if any(item.get("type") == "diff" for item in call.content):
        hint.append("d opens the diff")
    if isinstance(call, ShellEntry) and not call.running:  # the user's `!command`: the agent sees it only so
        hint.append("a attaches it to your prompt")
    if hint:
        parts.append(_indented(Text("… " + " · ".join(hint), style="dim italic")))
    return Group(*parts)


_FENCE_OPEN = re.compile(r"(`{3,}|~{3,})[\w.+-]*[ \t]*")


def unfenced(text: str) -> str:
    """The text inside, when all of `text` is one fenced code block (Claude sends a command's output as
    ```` ```console ```` ... ```` ``` ````): a card shows output, not Markdown's markers. Anything else as it is."""
    if not text.startswith(("```", "~~~")):
        return text
    lines = text.rstrip("\n").split("\n")
    opening = _FENCE_OPEN.fullmatch(lines[0])
    if opening is None or len(lines) < 2:
        return text
    marker = opening.group(1)
    if lines[-1].strip() != marker or any(line.startswith(marker) for line in lines[1:-1]):
        return text
    return "\n".join(lines[1:-1])


def _indented(renderable: RenderableType) -> Padding:
    """Indented as a block: a line too long for the card wraps under its own indent, not at column 0."""
    return Padding(renderable, (0, 0, 0, len(INDENT)))


def _content(item: dict[str, Any], terminals: dict[str, TerminalState], colours: dict[str, str], limit: int,
             on_diff_ready: Callable[[], None] | None = None, tail: bool = False):
    """One content item as (renderable, lines cut): lines cut at the end, or as a negative count, lines
    cut at the start (`tail`: a command's output, shown from its end)."""
    kind = item.get("type")
    if kind == "content":
        block = item.get("content") or {}
        badge = annotation_badge(block.get("annotations"))
        if badge:
            body, cut = _content({"type": "content", "content": {k: v for k, v in block.items() if k != "annotations"}},
                                 terminals, colours, limit, tail=tail)
            return Group(_indented(Text(f"‹{badge}›", style="dim italic")), body), cut
        if block.get("type") in ("image", "audio"):
            placeholder = media_placeholder(block["type"], str(block.get("mimeType", "")), block.get("data"), block.get("uri"))
            return _indented(Text(placeholder, style="dim")), 0
        if block.get("type") == "text":
            return _clip(unfenced(str(block.get("text", ""))), limit, "", tail=tail)
        if block.get("type") == "resource_link":
            return _indented(Text(f"🔗 {block.get('name') or block.get('uri')}  {block.get('uri', '')}", style="dim")), 0
        if block.get("type") == "resource":
            resource = block.get("resource") or {}
            text = resource.get("text")
            head = _indented(Text(f"📎 {resource.get('uri', '')}", style="dim"))
            if isinstance(text, str):
                body, cut = _clip(text, limit, "", tail=tail)
                return Group(head, body), cut
            return head, 0
        return _indented(Text(f"[{block.get('type', 'content')}: {block.get('mimeType', '')}]", style="dim")), 0
    if kind == "diff":
        return _diff(item, colours, limit, on_diff_ready)
    if kind == "terminal":
        return _terminal(str(item.get("terminalId", "")), terminals, colours, limit)
    if kind == "session":  # the subagent session this call runs: its card follows in the transcript
        return _indented(Text(f"⑂ runs subagent session {item.get('sessionId', '?')} (its card: s opens it)", style="dim")), 0
    return _clip(_json(item), limit, "dim")


def _diff(item: dict[str, Any], colours: dict[str, str], limit: int, on_ready: Callable[[], None] | None):
    old = item.get("oldText")
    old = None if old is None else str(old)
    path = str(item.get("path") or "?")
    diff = diff_cache.shared.diff(path, old, str(item.get("newText") or ""), on_ready)
    head = Text(f"{INDENT}{clean(path)}", style="bold")
    head.append("  (new file)" if old is None else "", style="dim")
    if diff is None:
        head.append("  computing the diff…", style="dim italic")
        return head, 0
    head.append(f"  +{diff.added}", style=colours.get("diff-added", "green"))
    head.append(f" −{diff.removed}", style=colours.get("diff-removed", "red"))
    rows = diff.unified
    body = Text()
    for row in rows[:limit]:  # O(limit): the rows were built with the diff, off the UI thread if big
        row = row._replace(text=clean(row.text))
        if row.kind == "added":
            body.append(f"+{row.text}\n", style=colours.get("diff-added", "green"))
        elif row.kind == "removed":
            body.append(f"-{row.text}\n", style=colours.get("diff-removed", "red"))
        elif row.kind == "hunk":
            body.append(f"{row.text}\n", style="dim cyan")
        else:
            body.append(f" {row.text}\n")
    body.rstrip()
    return Group(head, _indented(body)), max(0, len(rows) - limit)


def _terminal(terminal_id: str, terminals: dict[str, TerminalState], colours: dict[str, str], limit: int):
    terminal = terminals.get(terminal_id)
    if terminal is None:
        return _indented(Text(f"$ terminal {terminal_id} (waiting for output)", style="dim")), 0
    body, cut = _clip(terminal.output, limit, "", ansi=True, tail=True)
    if terminal.stopped_by_user:
        status = Text(f"{INDENT}⏹ stopped by you" if terminal.exited else f"{INDENT}⏹ stopping…",
                      style=colours.get("tool-pending", "dim"))
    elif not terminal.exited:
        status = Text(f"{INDENT}running…", style=colours.get("tool-running", "yellow"))
    elif terminal.signal:
        status = Text(f"{INDENT}killed by {terminal.signal}", style=colours.get("tool-failed", "red"))
    else:
        ok = terminal.exit_code == 0
        status = Text(f"{INDENT}exit code {terminal.exit_code}",
                      style=colours.get("tool-completed" if ok else "tool-failed", ""))
    return Group(body, status), cut


def _clip(text: str, limit: int, style: str, *, ansi: bool = False, tail: bool = False) -> tuple[RenderableType, int]:
    """At most `limit` lines, indented (wrapped lines too): the first ones and the count cut at the end;
    with `tail` (terminal output, a command's output) the last ones under a line saying how many earlier
    ones `v` shows, and the count cut as a negative number.

    Only the lines shown are split and parsed: a 2 MB tool output or 256 KB of terminal output costs
    a scan for newlines (in C), not a Python pass over every line.
    """
    text = text.rstrip("\n")
    total = text.count("\n") + 1 if text else 0
    if total > limit:
        if tail:
            cut_at = len(text)
            for _ in range(limit):
                cut_at = text.rfind("\n", 0, cut_at)
            window = text[cut_at + 1 :]
        else:
            cut_at = -1
            for _ in range(limit):
                cut_at = text.find("\n", cut_at + 1)
            window = text[:cut_at]
    else:
        window = text
    lines = window.splitlines()
    shown = lines[-limit:] if tail else lines[:limit]
    joined = "\n".join(shown)
    body: RenderableType = _indented(Text.from_ansi(clean_ansi(joined), style=style) if ansi
                                     else Text(clean(joined), style=style))
    cut = max(0, total - limit)
    if tail and cut:
        note = Text(f"… {cut} earlier line{'s' if cut != 1 else ''} (v to view all)", style="dim italic")
        return Group(_indented(note), body), -cut
    return body, cut


def _json(value: Any) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
