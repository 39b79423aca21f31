"""Provides render_tool_call: a tool call as a compact Rich card for the transcript."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ...state.models import ToolCallEntry

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
    "pending": ("○", "dim"),
    "in_progress": ("◐", "yellow"),
    "completed": ("●", "green"),
    "failed": ("✗", "red"),
    "cancelled": ("⊘", "dim"),
}
MAX_CONTENT_LINES = 12


def render_tool_call(call: ToolCallEntry) -> RenderableType:
    mark, colour = STATUS_MARKS.get(call.status, ("?", "dim"))
    header = Text()
    header.append(f"{mark} ", style=colour)
    header.append(f"{KIND_ICONS.get(call.kind or 'other', '⚙ ')} ")
    header.append(call.title, style="bold")
    header.append(f"  {call.status.replace('_', ' ')}", style=f"dim {colour}")
    parts: list[RenderableType] = [header]
    for location in call.locations:
        line = location.get("line")
        parts.append(Text(f"   ↳ {location.get('path', '?')}" + (f":{line}" if line else ""), style="dim"))
    body = "\n".join(filter(None, (_content_text(item) for item in call.content)))
    if body:
        lines = body.splitlines()
        shown = "\n".join(lines[:MAX_CONTENT_LINES])
        if len(lines) > MAX_CONTENT_LINES:
            shown += f"\n… {len(lines) - MAX_CONTENT_LINES} more lines"
        parts.append(Text.from_ansi(_indent(shown), style="dim"))
    return Group(*parts)


def _content_text(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if kind == "content":
        block = item.get("content") or {}
        if block.get("type") == "text":
            return str(block.get("text", ""))
        return f"[{block.get('type', 'content')}]"
    if kind == "diff":
        return f"diff {item.get('path', '?')}" + (" (new file)" if item.get("oldText") is None else "")
    if kind == "terminal":
        return f"terminal {item.get('terminalId', '?')}"
    return json.dumps(item)[:200]


def _indent(text: str) -> str:
    return "\n".join("   " + line for line in text.splitlines())
