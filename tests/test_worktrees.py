"""Sessions in git worktrees, engine side (rat_tui/session/worktrees.py): real repositories made in the test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rat_tui.session import worktrees
from rat_tui.session.worktrees import WorktreeError

ENV_GIT = ["-c", "user.name=Test", "-c", "user.email=test@example.org", "-c", "init.defaultBranch=main"]


def run_git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *ENV_GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    run_git(path, "init", "-q")
    (path / "src").mkdir()
    (path / "README.md").write_text("# Project\n")
    (path / "src" / "app.py").write_text("print('one')\n")
    run_git(path, "add", "-A")
    run_git(path, "commit", "-q", "-m", "first")
    return path


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
    with pytest.raises(WorktreeError, match="1 commits not merged"):
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
