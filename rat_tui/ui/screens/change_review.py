"""Provides ChangeReviewScreen: every file the agent changed, turn by turn, with keys to revert a turn, a file or a hunk."""

from __future__ import annotations

from dataclasses import dataclass

from textual import getters, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...session.change_tracker import ChangeTracker, FileChange, RevertError, TurnChanges
from ...state.diffing import FileDiff
from ..widgets.diff_view import DiffView
from .confirm import ConfirmScreen
from ..textual_ext.styled_once import StyledOnce
from ..widgets.keys_footer import KeysFooter

PROMPT_CHARS = 22  # keeps "Turn N · prompt · N files" on one line of the list


@dataclass(frozen=True)
class Row:
    """What one line of the list stands for: a session header, a turn header, or a file of a turn."""

    tracker: ChangeTracker
    turn: TurnChanges | None = None
    change: FileChange | None = None


def _short(prompt: str) -> str:
    line = prompt.strip().splitlines()[0] if prompt.strip() else "(no prompt)"
    return line if len(line) <= PROMPT_CHARS else line[: PROMPT_CHARS - 1] + "…"


class ChangeReviewScreen(StyledOnce, Screen[None]):
    """Newest turn first; the diff is always original → the file on disk now, so what it shows is
    exactly what a revert would undo, including after a restart or the user's own edits."""

    DEFAULT_CSS = """
    ChangeReviewScreen > .title { background: $panel; padding: 0 1; text-style: bold; }
    ChangeReviewScreen > Horizontal { height: 1fr; }
    ChangeReviewScreen #change-list {
        width: 42%;
        max-width: 60;
        height: 1fr;
        border: none;
        border-right: vkey $foreground 15%;
        padding: 0;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    ChangeReviewScreen #change-list > .option-list--option-disabled { color: $text-accent; text-style: bold; }
    ChangeReviewScreen #change-diff { width: 1fr; height: 1fr; }
    ChangeReviewScreen > .empty { height: 1fr; padding: 1 2; color: $text-muted; }
    """

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="change_review.close"),
        Binding("j", "cursor(1)", "Next file", id="change_review.next_file", show=False),
        Binding("k", "cursor(-1)", "Previous file", id="change_review.previous_file", show=False),
        Binding("r", "revert_file", "Revert file", id="change_review.revert_file",
                tooltip="Put the selected file back as it was before its turn"),
        Binding("h", "revert_hunk", "Revert hunk", id="change_review.revert_hunk",
                tooltip="Put back the change at the top of the diff, keeping the others"),
        Binding("R", "revert_turn", "Revert turn", id="change_review.revert_turn",
                tooltip="Put back every file of the selected file's turn (asks first)"),
        Binding("u", "undo_revert", "Undo revert", id="change_review.undo_revert",
                tooltip="Undo the last revert: its files back exactly as they were before it"),
    ]

    change_list = getters.query_one("#change-list", OptionList)
    diff_view = getters.query_one("#change-diff", DiffView)

    def __init__(self, trackers: list[ChangeTracker]) -> None:
        super().__init__()
        self.trackers = trackers
        self.rows: list[Row] = []
        self._build_rows()

    def _build_rows(self) -> None:
        for number, tracker in enumerate(self.trackers):
            # Only what may be reverted is offered (ChangeTracker.offered): never a file outside the
            # working directory that an agent's diff named.
            turns = [turn for turn in reversed(tracker.turns) if any(tracker.offered(c) for c in turn.files)]
            if turns and number > 0:
                self.rows.append(Row(tracker))
            for turn in turns:
                self.rows.append(Row(tracker, turn))
                self.rows.extend(Row(tracker, turn, change) for change in turn.files if tracker.offered(change))

    def compose(self) -> ComposeResult:
        yield Static("Files the agent changed · original → on disk now", classes="title", markup=False)
        if not self.rows:
            yield Static("No changes to review yet: files the agent changes during a turn are listed here, "
                         "with keys to revert them.", classes="empty", markup=False)
        else:
            with Horizontal():
                yield OptionList(*(self._option(index) for index in range(len(self.rows))), id="change-list")
                yield DiffView("", None, "", id="change-diff")
        yield KeysFooter()

    def on_mount(self) -> None:
        if self.rows:
            self.change_list.focus()
            first = next(i for i, row in enumerate(self.rows) if row.change is not None)
            self.change_list.highlighted = first
            self._show(first)

    # -- list ---------------------------------------------------------------------------------------

    def _option(self, index: int) -> Option:
        row = self.rows[index]
        if row.turn is None:
            label = f"Earlier session · {row.tracker.created.replace('T', ' ')}"
            return Option(Content(label), id=f"row-{index}", disabled=True)
        if row.change is None:
            count = sum(1 for change in row.turn.files if row.tracker.offered(change))
            label = f"Turn {row.turn.turn} · {_short(row.turn.prompt)} · {count} file{'' if count == 1 else 's'}"
            return Option(Content(label), id=f"row-{index}", disabled=True)
        return Option(self._file_label(row), id=f"row-{index}")

    def _file_label(self, row: Row) -> Content:
        change = row.change
        assert change is not None
        diff = FileDiff(change.path, change.original, row.tracker.current_text(change.path) or "")
        name = "  " + row.tracker.display_path(change.path) + "  "
        if not row.tracker.in_scope(change.path):
            name += "(outside the working directory: written with your approval)  "
        if not diff.hunks:
            return Content.assemble(name, ("unchanged", "dim"))  # reverted, or the agent undid it
        return Content.assemble(name, (f"+{diff.added}", self._colour("diff-added", "success")), " ",
                                (f"−{diff.removed}", self._colour("diff-removed", "error")))

    def _colour(self, name: str, fallback: str) -> str:
        variables = self.app.theme_variables
        return variables.get(name) or variables.get(fallback, "")

    @on(OptionList.OptionHighlighted, "#change-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show(event.option_index)

    @on(OptionList.OptionSelected, "#change-list")
    def _selected(self) -> None:
        self.diff_view.focus()  # Enter: read the diff (n/p move between its hunks)

    def _show(self, index: int) -> None:
        row = self.rows[index]
        if row.change is None:
            return
        change = row.change
        self.diff_view.set_diff(row.tracker.display_path(change.path), change.original,
                                row.tracker.current_text(change.path) or "")

    def _selected_row(self) -> Row | None:
        index = self.change_list.highlighted if self.rows else None
        return self.rows[index] if index is not None and self.rows[index].change is not None else None

    def _refresh(self, turn: TurnChanges) -> None:
        """After a revert: the labels of the turn's files and the diff, from the disk again."""
        for index, row in enumerate(self.rows):
            if row.turn is turn and row.change is not None:
                self.change_list.replace_option_prompt_at_index(index, self._file_label(row))
        if self.change_list.highlighted is not None:
            self._show(self.change_list.highlighted)

    # -- actions ------------------------------------------------------------------------------------

    def action_cursor(self, step: int) -> None:
        if self.rows:
            if step > 0:
                self.change_list.action_cursor_down()
            else:
                self.change_list.action_cursor_up()

    def action_revert_file(self) -> None:
        row = self._selected_row()
        if row is not None:
            assert row.turn is not None and row.change is not None
            self._revert(row, lambda: row.tracker.revert_file(row.turn.turn, row.change.path))

    def action_revert_hunk(self) -> None:
        row = self._selected_row()
        if row is None:
            return
        hunk = self.diff_view.current_hunk
        if hunk is None:
            self.notify("Nothing left to revert in this file.", timeout=3)
            return
        assert row.turn is not None and row.change is not None
        self._revert(row, lambda: row.tracker.revert_hunk(row.turn.turn, row.change.path, hunk))

    def action_revert_turn(self) -> None:
        row = self._selected_row()
        if row is None:
            return
        turn = row.turn
        assert turn is not None
        count = len(turn.files)
        question = (f"Put back the {count} file{'' if count == 1 else 's'} the agent changed in turn {turn.turn} "
                    f"(“{_short(turn.prompt)}”) as they were before it? Later edits to them are undone too.")

        def answered(yes: bool | None) -> None:
            if yes:
                self._revert(row, lambda: row.tracker.revert_turn(turn.turn))

        self.app.push_screen(ConfirmScreen(f"Revert turn {turn.turn}", question), callback=answered)

    def _revert(self, row: Row, revert) -> None:
        steps = len(row.tracker.undo_steps)
        undo = " — u to undo"
        try:
            message = revert()
        except RevertError as error:
            undoable = len(row.tracker.undo_steps) > steps  # it wrote some files before failing
            self.notify(str(error) + (undo if undoable else ""), title="Revert", severity="error", timeout=8)
        else:
            self.notify(message + (undo if len(row.tracker.undo_steps) > steps else ""), title="Revert", timeout=8)
        assert row.turn is not None
        self._refresh(row.turn)

    def action_undo_revert(self) -> None:
        """u: undo the newest revert of any tracker shown (the screen lists this session's and earlier ones)."""
        undoable = [tracker for tracker in self.trackers if tracker.undo_steps]
        if not undoable:
            self.notify("No revert to undo.", title="Undo", timeout=3)
            return
        tracker = max(undoable, key=lambda t: t.undo_steps[-1].sequence)
        try:
            message = tracker.undo_revert()
        except RevertError as error:
            self.notify(str(error), title="Undo", severity="error", timeout=8)
            return
        self.notify(message, title="Undo", timeout=5)
        for index, row in enumerate(self.rows):
            if row.tracker is tracker and row.change is not None:
                self.change_list.replace_option_prompt_at_index(index, self._file_label(row))
        if self.change_list.highlighted is not None:
            self._show(self.change_list.highlighted)

    def action_close(self) -> None:
        self.dismiss(None)
