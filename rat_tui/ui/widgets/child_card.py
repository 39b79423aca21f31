"""Provides Rich cards for a subagent's child session and for a compaction marker in the transcript."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from ...state import children
from ...state.models import ChildSessionEntry, CompactionEntry, MessageEntry, NoticeEntry, ToolCallEntry
from .tool_call import STATUS_MARKS

RUN_MARKS = {
    "running": ("◐", "tool-running", "running"),
    "requires_action": ("⚠", "tool-failed", "waiting for you"),
    "idle": ("●", "tool-completed", "idle"),
}
EXPANDED_ENTRIES = 12  # the card shows the child's last entries; the full screen shows them all
ENTRY_LINES = 6
COMPACTION_MARKS = {
    "in_progress": ("◐", "tool-running", "compacting the conversation…"),
    "completed": ("●", "tool-completed", "conversation compacted"),
    "failed": ("✗", "tool-failed", "compaction failed"),
    "cancelled": ("⊘", "tool-pending", "compaction cancelled"),
}


def child_state_words(child: ChildSessionEntry) -> str:
    """running / waiting for you / idle (stop reason) / starting."""
    if child.stopped_by_user:
        return "stopping…" if child.running else "stopped by you"
    if child.replayed and child.run_state in ("running", "requires_action"):
        return "from before the reload"  # what the replay said it was doing then; its process is gone
    word = RUN_MARKS.get(child.run_state or "", (None, None, child.run_state or "announced"))[2]
    if child.run_state == "idle" and child.stop_reason and child.stop_reason != "end_turn":
        word += f" ({child.stop_reason.replace('_', ' ')})"
    return word


def render_child_card(child: ChildSessionEntry, colours: dict[str, str] | None = None) -> RenderableType:
    """The child's card: name, state, counts and last activity; expanded, its latest entries too."""
    colours = colours or {}
    mark, variable, _ = RUN_MARKS.get(child.run_state or "", ("○", "tool-pending", ""))
    if child.replayed and not child.running and child.run_state != "idle":
        mark, variable = "○", "tool-pending"
    colour = colours.get(variable, "")
    messages, tools = children.counts(child)
    header = Text()
    header.append(f"{mark} ", style=colour)
    header.append("⑂ ", style="bold")
    header.append(child.name, style="bold")
    if child.description and child.description != child.name:
        header.append(f"  {child.description}", style="dim")
    header.append(f"  {child_state_words(child)}", style=f"{colour} dim".strip())
    header.append(f"  · {messages} message{'s' if messages != 1 else ''} · {tools} tool call{'s' if tools != 1 else ''}",
                  style="dim")
    if child.state.pending_permissions:
        header.append(f"  ⚠ {child.state.pending_permissions} waiting", style=colours.get("tool-failed", ""))
    parts: list[RenderableType] = [header]
    if child.last_activity and not child.expanded:
        parts.append(Text(f"   ↳ {child.last_activity}", style="dim", no_wrap=True, overflow="ellipsis"))
    if child.expanded:
        entries = child.state.entries[-EXPANDED_ENTRIES:]
        hidden = len(child.state.entries) - len(entries)
        if hidden:
            parts.append(Text(f"   … {hidden} earlier entr{'ies' if hidden != 1 else 'y'} (Enter: full screen)", style="dim"))
        for entry in entries:
            parts.append(_entry_line(entry, colours))
        if not child.state.entries:
            parts.append(Text("   (nothing yet)", style="dim"))
    return Group(*parts)


def _entry_line(entry: object, colours: dict[str, str]) -> RenderableType:
    if isinstance(entry, MessageEntry):
        lines = entry.text.strip().splitlines()
        body = "\n".join(lines[:ENTRY_LINES]) + ("\n…" if len(lines) > ENTRY_LINES else "")
        label = {"user": "▌ asked: ", "thought": "💭 ", "agent": "│ "}.get(entry.role, "│ ")
        style = "italic dim" if entry.role == "thought" else ""
        text = Text("   " + label, style="dim")
        text.append(body.replace("\n", "\n     "), style=style)
        return text
    if isinstance(entry, ToolCallEntry):
        mark, variable = STATUS_MARKS.get(entry.status, ("?", "tool-pending"))
        text = Text("   ")
        text.append(f"{mark} ", style=colours.get(variable, ""))
        text.append(entry.title or "Tool call")
        if entry.name and entry.name != entry.title:
            text.append(f"  {entry.name}", style="dim")
        return text
    if isinstance(entry, ChildSessionEntry):
        return Text(f"   ⑂ {entry.name}  {child_state_words(entry)}", style="dim")
    if isinstance(entry, NoticeEntry):
        return Text(f"   ℹ {entry.text}", style="dim")
    return Text(f"   · {type(entry).__name__}", style="dim")


def render_compaction(entry: CompactionEntry, colours: dict[str, str] | None = None) -> RenderableType:
    """A rule across the transcript where the context was compacted; its summary collapsed to one line."""
    colours = colours or {}
    mark, variable, words = COMPACTION_MARKS.get(entry.status, ("○", "tool-pending", f"compaction: {entry.status}"))
    colour = colours.get(variable, "")
    header = Text()
    header.append("─── ", style="dim")
    header.append(f"{mark} ", style=colour)
    header.append(words, style="bold")
    summary = entry.summary.strip()
    if summary and not entry.expanded:
        header.append("  summary (x to expand)", style="dim")
    header.append(" ───", style="dim")
    parts: list[RenderableType] = [header]
    if entry.error:
        parts.append(Text(f"   {entry.error}", style=colours.get("tool-failed", "")))
    if summary:
        if entry.expanded:
            from .markdown_lists import MarkdownWithLists  # Rich's markdown: not before the first frame

            parts.append(MarkdownWithLists(summary))
        else:
            first = summary.splitlines()[0]
            parts.append(Text(f"   {first}", style="dim italic", no_wrap=True, overflow="ellipsis"))
    return Group(*parts)
