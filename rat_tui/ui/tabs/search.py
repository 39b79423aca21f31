"""Provides SearchBar (Ctrl+F): incremental search over the live session's transcript.

Every entry's source text is searched — answers, thoughts (collapsed or not), notices, and each tool
call's title and whole output (content, terminal output, raw input/output, expanded or not). A match
in a collapsed thought or tool call opens it. The transcript highlights the matches in the lines it
shows and the current one brighter (Transcript.search_query / reveal). Enter or ↓ goes to the next
match, ↑ to the previous one, Esc closes the bar (and is not "cancel the turn").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Static

from ...state import reducer

if TYPE_CHECKING:
    from .view import SessionView


class SearchBar(Horizontal):
    DEFAULT_CSS = """
    SearchBar { height: 1; display: none; background: $panel; }
    SearchBar.-open { display: block; }
    SearchBar > Input, SearchBar > Input:focus { border: none; height: 1; width: 1fr; padding: 0 1; background: $panel; }
    SearchBar > #search-count { width: auto; padding: 0 1; color: $text-muted; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.hits: list[str] = []  # entry keys with a match, in transcript order
        self.position: tuple[int, int] | None = None  # (hit index, nth matching line in it)

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Search the transcript · Enter/↓ next · ↑ previous · Esc closes", id="search-input")
        yield Static("", id="search-count")

    @property
    def view(self) -> SessionView:
        from .view import SessionView

        return next(node for node in self.ancestors if isinstance(node, SessionView))

    def open(self) -> None:
        self.add_class("-open")
        self.query_one(Input).focus()

    def close(self) -> None:
        self.remove_class("-open")
        transcript = self.view.transcript
        transcript.search_query, transcript.search_line = "", None
        transcript.refresh()
        self.view.composer.focus()

    # -- searching --------------------------------------------------------------------------------

    def _source(self, key: str) -> str:
        view = self.view
        call = next((c for c in view.session.state.tool_calls.values() if c.key == key), None)
        if call is not None:
            from ..screens.output_viewer import output_text

            return f"{call.title}\n{output_text(call, view.session.state.terminals)}"
        return view.transcript.entry_source(key)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        query = event.value.strip().lower()
        transcript = self.view.transcript
        transcript.search_query, transcript.search_line = query, None
        self.hits = [key for key in transcript.search_keys() if query and query in self._source(key).lower()] \
            if query else []
        self.position = None
        transcript.refresh()
        if self.hits:
            self._go(len(self.hits) - 1, 0)  # the newest match first
        else:
            self._count("no match" if query else "")

    def _count(self, text: str) -> None:
        self.query_one("#search-count", Static).update(text)

    def _go(self, hit: int, nth: int, forward: bool = True) -> None:
        """Show the `nth` matching line of hit `hit`; past its last, the next (or previous) hit."""
        view = self.view
        for _ in range(len(self.hits) + 1):
            key = self.hits[hit]
            call = next((c for c in view.session.state.tool_calls.values() if c.key == key), None)
            if call is not None and not call.expanded:
                view.session.store.dispatch(reducer.toggle_tool_call, call.key)  # opens on a match
                view.session.store.flush()
            if view.transcript.reveal(key, nth):
                self.position = (hit, nth)
                self._count(f"{hit + 1} of {len(self.hits)} entries")
                return
            if nth == 0:
                # The source matches but no line shows it: tool output beyond the card's lines, or
                # markup. Show the entry and say where the match is.
                view.transcript.reveal_entry(key)
                self.position = (hit, 0)
                where = " (in the whole output: v shows it)" if call is not None else ""
                self._count(f"{hit + 1} of {len(self.hits)} entries{where}")
                return
            hit = (hit + 1) % len(self.hits) if forward else (hit - 1) % len(self.hits)
            nth = 0
        self._count(f"{len(self.hits)} entries")

    def step(self, delta: int) -> None:
        if not self.hits:
            return
        if self.position is None:
            self._go(len(self.hits) - 1 if delta < 0 else 0, 0, delta > 0)
            return
        hit, nth = self.position
        if delta > 0:
            self._go(hit, nth + 1, True)
        elif nth > 0:
            self._go(hit, nth - 1, False)
        else:
            self._go((hit - 1) % len(self.hits), 0, False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.step(1)

    def on_key(self, event: events.Key) -> None:
        if event.key in ("escape", "down", "up"):
            event.stop()
            event.prevent_default()
            if event.key == "escape":
                self.close()
            else:
                self.step(1 if event.key == "down" else -1)
