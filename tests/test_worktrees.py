"""Sessions in git worktrees, engine side (rat_tui/session/worktrees.py): real repositories made in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.session import worktrees
from rat_tui.session.worktrees import WorktreeError

from .helpers.app import labels, until
from .helpers.git import make_repo, run_git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "project")


def test_create_makes_a_branch_and_worktree_from_the_current_commit(repo: Path, tmp_path: Path) -> None:
    head = run_git(repo, "rev-parse", "HEAD").strip()
    worktree, cwd = worktrees.create(repo / "src", tmp_path / "wts", "Demo agent")
    assert worktree.branch.startswith("rat/demo-agent-") and worktree.base == head and worktree.base_branch == "main"
    assert worktree.repo == repo and worktree.path.is_relative_to(tmp_path / "wts")
    assert cwd == worktree.path / "src" and (cwd / "app.py").read_text() == "print('one')\n"
    assert worktree.branch in run_git(repo, "branch", "--list", worktree.branch)
    assert str(worktree.path) in run_git(repo, "worktree", "list")
    # two sessions never share a directory or a branch
    second, _ = worktrees.create(repo, tmp_path / "wts", "Demo agent")
    assert second.path != worktree.path and second.branch != worktree.branch
    # from inside a worktree, the main checkout is still where merges land
    assert worktrees.main_checkout(cwd) == repo


def test_create_outside_git_or_before_any_commit_says_why(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorktreeError, match="not inside a git repository"):
        worktrees.create(plain, tmp_path / "wts", "a")
    empty = tmp_path / "empty"
    empty.mkdir()
    run_git(empty, "init", "-q")
    with pytest.raises(WorktreeError, match="no commit yet"):
        worktrees.create(empty, tmp_path / "wts", "a")


def test_changes_cover_commits_edits_deletions_and_new_files(repo: Path, tmp_path: Path) -> None:
    worktree, _ = worktrees.create(repo, tmp_path / "wts", "a")
    (worktree.path / "src" / "app.py").write_text("print('two')\n")
    run_git(worktree.path, "commit", "-q", "-am", "two")
    (worktree.path / "README.md").unlink()
    (worktree.path / "notes.txt").write_text("new\n")
    changed = {change.path: change for change in worktrees.changes(worktree)}
    assert set(changed) == {"README.md", "notes.txt", "src/app.py"}
    assert changed["src/app.py"].old_text == "print('one')\n" and changed["src/app.py"].new_text == "print('two')\n"
    assert changed["README.md"].status == "deleted" and changed["README.md"].new_text == ""
    assert changed["notes.txt"].status == "untracked" and changed["notes.txt"].old_text is None


def test_remove_refuses_to_lose_uncommitted_or_unmerged_work(repo: Path, tmp_path: Path) -> None:
    worktree, _ = worktrees.create(repo, tmp_path / "wts", "a")
    (worktree.path / "notes.txt").write_text("work in progress\n")
    assert worktrees.status(worktree).dirty
    with pytest.raises(WorktreeError, match="uncommitted changes"):
        worktrees.remove(worktree)
    assert (worktree.path / "notes.txt").exists()
    worktrees.commit_all(worktree, "notes")
    assert not worktrees.status(worktree).dirty and worktrees.status(worktree).ahead == 1
    with pytest.raises(WorktreeError, match=r"1 commit\(s\) not merged"):
        worktrees.remove(worktree)
    worktrees.remove(worktree, force=True)  # the user said so
    assert not worktree.path.exists()
    assert run_git(repo, "branch", "--list", worktree.branch) == ""


def test_an_untouched_worktree_is_removed_without_force(repo: Path, tmp_path: Path) -> None:
    worktree, _ = worktrees.create(repo, tmp_path / "wts", "a")
    worktrees.remove(worktree)
    assert not worktree.path.exists() and run_git(repo, "branch", "--list", worktree.branch) == ""
    assert not worktree.path.parent.exists()


def test_fast_forward_merge_then_remove(repo: Path, tmp_path: Path) -> None:
    worktree, _ = worktrees.create(repo, tmp_path / "wts", "a")
    (worktree.path / "src" / "app.py").write_text("print('two')\n")
    worktrees.commit_all(worktree, "two")
    assert worktrees.merge(worktree, fast_forward=True) == f"main fast-forwarded to {worktree.branch}"
    assert (repo / "src" / "app.py").read_text() == "print('two')\n"
    assert worktrees.status(worktree).ahead == 0
    worktrees.remove(worktree)
    assert not worktree.path.exists()


def test_a_fast_forward_that_cannot_be_says_so_and_a_merge_commit_does_it(repo: Path, tmp_path: Path) -> None:
    worktree, _ = worktrees.create(repo, tmp_path / "wts", "a")
    (worktree.path / "notes.txt").write_text("from the agent\n")
    worktrees.commit_all(worktree, "notes")
    (repo / "README.md").write_text("# Project, moved on\n")
    run_git(repo, "commit", "-q", "-am", "meanwhile")
    before = run_git(repo, "rev-parse", "HEAD")
    with pytest.raises(WorktreeError, match="cannot be fast-forwarded"):
        worktrees.merge(worktree, fast_forward=True)
    assert run_git(repo, "rev-parse", "HEAD") == before
    assert "merge commit" in worktrees.merge(worktree, fast_forward=False)
    assert (repo / "notes.txt").read_text() == "from the agent\n"
    assert run_git(repo, "log", "-1", "--format=%s").strip() == f"Merge branch '{worktree.branch}'"


def test_a_conflicting_merge_leaves_the_main_checkout_as_it_was(repo: Path, tmp_path: Path) -> None:
    worktree, _ = worktrees.create(repo, tmp_path / "wts", "a")
    (worktree.path / "README.md").write_text("# Agent's title\n")
    worktrees.commit_all(worktree, "title")
    (repo / "README.md").write_text("# User's title\n")
    run_git(repo, "commit", "-q", "-am", "title")
    with pytest.raises(WorktreeError, match="nothing was changed"):
        worktrees.merge(worktree, fast_forward=False)
    assert (repo / "README.md").read_text() == "# User's title\n"
    assert run_git(repo, "status", "--porcelain") == ""
    assert worktree.path.exists()  # the agent's work is still there


# -- in the app: Ctrl+N with the worktree box, the tab, and the end-of-session choice --------------------------


@pytest.mark.slow
async def test_a_session_in_a_fresh_worktree_from_ctrl_n_to_merge(repo: Path, tmp_path: Path) -> None:
    from rat_tui.agents.spec import demo_agent
    from rat_tui.app import RatApp
    from rat_tui.config import Config, WorktreesConfig
    from rat_tui.ui.screens.confirm import ConfirmScreen
    from rat_tui.ui.screens.diff_screen import DiffScreen
    from rat_tui.ui.screens.new_session import NewSessionScreen
    from rat_tui.ui.screens.worktree_end import WorktreeEndScreen
    from rat_tui.ui.widgets.diff_view import DiffView

    other = tmp_path / "elsewhere"
    other.mkdir()
    config = Config(worktrees=WorktreesConfig(dir=str(tmp_path / "wts")))
    app = RatApp(demo_agent(), repo / "src", config=config)
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "the first session")
        await app.open_session(demo_agent(), other)  # a tab of another project
        await until(pilot, lambda: app.session.state.status == "ready", "the second session")
        app.tabs.select(0)
        await pilot.press("ctrl+n")
        await until(pilot, lambda: isinstance(app.screen, NewSessionScreen), "the new-session screen")
        await pilot.press("tab", "tab", "space", "shift+tab", "enter")  # to the box, tick it, back, start
        await until(pilot, lambda: len(app.tabs.views) == 3, "the worktree tab")
        session = app.session
        worktree = app.worktree_tabs.of(session)
        assert worktree is not None and worktree.repo == repo
        assert session.cwd == worktree.path / "src"  # where the first tab was, inside the new worktree
        # Grouped after its project's tab; the branch after the badge's place (tab_bar.NO_BADGE when none). A label
        # that changes width waits QUIET_RELABEL at least (tab_bar): read at once, it was the agent's name now and
        # then (a CI run).
        await until(pilot, lambda: labels(app)[1][2:].startswith(f"⎇ {worktree.branch} · "), "the worktree tab's label")
        assert " ·  " not in labels(app)[1], labels(app)
        await until(pilot, lambda: session.state.status == "ready", "the agent in the worktree")

        (Path(session.cwd) / "app.py").write_text("print('from the worktree')\n")  # the agent's work
        await pilot.press("alt+w")  # idle: no question before the worktree's own
        await until(pilot, lambda: isinstance(app.screen, WorktreeEndScreen), "the worktree question")
        end = app.screen
        await until(pilot, lambda: end.status is not None and bool(end.query(".summary"))
                    and "uncommitted" in str(end.query_one(".summary").render()), "the worktree's state shown")
        assert end.status.dirty and "1 file with uncommitted changes" in str(end.query_one(".summary").render())

        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, DiffScreen), "the diff")
        diff = app.screen.query_one(DiffView)
        assert "from the worktree" in diff.visible_text() and [d["path"] for d in app.screen.diffs] == ["src/app.py"]
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is end, "back to the question")

        await pilot.press("r")  # remove: there is uncommitted work, so it asks
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the remove question")
        assert "lose" in app.screen.question
        await pilot.press("n")
        await until(pilot, lambda: app.screen is end, "back to the question")
        assert worktree.path.exists()

        await pilot.press("f")  # fast-forward; commit the changes first: yes
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the commit question")
        await pilot.press("y")
        await until(pilot, lambda: app.screen is not end and not isinstance(app.screen, ConfirmScreen), "the merge")
        assert (repo / "src" / "app.py").read_text() == "print('from the worktree')\n"
        assert not worktree.path.exists() and run_git(repo, "branch", "--list", worktree.branch) == ""
        assert len(app.tabs.views) == 2


@pytest.mark.slow
async def test_new_worktree_session_outside_git_says_why(tmp_path: Path) -> None:
    from rat_tui.agents.spec import demo_agent
    from rat_tui.app import RatApp

    app = RatApp(demo_agent(), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        assert await app.worktree_tabs.open(demo_agent(), tmp_path) is None
        assert len(app.tabs.views) == 1
        await until(pilot, lambda: any("not inside a git repository" in str(n.message) for n in app._notifications),
                     "the reason, in a toast")


@pytest.mark.slow
async def test_the_palette_opens_the_new_session_screen_with_the_worktree_box_ticked(repo: Path) -> None:
    from textual.widgets import Checkbox

    from rat_tui.agents.spec import demo_agent
    from rat_tui.app import RatApp
    from rat_tui.ui.screens.new_session import NewSessionScreen

    app = RatApp(demo_agent(), repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press("ctrl+p")
        await pilot.press(*"fresh worktree")

        def first_command() -> str:
            lists = app.screen.query("CommandList")
            return str(lists.first().get_option_at_index(0).prompt) if lists and lists.first().option_count else ""

        await until(pilot, lambda: "New session in a fresh worktree" in first_command(), "the command in the palette")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, NewSessionScreen), "the new-session screen")
        assert app.screen.query_one("#worktree", Checkbox).value is True


def test_a_merge_that_would_overwrite_local_changes_says_gits_reason(repo: Path, tmp_path: Path) -> None:
    worktree, _ = worktrees.create(repo, tmp_path / "wts", "a")
    (worktree.path / "README.md").write_text("# Agent's title\n")
    worktrees.commit_all(worktree, "title")
    (repo / "README.md").write_text("# The user's unsaved work\n")  # not committed in the main checkout
    with pytest.raises(WorktreeError, match="would be overwritten"):
        worktrees.merge(worktree, fast_forward=True)
    assert (repo / "README.md").read_text() == "# The user's unsaved work\n"
