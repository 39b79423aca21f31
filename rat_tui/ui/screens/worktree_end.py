"""Provides WorktreeEndScreen: a worktree session's tab was closed; keep, merge or remove its worktree.

Every git step runs in a thread (rat_tui/session/worktrees.py); a refusal from git is shown here and
the dialog stays open, so the user can pick another way. Escape keeps everything: nothing is lost.
"""

from __future__ import annotations

import logging

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from ...session import worktrees
from ...session.worktrees import Status, Worktree, WorktreeError
from .confirm import ConfirmScreen
from .dialog import Dialog

log = logging.getLogger("rat.worktrees")


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


class WorktreeEndScreen(Dialog[str | None]):
    """Dismisses with what was done ("kept", a merge, a removal): a line for a toast."""

    DEFAULT_CSS = """
    WorktreeEndScreen > Vertical {
        width: 80%; max-width: 110; height: auto; max-height: 80%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    WorktreeEndScreen .summary { margin-bottom: 1; height: auto; }
    WorktreeEndScreen OptionList { height: auto; max-height: 8; }
    WorktreeEndScreen .error { color: $text-error; height: auto; }
    WorktreeEndScreen .hint { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape,k", "choose('keep')", "Keep", id="worktree_end.keep"),
        Binding("f", "choose('ff')", "Fast-forward", id="worktree_end.fast_forward"),
        Binding("m", "choose('merge')", "Merge commit", id="worktree_end.merge"),
        Binding("r", "choose('remove')", "Remove", id="worktree_end.remove"),
        Binding("d", "choose('diff')", "Diff", id="worktree_end.diff"),
    ]

    def __init__(self, worktree: Worktree) -> None:
        super().__init__()
        self.worktree = worktree
        self.status: Status | None = None
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Session in worktree {self.worktree.branch} ended", markup=False)
            yield Static(f"{self.worktree.path}\nLooking at the worktree…", classes="summary", markup=False)
            yield OptionList(
                Option("k  Keep the worktree and its branch", id="keep"),
                Option("f  Merge: fast-forward", id="ff"),
                Option("m  Merge: with a merge commit", id="merge"),
                Option("r  Remove the worktree and its branch", id="remove"),
                Option("d  Show the diff against the base", id="diff"),
            )
            yield Static("", classes="error", markup=False)
            yield Static("↑↓ Enter or the letter · Esc keeps everything", classes="hint")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.refresh_status()

    @work(thread=True, exclusive=True, group="worktree-status")
    def refresh_status(self) -> None:
        try:
            status = worktrees.status(self.worktree)
        except WorktreeError as error:
            self.app.call_from_thread(self._error, f"git could not read the worktree: {error}")
            return
        self.app.call_from_thread(self._show_status, status)

    def _show_status(self, status: Status) -> None:
        self.status = status
        target = status.target or "the main checkout's HEAD (detached)"
        uncommitted = f"{_count(len(status.uncommitted), 'file')} with uncommitted changes" if status.dirty else "no uncommitted changes"
        base = f"{self.worktree.base_branch or 'HEAD'} @ {self.worktree.base[:8]}"
        self.query_one(".summary", Static).update(
            f"{self.worktree.path}\nbranch {self.worktree.branch}, from {base}: {_count(status.ahead, 'commit')} not in "
            f"{target}, {uncommitted}.\nA merge goes into {target} in {self.worktree.repo}."
        )
        options = self.query_one(OptionList)
        options.replace_option_prompt("ff", f"f  Merge into {target}: fast-forward")
        options.replace_option_prompt("merge", f"m  Merge into {target}: with a merge commit")

    def _error(self, text: str) -> None:
        log.warning("%s", text)
        self.busy = False
        self.query_one(".error", Static).update(text)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_choose(event.option.id or "keep")

    def action_choose(self, choice: str) -> None:
        if self.busy:
            return
        self.query_one(".error", Static).update("")
        if choice == "keep":
            self.dismiss(f"Kept the worktree {self.worktree.path} (branch {self.worktree.branch}).")
        elif choice == "diff":
            self.busy = True
            self.show_diff()
        elif self.status is None:
            self._error("Still reading the worktree's state: try again in a moment.")
        elif choice in ("ff", "merge"):
            self._merge(fast_forward=choice == "ff")
        elif choice == "remove":
            self._remove()

    # -- the diff -----------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="worktree-git")
    def show_diff(self) -> None:
        try:
            changed = worktrees.changes(self.worktree)
        except (WorktreeError, OSError) as error:
            self.app.call_from_thread(self._error, f"Could not list the changes: {error}")
            return
        self.app.call_from_thread(self._open_diff, changed)

    def _open_diff(self, changed: list[worktrees.FileChange]) -> None:
        from .diff_screen import DiffScreen

        self.busy = False
        if not changed:
            self.query_one(".error", Static).update(f"No changes against {self.worktree.base[:8]}.")
            return
        diffs = [{"path": change.path, "oldText": change.old_text, "newText": change.new_text} for change in changed]
        self.app.push_screen(DiffScreen(f"{self.worktree.branch} against {self.worktree.base[:8]}", diffs))

    # -- merge ----------------------------------------------------------------------------------------

    def _merge(self, fast_forward: bool) -> None:
        status = self.status
        assert status is not None
        if not status.dirty:
            self.busy = True
            self.run_merge(fast_forward, commit_first=False)
            return

        def answered(commit: bool | None) -> None:
            self.busy = True
            self.run_merge(fast_forward, commit_first=bool(commit))

        self.app.push_screen(ConfirmScreen(
            "Uncommitted changes",
            f"{_count(len(status.uncommitted), 'file')} in the worktree not committed yet. Commit them on "
            f"{self.worktree.branch} first, so the merge takes them? (No merges only the commits and keeps "
            "the worktree with those changes.)"), callback=answered)

    @work(thread=True, exclusive=True, group="worktree-git")
    def run_merge(self, fast_forward: bool, commit_first: bool) -> None:
        try:
            if commit_first:
                worktrees.commit_all(self.worktree, f"Work of the session in {self.worktree.branch}")
            done = worktrees.merge(self.worktree, fast_forward)
        except WorktreeError as error:
            self.app.call_from_thread(self._error, str(error))
            self.app.call_from_thread(self.refresh_status)
            return
        try:
            worktrees.remove(self.worktree)  # merged and clean: nothing to lose
            done += f"; the worktree and branch {self.worktree.branch} are removed"
        except WorktreeError as error:
            done += f"; the worktree is kept ({error})"
        self.app.call_from_thread(self.dismiss, done + ".")

    # -- remove ---------------------------------------------------------------------------------------

    def _remove(self) -> None:
        status = self.status
        assert status is not None
        if not status.dirty and not status.ahead:
            self.busy = True
            self.run_remove(force=False)
            return
        losses = []
        if status.dirty:
            losses.append(f"{_count(len(status.uncommitted), 'file')} with uncommitted changes")
        if status.ahead:
            losses.append(f"{_count(status.ahead, 'commit')} not merged into {status.target or 'HEAD'}")

        def answered(yes: bool | None) -> None:
            if yes:
                self.busy = True
                self.run_remove(force=True)

        self.app.push_screen(ConfirmScreen(
            "Remove and lose work?",
            f"{self.worktree.path} has {' and '.join(losses)}. Removing the worktree and its branch loses them "
            "for good. Remove anyway?"), callback=answered)

    @work(thread=True, exclusive=True, group="worktree-git")
    def run_remove(self, force: bool) -> None:
        try:
            worktrees.remove(self.worktree, force=force)
        except WorktreeError as error:
            self.app.call_from_thread(self._error, str(error))
            self.app.call_from_thread(self.refresh_status)
            return
        self.app.call_from_thread(
            self.dismiss, f"Removed the worktree {self.worktree.path} and its branch {self.worktree.branch}.")
