"""Provides `palette_commands`: the command palette's entries for rat's own actions, as Textual
SystemCommands (`App.get_system_commands`): every action with a binding (the app's, the session
view's, the transcript's), with the key it has under the user's keymap, plus the few without one.

One list built from the live bindings replaces a provider per screen: a new binding with an id
shows in the palette by itself, and a remapped key shows as remapped.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand
from textual.binding import Binding
from textual.dom import DOMNode
from ..textual_ext.keys import bindings_of, keymap_of

if TYPE_CHECKING:
    from textual.app import App

# Palette titles where the footer's short label would be unclear out of context (binding id: title).
TITLES = {
    "app.permission_rules": "Permission rules",
    "app.new_session": "New session (tab)",
    "app.close_session": "Close the tab",
    "app.next_tab": "Next tab",
    "app.previous_tab": "Previous tab",
    "app.history": "History",
    "app.agent_sessions": "Agent sessions",
    "app.open_request": "Open the waiting request",
    "session.cancel": "Cancel the turn",
    "session.toggle_focus": "Focus the transcript or the prompt",
    "session.toggle_plan": "Show or hide the plan",
    "session.toggle_tool_call": "Expand or collapse the tool call",
    "session.open_diff": "Open the tool call's diff",
    "session.open_location": "Preview the tool call's file",
    "session.search": "Search the transcript",
    "session.copy_block": "Copy the block under the cursor",
    "transcript.next_block": "Block cursor: next block",
    "transcript.previous_block": "Block cursor: previous block",
    "transcript.next_prompt": "Block cursor: next prompt",
    "transcript.previous_prompt": "Block cursor: previous prompt",
    "session.view_output": "View the tool call's whole output",
    "session.toggle_follow": "Follow the agent's files",
    "session.toggle_preview": "Show or hide the file preview",
    "session.options": "Session options (mode, model, …)",
    "session.cycle_mode": "Next mode",
    "session.pick_model": "Pick the model",
    "session.review_changes": "Review changes",
    "session.traffic": "Traffic inspector",
    "session.mcp_servers": "MCP servers",
    "session.send_now": "Send now",
    "session.queue_edit": "Edit the last queued prompt",
    "session.queue_remove": "Remove the last queued prompt",
    "session.restart": "Restart the agent",
    "session.auth": "Log in to the agent",
    "transcript.toggle": "Expand or collapse the thought",
    "transcript.end": "Transcript: jump to the end",
    "transcript.home": "Transcript: jump to the start",
}
SKIPPED = {"app.quit"}
AGENTS_HELP = "Every known ACP agent: which are installed, start one in a new tab, how to install the others"  # Textual's own "Quit" entry is there already


def bound_commands(app: App[Any], nodes: list[DOMNode]) -> Iterator[SystemCommand]:
    """A command for each binding with an id on these nodes (first node first), keys as remapped."""
    seen: set[str] = set()
    keymap = keymap_of(app)
    for node in nodes:
        keys: dict[str, list[str]] = {}
        first: dict[str, Binding] = {}
        for key, binding in bindings_of(node):
            if binding.id and binding.id not in seen and binding.id not in SKIPPED \
                    and not binding.id.startswith("app.tab_"):  # Alt+1..9: "Next tab" stands for them
                keys.setdefault(binding.id, []).append(key)
                first.setdefault(binding.id, binding)
        for binding_id, binding in first.items():
            seen.add(binding_id)
            remapped = keymap.get(binding_id)
            names = remapped.split(",") if remapped else keys[binding_id]
            shown = ", ".join(app.get_key_display(Binding(name.strip(), binding.action)) for name in names)
            title = TITLES.get(binding_id) or binding.description or binding.action
            help_text = (binding.tooltip or binding.description or "") + f"  ({shown})"
            yield SystemCommand(title, help_text, partial(app.run_action, binding.action, node))
