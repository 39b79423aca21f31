"""Provides OutputViewer (`v` on a tool call): its whole output full screen — content, terminal output,
raw input and output — with search (`/`, Enter or n next, N previous, matches highlighted).

The card in the transcript keeps at most EXPANDED_LINES lines; this shows every line. A command's output
(`tail_first`: an execute call, terminal output) opens scrolled to its end, as its card shows its tail. OutputView draws
only the lines in view (Textual's line API), so a 100,000-line build log opens and scrolls at once.
"""

from __future__ import annotations

import json

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Static

from ...state.models import TerminalState, ToolCallEntry
from ...state.shell import ShellEntry
from ..textual_ext.styled_once import StyledOnce
from ..widgets.keys_footer import KeysFooter
from ..widgets.tool_call import unfenced


def tail_first(call: ToolCallEntry) -> bool:
    """Whether the call's output is a command's (an `execute` call, terminal output): read from its end,
    where the error or the summary is."""
    return call.kind == "execute" or any(item.get("type") == "terminal" for item in call.content)


def output_text(call: ToolCallEntry, terminals: dict[str, TerminalState]) -> str:
    """Everything the tool call carries, as plain text, in sections. A command's (`tail_first`) raw input
    and output come first, so that its output's last line is the text's last line (the viewer opens there)."""
    if isinstance(call, ShellEntry):  # a `!command`: what `a` attaches, uncut
        from ...session.shell_context import card_text

        return card_text(call, terminals, None)
    parts: list[str] = []
    raws = [(label, raw) for label, raw in (("raw input", call.raw_input), ("raw output", call.raw_output))
            if raw is not None]
    tail = tail_first(call)
    for label, raw in raws if tail else ():
        parts.append(_raw_section(label, raw))
    for item in call.content:
        kind = item.get("type")
        if kind == "content":
            block = item.get("content") or {}
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(unfenced(block["text"]).rstrip("\n"))
        elif kind == "terminal":
            terminal = terminals.get(str(item.get("terminalId", "")))
            if terminal is not None:
                status = ("running" if not terminal.exited else f"killed by {terminal.signal}" if terminal.signal
                          else f"exit code {terminal.exit_code}")
                parts.append(f"── terminal {item.get('terminalId')} ({status}) ──\n{Text.from_ansi(terminal.output).plain}")
        elif kind == "diff":
            parts.append(f"── diff {item.get('path')} (d shows it) ──")
    for label, raw in raws if not tail else ():
        parts.append(_raw_section(label, raw))
    return "\n".join(parts) if parts else "(no output)"


def _raw_section(label: str, raw: object) -> str:
    shown = raw if isinstance(raw, str) else json.dumps(raw, indent=2, ensure_ascii=False)
    return f"── {label} ──\n{shown}"


class OutputView(ScrollView, can_focus=True):
    """Plain lines, the matches of `query` highlighted, the current one brighter."""

    COMPONENT_CLASSES = {"output-view--match", "output-view--current"}
    DEFAULT_CSS = """
    OutputView {
        background: $surface;
        & > .output-view--match { background: $warning 40%; }
        & > .output-view--current { background: $accent; color: $text; text-style: bold; }
    }
    """
    BINDINGS = [
        Binding("home", "scroll_home", "Top", show=False),
        Binding("end", "scroll_end", "End", show=False),
    ]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.lines = text.splitlines() or [""]
        self.query_text = ""
        self.matches: list[tuple[int, int]] = []  # (line, column)
        self.current = -1
        self.virtual_size = Size(max(len(line) for line in self.lines), len(self.lines))

    def search(self, query: str) -> int:
        self.query_text = query
        needle = query.lower()
        self.matches = []
        if needle:
            for number, line in enumerate(self.lines):
                lowered = line.lower()
                start = lowered.find(needle)
                while start >= 0:
                    self.matches.append((number, start))
                    start = lowered.find(needle, start + len(needle))
        self.current = -1
        self.refresh()
        return len(self.matches)

    def step(self, delta: int) -> None:
        if not self.matches:
            return
        if self.current < 0:
            top = round(self.scroll_offset.y)
            following = [i for i, (line, _c) in enumerate(self.matches) if line >= top]
            self.current = following[0] if delta > 0 and following else (len(self.matches) - 1 if delta < 0 else 0)
        else:
            self.current = (self.current + delta) % len(self.matches)
        line, _column = self.matches[self.current]
        self.scroll_to(y=max(0, line - self.scrollable_content_region.height // 2), animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        number = round(scroll_y) + y
        width = self.size.width
        base = self.rich_style
        if number >= len(self.lines):
            return Strip.blank(width, base)
        line = self.lines[number].expandtabs(4)
        text = Text(line, style=base, no_wrap=True)
        if self.query_text:
            match_style = self.get_component_rich_style("output-view--match")
            current = self.matches[self.current] if self.current >= 0 else None
            needle, lowered = self.query_text.lower(), line.lower()
            start = lowered.find(needle)
            while start >= 0:
                is_current = current == (number, start)
                style = self.get_component_rich_style("output-view--current") if is_current else match_style
                text.stylize(style, start, start + len(needle))
                start = lowered.find(needle, start + len(needle))
        segments = list(text.render(self.app.console))
        strip = Strip(segments or [Segment("", Style())])
        return strip.crop_extend(round(scroll_x), round(scroll_x) + width, base)


class OutputViewer(StyledOnce, Screen[None]):
    """Full screen; `/` searches, Enter/n next, N previous, Esc closes the search then the viewer."""

    DEFAULT_CSS = """
    OutputViewer > .title { background: $panel; padding: 0 1; text-style: bold; }
    OutputViewer > OutputView { height: 1fr; }
    OutputViewer > Input { display: none; }
    OutputViewer.-searching > Input { display: block; }
    OutputViewer > #matches { background: $panel; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="output_viewer.close"),
        Binding("slash,ctrl+f", "search", "Search", id="output_viewer.search"),
        Binding("n", "step(1)", "Next match", id="output_viewer.next"),
        Binding("N", "step(-1)", "Previous match", id="output_viewer.previous"),
    ]

    def __init__(self, title: str, text: str, *, at_end: bool = False) -> None:
        super().__init__()
        self.tool_title = title
        self.text = text
        self.at_end = at_end  # a command's output: opened on its last lines

    def compose(self) -> ComposeResult:
        yield Static(Text(f"{self.tool_title} — {len(self.text.splitlines())} lines"), classes="title")
        yield OutputView(self.text)
        yield Input(placeholder="Search (Enter: next match, Esc: close the search)")
        yield Static("", id="matches")
        yield KeysFooter()

    def on_mount(self) -> None:
        view = self.query_one(OutputView)
        view.focus()
        if self.at_end:
            self.call_after_refresh(view.scroll_end, animate=False, immediate=True)

    @property
    def view(self) -> OutputView:
        return self.query_one(OutputView)

    def action_search(self) -> None:
        self.add_class("-searching")
        self.query_one(Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        count = self.view.search(event.value)
        self.query_one("#matches", Static).update(f"{count} match{'es' if count != 1 else ''}" if event.value else "")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_step(1)

    def action_step(self, delta: int) -> None:
        view = self.view
        view.step(delta)
        if view.matches:
            self.query_one("#matches", Static).update(f"match {view.current + 1} of {len(view.matches)}")

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape" and self.has_class("-searching"):
            event.stop()
            event.prevent_default()
            self.remove_class("-searching")
            self.view.focus()

    def action_close(self) -> None:
        if self.has_class("-searching"):
            self.remove_class("-searching")
            self.view.focus()
            return
        self.dismiss(None)
