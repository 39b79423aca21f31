"""Provides BlockMenu (`m` in the transcript's navigation mode) and `block_actions`: what can be done with the block
under the block cursor (else the block nearest the bottom of the view), each with its key, in a list to pick from.

The same actions are one key away in navigation mode; the menu shows which of them apply to this block, so they
need not be remembered. Enter (or the action's own key) runs one on that block; Esc closes the menu.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from ...state.models import ChildSessionEntry, MessageEntry, ToolCallEntry
from ...state.shell import ShellEntry
from .dialog import Dialog

if TYPE_CHECKING:
    from ..tabs.view import SessionView


@dataclass(frozen=True)
class BlockAction:
    key: str  # as the keymap has it (shown)
    what: str
    run: Callable[[], Any]


# (the view's action, what it does to this block, whether it applies to the block's entry)
VIEW_ACTIONS: tuple[tuple[str, str, Callable[[Any], bool]], ...] = (
    ("copy_block", "Copy it", lambda entry: True),
    ("open_diff", "Its diff, full screen", lambda entry: isinstance(entry, ToolCallEntry)
        and any(item.get("type") == "diff" for item in entry.content)),
    ("view_output", "Its whole output, full screen", lambda entry: isinstance(entry, ToolCallEntry)),
    ("toggle_tool_call", "Expand or collapse it", lambda entry: isinstance(entry, (ToolCallEntry, ChildSessionEntry))),
    ("open_location", "Preview its file", lambda entry: isinstance(entry, ToolCallEntry) and bool(entry.locations)),
    ("attach_shell", "Attach it to the next prompt", lambda entry: isinstance(entry, ShellEntry)),
    ("stop_task", "Stop its command", lambda entry: isinstance(entry, ToolCallEntry) and entry.kind == "execute"
        and entry.status in ("pending", "in_progress")),
    ("open_child", "Open the subagent full screen", lambda entry: isinstance(entry, ChildSessionEntry)),
    ("cancel_child", "Cancel the subagent", lambda entry: isinstance(entry, ChildSessionEntry) and entry.running),
)


def _entries(view: SessionView) -> dict[str, Any]:
    state = view.session.state
    found: dict[str, Any] = {entry.key: entry for entry in state.entries}
    found.update({call.key: call for call in state.tool_calls.values()})
    found.update({child.key: child for child in state.children.values()})
    return found


def target(view: SessionView) -> tuple[str, Any] | None:
    """The block the menu is for: under the cursor when it is on screen, else the one nearest the bottom."""
    transcript = view.transcript
    entries = _entries(view)
    key = transcript.cursor_key if transcript.cursor_in_view() else None
    key = key if key in entries else transcript.nearest_key(entries)
    return (key, entries[key]) if key is not None else None


def _key(view: SessionView, action: str) -> str:
    for active in view.screen.active_bindings.values():
        if active.binding.action == action:
            return view.app.get_key_display(active.binding)
    return ""


def block_actions(view: SessionView, key: str, entry: Any) -> list[BlockAction]:
    """What applies to `entry` (the transcript's block `key`); each runs with the cursor on that block."""
    transcript = view.transcript

    def on_block(run: Callable[[], Any]) -> Callable[[], Any]:
        def go() -> Any:
            transcript.focus()
            transcript.put_cursor(key)
            return run()
        return go

    actions = [BlockAction(_key(view, name), what, on_block(lambda name=name: view.run_action(name)))
               for name, what, applies in VIEW_ACTIONS if applies(entry)]
    if isinstance(entry, MessageEntry) and transcript.collapsible(key):
        actions.append(BlockAction(_key(view, "toggle_collapsed"), "Expand or collapse it",
                                   on_block(lambda: transcript.toggle_collapsed(key))))
    return actions


def describe(entry: Any) -> str:
    if isinstance(entry, ToolCallEntry):
        return f"Tool call: {entry.title}"
    if isinstance(entry, ChildSessionEntry):
        return f"Subagent: {entry.name}"
    if isinstance(entry, MessageEntry):
        words = " ".join(entry.text.split())
        return {"user": "Your prompt", "agent": "Answer", "thought": "Thought"}.get(entry.role, "Message") + (
            f": {words[:60]}{'…' if len(words) > 60 else ''}" if words else "")
    return "Block"


class BlockMenu(Dialog[BlockAction | None]):
    """The actions of one block; Enter or an action's key picks one (dismissed with it), Esc closes."""

    HELP_AREA = "Block menu"
    DEFAULT_CSS = """
    BlockMenu > #dialog { width: 70; max-width: 90%; border: thick $accent; padding: 0 1; }
    BlockMenu OptionList { height: auto; max-height: 16; margin: 1 0; }
    BlockMenu .keys { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "close", "Close", id="block_menu.close")]

    def __init__(self, title: str, actions: list[BlockAction]) -> None:
        super().__init__()
        self.title_text = title
        self.actions = actions

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, markup=False)
            yield OptionList(*(Option(f"{action.key:>5}  {action.what}", id=str(n))
                               for n, action in enumerate(self.actions)))
            yield Static("Enter or its key runs it on this block · Esc closes", classes="keys", markup=False)

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.actions[int(event.option.id or 0)])

    def on_key(self, event: Any) -> None:
        """An action's own key picks it too, as it would in navigation mode."""
        action = next((a for a in self.actions if a.key and a.key == event.character), None)
        if action is not None:
            event.stop()
            self.dismiss(action)

    def action_close(self) -> None:
        self.dismiss(None)
