"""Provides PermissionScreen: the modal that answers one `session/request_permission`, and DiffPreview."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from ...protocol.sanitize import code_points, invisible_count, mixed_script_words
from ...state import diff_cache
from ...state.diffing import FileDiff
from ...state.permission_policy import command_of, merge_tool_call
from ..loop_hop import from_any_thread
from .dialog import AgentDialog
from .modal_footer import FOOTER_ROWS

MAX_DIFF_LINES = 40
MAX_TEXT_LINES = 6
KIND_MARKERS = {
    # Words as well as symbols: the kind must be readable without colour (NO_COLOR, screen readers).
    "allow_once": ("✓", "allow · once", "-allow"),
    "allow_always": ("✓✓", "allow · always", "-allow"),
    "reject_once": ("✗", "reject · once", "-reject"),
    "reject_always": ("✗✗", "reject · always", "-reject"),
}
# Answers the policy remembers as a rule: they take a second, deliberate key (Enter) to confirm.
REMEMBERED_KINDS = ("allow_always", "reject_always")

KIND_KEYS = {"y": ("allow_once", "allow"), "a": ("allow_always", "always (then Enter)"), "n": ("reject_once", "reject")}
PICK = Binding.Group("Pick", compact=True)
ANSWER = Binding.Group("Answer")
MOVE = Binding.Group("Move", compact=True)


def compact_diff(old: str | None, new: str, limit: int = MAX_DIFF_LINES) -> tuple[list[str], int]:
    """The first `limit` lines of a unified diff without the file headers, and how many were cut."""
    return _first_lines(FileDiff("", old, new), limit)


def _first_lines(diff: FileDiff, limit: int) -> tuple[list[str], int]:
    """O(limit): the rows are built with the diff (off the UI thread when it is big)."""
    marks = {"added": "+", "removed": "-", "context": " ", "hunk": ""}
    rows = diff.unified
    return [marks[row.kind] + row.text for row in rows[:limit]], max(0, len(rows) - limit)


class DiffPreview(Static):
    """A short, coloured diff so the user sees what they approve; the full viewer lives elsewhere."""

    COMPONENT_CLASSES = {"diff-preview--added", "diff-preview--removed", "diff-preview--hunk", "diff-preview--path"}
    DEFAULT_CSS = """
    DiffPreview {
        height: auto;
        & > .diff-preview--added { color: $diff-added; }
        & > .diff-preview--removed { color: $diff-removed; }
        & > .diff-preview--hunk { color: $text-muted; }
        & > .diff-preview--path { text-style: bold; }
    }
    """

    def __init__(self, item: dict[str, Any]) -> None:
        super().__init__()
        self.path = str(item.get("path") or "?")
        self.new_file = item.get("oldText") is None
        old = item.get("oldText")
        self._source = (self.path, None if old is None else str(old), str(item.get("newText") or ""))
        self.lines: list[str] = []
        self.cut = 0
        # Shared with the tool-call card and the diff viewer (state/diff_cache.py); a big diff is
        # computed in a worker thread, so the dialog opens at once and the preview fills in.
        diff = diff_cache.shared.diff(*self._source, from_any_thread(self._ready))
        self.pending = diff is None
        if diff is not None:
            self.lines, self.cut = _first_lines(diff, MAX_DIFF_LINES)

    def _ready(self) -> None:
        diff = diff_cache.shared.get(*self._source)
        if diff is not None:
            self.lines, self.cut = _first_lines(diff, MAX_DIFF_LINES)
        self.pending = False
        self.refresh(layout=True)

    @property
    def plain_text(self) -> str:
        head = self.path + ("  (new file)" if self.new_file else "")
        tail = [f"… {self.cut} more lines"] if self.cut else []
        if self.pending:
            tail = ["computing the diff…"]
        return "\n".join([head, *self.lines, *tail])

    def render(self) -> RenderableType:
        # Built on every render so that a theme change recolours it.
        style = self.get_component_rich_style
        text = Text()
        text.append(self.path, style=style("diff-preview--path"))
        if self.new_file:
            text.append("  (new file)", style=style("diff-preview--hunk"))
        if self.pending:
            text.append("\ncomputing the diff…", style=style("diff-preview--hunk"))
        for line in self.lines:
            name = {"+": "diff-preview--added", "-": "diff-preview--removed", "@": "diff-preview--hunk"}.get(line[:1])
            text.append("\n")
            text.append(line.replace("-", "−", 1) if line.startswith("-") else line, style=style(name) if name else "")
        if self.cut:
            text.append(f"\n… {self.cut} more lines", style=style("diff-preview--hunk"))
        return text


class OptionRow(Static):
    """One option of the request; clicking it picks it, like its number key."""

    class Picked(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, index: int, option: dict[str, Any]) -> None:
        symbol, words, css_class = KIND_MARKERS.get(option.get("kind"), ("?", "unknown kind", "-unknown"))  # type: ignore[arg-type]
        name = str(option.get("name") or option.get("optionId") or "(unnamed)")
        number = f"{index + 1}" if index < 9 else " "
        super().__init__(Text(f" {number}  {symbol:<2} {name}  [{words}]"), classes=f"option {css_class}")
        self.index = index

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.post_message(self.Picked(self.index))


class PermissionScreen(AgentDialog[dict[str, Any] | None]):
    """Asks the user to pick one of the agent's options; dismisses with that option dict.

    Options are shown in the agent's order and picked by position or by kind, never by optionId:
    ids differ per agent. Escape means "no": the first `reject_once` option, or None when the agent
    offers none (the caller then answers `cancelled`). The caller may also dismiss it with None
    (turn cancelled, `$/cancel_request`); that is safe even if another screen sits on top of it or
    the user answered a moment earlier.

    An answer the policy would remember as a rule ("always") is not given by one key: it asks for
    Enter to confirm, and any other key goes back to the options.

    Needs rat's theme variables (`$diff-added`, `$diff-removed`), as RatApp provides.
    """

    DEFAULT_CSS = """
    PermissionScreen > #dialog { border: round $warning; }
    PermissionScreen #header { color: $warning; }
    PermissionScreen #queue { color: $text-muted; }
    PermissionScreen #title { text-style: bold; margin-top: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    PermissionScreen #meta { color: $text-muted; }
    PermissionScreen #detail {
        height: auto;
        max-height: 12;  /* replaced by _fit() with what the terminal leaves over */
        margin: 1 0;
        padding: 0 1;
        background: $boost;
    }
    PermissionScreen #detail > * { height: auto; }
    PermissionScreen #command { text-style: bold; }
    PermissionScreen #suspicious { color: $text-error; text-style: bold; }
    PermissionScreen .note, PermissionScreen #locations { color: $text-muted; }
    PermissionScreen #options { height: auto; max-height: 9; }
    PermissionScreen .option { height: auto; }
    PermissionScreen .option.-allow { color: $text-success; }
    PermissionScreen .option.-reject { color: $text-error; }
    PermissionScreen .option.-unknown { color: $foreground; }
    PermissionScreen .option.-highlighted { background: $accent 30%; text-style: bold; }
    PermissionScreen #hint { margin-top: 1; }
    PermissionScreen.-confirming #hint { color: $warning; text-style: bold; }
    """

    BINDINGS = [
        *(
            Binding(str(n), f"pick({n - 1})", f"Option {n}", id=f"permission.pick_{n}", group=PICK, show=False)
            for n in range(1, 10)
        ),
        Binding("y", "pick_kind('allow_once')", "Allow", id="permission.allow_once", group=ANSWER,
                tooltip="Allow this once"),
        Binding("a", "pick_kind('allow_always')", "Always", id="permission.allow_always", group=ANSWER,
                tooltip="Allow, and remember the answer"),
        Binding("n", "pick_kind('reject_once')", "Reject", id="permission.reject_once", group=ANSWER,
                tooltip="Reject this once"),
        Binding("escape", "reject", "Reject", id="permission.escape", show=False,
                tooltip="Reject once, or close if the agent offers no reject option"),
        Binding("up", "move(-1)", "Up", id="permission.up", group=MOVE, show=False),
        Binding("down", "move(1)", "Down", id="permission.down", group=MOVE, show=False),
        Binding("enter", "pick_highlighted", "Pick", id="permission.select", tooltip="Pick the highlighted option"),
        Binding("r", "raw_command", "Raw", id="permission.raw", show=False,
                tooltip="Show the command with every character outside plain ASCII as its code point"),
        Binding("pageup", "scroll_detail(-1)", "Scroll up", id="permission.page_up", show=False),
        Binding("pagedown", "scroll_detail(1)", "Scroll down", id="permission.page_down", show=False),
    ]

    def __init__(
        self,
        request: dict[str, Any],
        *,
        agent_name: str,
        tool_call: dict[str, Any] | None = None,
        queue_position: tuple[int, int] | None = None,
    ) -> None:
        super().__init__()
        self.request = request
        self.agent_name = agent_name
        update = request.get("toolCall")
        self.tool_call = merge_tool_call(tool_call, update if isinstance(update, dict) else {})
        self.options: list[dict[str, Any]] = [o for o in request.get("options") or () if isinstance(o, dict)]
        self.queue_position = queue_position
        self.highlighted = self._first_index("allow_once")
        if self.highlighted is None:
            self.highlighted = 0 if self.options else None
        self.confirming: int | None = None  # the "always" option waiting for Enter
        self.dismissed = False

    # -- layout ---------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        call = self.tool_call
        with Vertical(id="dialog"):
            # Text, not markup strings: agents choose these words and may include "[".
            yield Static(Text(f"⚠ {self.agent_name} asks for permission"), id="header")
            if self.queue_position is not None:
                k, n = self.queue_position
                yield Static(f"request {k} of {n}", id="queue")
            yield Static(Text(str(call.get("title") or "Tool call")), id="title")
            kind = call.get("kind") or "unknown kind"
            status = str(call.get("status") or "pending").replace("_", " ")
            yield Static(Text(f"{kind} · {status}"), id="meta")
            if warning := self.suspicious():
                yield Static(Text(warning), id="suspicious")
            for said in (self.request.get("title"), self.request.get("description")):  # ACP v2: the question, why
                if isinstance(said, str) and said.strip() and said != call.get("title"):
                    yield Static(Text(said.strip()), classes="note")
            details = list(self._details())
            if details:
                with VerticalScroll(id="detail", can_focus=False):
                    yield from details
            # Both parts scroll on their own, so the options stay on screen whatever the diff's size.
            with VerticalScroll(id="options", can_focus=False):
                for index, option in enumerate(self.options):
                    yield OptionRow(index, option)
                if not self.options:
                    yield Static("The agent offered no options: Escape closes.", classes="note")
            yield Static(self.hint(), id="hint")

    def hint(self) -> str:
        """The keys this request takes: only the kinds its options have (Codex offers no "always" for edits)."""
        count = len(self.options)
        parts = [f"1–{count} pick" if count > 1 else "1 picks"] if count else []
        parts += [f"{key} {words}" for key, (kind, words) in KIND_KEYS.items() if self._first_index(kind) is not None]
        parts.append("↑↓ Enter")
        parts.append("Esc reject" if self._first_index("reject_once") is not None else "Esc closes")
        return " · ".join(parts)

    def suspicious(self) -> str:
        """What makes the title or command look other than what runs: invisible (format) characters, which
        `clean` shows as `⟨U+202E⟩`, and words mixing lookalike scripts (a Cyrillic `а` in `bash`). Empty if none."""
        call = self.tool_call
        texts = [str(call.get("title") or ""), command_of(call) or ""]
        invisible = sum(invisible_count(text) for text in texts)
        mixed = list(dict.fromkeys(word for text in texts for word in mixed_script_words(text)))
        parts = []
        if invisible:
            parts.append(f"contains {invisible} invisible character{'' if invisible == 1 else 's'} (⟨U+…⟩)")
        if mixed:
            parts.append("mixes lookalike scripts: " + ", ".join(mixed[:3]) + ("…" if len(mixed) > 3 else ""))
        if not parts:
            return ""
        return "⚠ " + " · ".join(parts) + (" · r: raw command" if command_of(call) else "")

    def action_raw_command(self) -> None:
        """r: the `$ command` line with every character outside printable ASCII as its code point, and back."""
        command = command_of(self.tool_call)
        if not command:
            return
        self._raw_shown = not getattr(self, "_raw_shown", False)
        for line in self.query("#command").results(Static):
            line.update(Text(f"$ {code_points(command)}" if self._raw_shown else f"$ {command}"))

    def _details(self) -> ComposeResult:
        call = self.tool_call
        command = command_of(call)
        if command:
            raw = call.get("rawInput")
            cwd = raw.get("cwd") if isinstance(raw, dict) else None
            yield Static(Text(f"$ {command}"), id="command")
            if isinstance(cwd, str) and cwd:
                yield Static(Text(f"in {cwd}"), classes="note")
        for item in call.get("content") or ():
            if not isinstance(item, dict):
                continue
            if item.get("type") == "diff":
                yield DiffPreview(item)
            elif item.get("type") == "content":
                block = item.get("content") or {}
                text = block.get("text") if isinstance(block, dict) else None
                if isinstance(text, str) and text.strip():
                    lines = text.strip().splitlines()
                    shown = "\n".join(lines[:MAX_TEXT_LINES]) + ("\n…" if len(lines) > MAX_TEXT_LINES else "")
                    yield Static(Text(shown), classes="note")
        places = [
            f"↳ {loc.get('path')}" + (f":{loc['line']}" if loc.get("line") is not None else "")
            for loc in call.get("locations") or ()
            if isinstance(loc, dict) and loc.get("path")
        ]
        if places:
            yield Static(Text("\n".join(places)), id="locations")

    def on_mount(self) -> None:
        self._show_highlight()
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Give the details every row the options and the fixed lines leave, options first.

        CSS cannot say "the rest of an auto-height dialog", and a fixed share would cut a diff
        short on a tall terminal or push the options off a short one.
        """
        option_rows = min(len(self.options), 9) or 1
        fixed = 2 + 1 + (self.queue_position is not None) + 2 + 1 + 2 + option_rows + 2  # see compose
        room = int((self.size.height - FOOTER_ROWS) * 0.95) - fixed  # the dialog's 95% of what the footer leaves
        for detail in self.query("#detail"):
            detail.styles.max_height = max(3, room)

    def _show_highlight(self) -> None:
        for row in self.query(OptionRow):
            row.set_class(row.index == self.highlighted, "-highlighted")

    # -- answering ------------------------------------------------------------------------------

    def _first_index(self, kind: str) -> int | None:
        return next((i for i, option in enumerate(self.options) if option.get("kind") == kind), None)

    def _pick(self, index: int) -> None:
        if not 0 <= index < len(self.options):
            return
        option = self.options[index]
        if option.get("kind") in REMEMBERED_KINDS and self.confirming != index:
            self._ask_confirmation(index)
            return
        self.dismiss(option)

    def _ask_confirmation(self, index: int) -> None:
        option = self.options[index]
        self.confirming = self.highlighted = index
        self._show_highlight()
        verb = "allowed" if option.get("kind") == "allow_always" else "rejected"
        self.query_one("#hint", Static).update(Text(
            f"Remember it? Calls like this will be {verb} without asking (F4 lists the rules).\n"
            "Enter confirms · any other key goes back"))
        self.add_class("-confirming")
        self.rearm()  # a key already on its way is no confirmation

    def _cancel_confirmation(self) -> None:
        self.confirming = None
        self.query_one("#hint", Static).update(self.hint())
        self.remove_class("-confirming")

    def guard_key(self, event: events.Key) -> bool:
        """While an "always" waits for its confirmation, Enter (after the grace period) confirms and
        any other key goes back to the options; an early key is never a confirmation."""
        if self.confirming is None or self.dismissed:
            return super().guard_key(event)
        if event.key != "enter" or event.time < self.armed_at:
            self._cancel_confirmation()
            if event.key != "escape":
                self.app.bell()
            return True
        return False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick" and parameters:
            # Hide (and pass on) number keys beyond the options offered.
            return isinstance(parameters[0], int) and parameters[0] < len(self.options)
        if action == "pick_kind" and parameters:
            return self._first_index(str(parameters[0])) is not None  # the footer offers only what exists
        return True

    def on_key(self, event: events.Key) -> None:
        """A kind's key the footer does not offer (hidden: no such option) rings and says why."""
        known = KIND_KEYS.get(event.key)
        if known is not None and self._first_index(known[0]) is None and not self.dismissed:
            event.stop()
            self.action_pick_kind(known[0])

    def action_pick(self, index: int) -> None:
        self._pick(index)

    def action_pick_kind(self, kind: str) -> None:
        index = self._first_index(kind)
        if index is None:
            # Agents differ: Codex offers no "always" for edits. Say so rather than guess.
            self.app.bell()
            words = KIND_MARKERS.get(kind, ("", kind, ""))[1]
            self.notify(f"{self.agent_name} offers no “{words}” option here; use a number.", timeout=4)
            return
        self._pick(index)

    def action_reject(self) -> None:
        index = self._first_index("reject_once")
        if index is None:
            self.dismiss(None)
        else:
            self._pick(index)

    def action_move(self, step: int) -> None:
        if self.highlighted is None:
            return
        self.highlighted = max(0, min(len(self.options) - 1, self.highlighted + step))
        self._show_highlight()
        self.query(OptionRow)[self.highlighted].scroll_visible()

    def action_pick_highlighted(self) -> None:
        if self.highlighted is not None:
            self._pick(self.highlighted)

    def action_scroll_detail(self, direction: int) -> None:
        for detail in self.query("#detail").results(VerticalScroll):
            if direction < 0:
                detail.scroll_page_up(animate=False)
            else:
                detail.scroll_page_down(animate=False)

    def on_option_row_picked(self, message: OptionRow.Picked) -> None:
        self._pick(message.index)

    # -- dismissal ------------------------------------------------------------------------------

    @property
    def answered(self) -> bool:
        """Whether this screen has already produced its result (by the user or from outside)."""
        return self.dismissed
