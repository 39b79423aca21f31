"""Sessions in their own git worktree: a fresh branch per agent, so parallel agents never share a working tree.

Everything goes through the `git` command itself (what the user would type, with git's own messages),
run synchronously: callers in the UI run these functions in a thread. Nothing here imports Textual.

Nothing is lost: `remove` refuses a worktree with uncommitted changes or commits the base does not have
unless told `force=True` (the UI asks first), and a merge never touches the worktree's uncommitted
changes (`commit_all` commits them when the user says so).
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

BRANCH_PREFIX = "rat/"


class WorktreeError(Exception):
    """git refused (its message, cleaned) or git is missing."""


@dataclass(frozen=True)
class Worktree:
    repo: Path
    """The main checkout of the repository the worktree was made from (where merges land)."""
    path: Path
    """The worktree's own directory, where the agent works."""
    branch: str
    """The worktree's new branch (`rat/<agent>-<4 hex>`)."""
    base: str
    """The commit the branch started from (the diff is shown against it)."""
    base_branch: str | None
    """The branch checked out in the main checkout at creation (None when detached)."""


@dataclass(frozen=True)
class FileChange:
    """One file changed in the worktree against the base: the diff viewer's input."""

    path: str
    old_text: str | None
    """The base's content; None when the file is new."""
    new_text: str
    """The worktree's content now ("" when deleted)."""
    status: str
    """"added", "deleted", "modified" or "untracked"."""


@dataclass(frozen=True)
class Status:
    """What ending the session would leave behind."""

    uncommitted: list[str]
    """`git status --porcelain` lines: changed or untracked files not committed on the branch."""
    ahead: int
    """Commits on the branch that the main checkout's current branch does not have."""
    target: str | None
    """The branch checked out in the main checkout now (where a merge lands); None when detached."""

    @property
    def dirty(self) -> bool:
        return bool(self.uncommitted)


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git; a failure raises WorktreeError with git's own message."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    try:
        result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env,
                                stdin=subprocess.DEVNULL, errors="replace", timeout=120)
    except FileNotFoundError as error:
        raise WorktreeError("git is not installed (or not on PATH)") from error
    except subprocess.TimeoutExpired as error:
        raise WorktreeError(f"git {args[0]} did not finish in 2 minutes") from error
    if check and result.returncode != 0:
        message = (result.stderr or result.stdout).strip() or f"git {args[0]} failed ({result.returncode})"
        raise WorktreeError(message)
    return result


def repository_root(path: Path) -> Path | None:
    """The top of the git checkout holding `path` (a worktree's own top for a worktree); None outside git."""
    try:
        result = git(path, "rev-parse", "--show-toplevel", check=False)
    except WorktreeError:
        return None
    return Path(result.stdout.strip()) if result.returncode == 0 and result.stdout.strip() else None


def main_checkout(path: Path) -> Path | None:
    """The main checkout of the repository holding `path` (the same for all its worktrees)."""
    try:
        result = git(path, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False)
    except WorktreeError:
        return None
    if result.returncode != 0 or not result.stdout.strip():
        return None
    common = Path(result.stdout.strip())
    return common.parent if common.name == ".git" else common


def _current_branch(repo: Path) -> str | None:
    result = git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return result.stdout.strip() or None if result.returncode == 0 else None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:24] or "agent"


def default_dir(data_dir: Path) -> Path:
    return data_dir / "worktrees"


def create(start: Path, folder: Path, agent_name: str) -> tuple[Worktree, Path]:
    """A new branch and worktree of the repository holding `start`, from its current commit.

    Returns the worktree and the directory to start the agent in: `start`'s place inside the new worktree
    (a session opened in `repo/src` starts in `<worktree>/src`).
    """
    top = repository_root(start)
    repo = main_checkout(start)
    if top is None or repo is None:
        raise WorktreeError(f"{start} is not inside a git repository")
    head = git(top, "rev-parse", "--verify", "--quiet", "HEAD", check=False).stdout.strip()
    if not head:
        raise WorktreeError(f"{repo} has no commit yet: commit something first, a worktree starts from a commit")
    base_branch = _current_branch(top)
    place = folder / f"{_slug(repo.name)}-{secrets.token_hex(3)}"
    for _ in range(5):
        branch = f"{BRANCH_PREFIX}{_slug(agent_name)}-{secrets.token_hex(2)}"
        exists = git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", check=False)
        if exists.returncode != 0:
            break
    path = place / branch.removeprefix(BRANCH_PREFIX)
    path.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "add", "-b", branch, str(path), head)
    worktree = Worktree(repo=repo, path=path, branch=branch, base=head, base_branch=base_branch)
    inside = start.resolve().relative_to(top.resolve()) if start.resolve().is_relative_to(top.resolve()) else Path()
    cwd = path / inside
    return worktree, cwd if cwd.is_dir() else path


def status(worktree: Worktree) -> Status:
    uncommitted = [line for line in git(worktree.path, "status", "--porcelain").stdout.splitlines() if line.strip()]
    target = _current_branch(worktree.repo)
    against = target or "HEAD"
    ahead = git(worktree.repo, "rev-list", "--count", f"{against}..{worktree.branch}", check=False).stdout.strip()
    return Status(uncommitted=uncommitted, ahead=int(ahead) if ahead.isdigit() else 0, target=target)


def _text(data: bytes) -> str:
    if b"\0" in data[:8192]:
        return f"(binary file, {len(data)} bytes)\n"
    return data.decode("utf-8", errors="replace")


def changes(worktree: Worktree) -> list[FileChange]:
    """Every file that differs between the base commit and the worktree as it is on disk (committed or
    not), untracked files included; sorted by path."""
    found: list[FileChange] = []
    listing = git(worktree.path, "diff", "--name-status", "--no-renames", "-z", worktree.base).stdout.split("\0")
    pairs = zip(listing[0::2], listing[1::2])
    kinds = {"A": "added", "D": "deleted", "M": "modified", "T": "modified"}
    for code, name in pairs:
        if not name:
            continue
        kind = kinds.get(code[:1], "modified")
        old = None
        if kind != "added":
            shown = subprocess.run(["git", "show", f"{worktree.base}:{name}"], cwd=worktree.path,
                                   capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
            old = _text(shown.stdout)
        file = worktree.path / name
        new = _text(file.read_bytes()) if kind != "deleted" and file.is_file() else ""
        found.append(FileChange(path=name, old_text=old, new_text=new, status=kind))
    untracked = git(worktree.path, "ls-files", "--others", "--exclude-standard", "-z").stdout.split("\0")
    for name in filter(None, untracked):
        file = worktree.path / name
        if file.is_file():
            found.append(FileChange(path=name, old_text=None, new_text=_text(file.read_bytes()), status="untracked"))
    return sorted(found, key=lambda change: change.path)


def commit_all(worktree: Worktree, message: str) -> None:
    """Commit every change in the worktree (untracked files included) on its branch."""
    git(worktree.path, "add", "--all")
    git(worktree.path, *_identity(worktree.path), "commit", "--quiet", "--no-verify", "-m", message)


def _identity(path: Path) -> list[str]:
    """A committer for git when the user has none configured (commits must not fail for it)."""
    if git(path, "config", "user.email", check=False).stdout.strip():
        return []
    return ["-c", "user.name=rat-tui", "-c", "user.email=rat-tui@localhost"]


def merge(worktree: Worktree, fast_forward: bool) -> str:
    """Merge the worktree's branch into the branch checked out in the main checkout; returns what happened.

    `fast_forward` True refuses anything but a fast-forward; False always makes a merge commit. A
    conflicting merge is aborted (the main checkout is left as it was) and raised as WorktreeError.
    """
    target = _current_branch(worktree.repo)
    if target is None:
        raise WorktreeError(f"{worktree.repo} is on a detached HEAD: check out the branch to merge into first")
    if target == worktree.branch:
        raise WorktreeError(f"{worktree.repo} has the worktree's own branch checked out")
    if fast_forward:
        result = git(worktree.repo, "merge", "--ff-only", worktree.branch, check=False)
        if result.returncode != 0:
            said = (result.stderr or result.stdout).strip() or "?"
            if "fast-forward" in said.lower():
                raise WorktreeError(f"{target} cannot be fast-forwarded to {worktree.branch} (it has commits of its "
                                    f"own): merge with a merge commit instead. git said: {said}")
            raise WorktreeError(f"fast-forwarding {target} to {worktree.branch} failed, nothing was changed: {said}")
        return f"{target} fast-forwarded to {worktree.branch}"
    message = f"Merge branch '{worktree.branch}'"
    result = git(worktree.repo, *_identity(worktree.repo), "merge", "--no-ff", "--no-edit", "-m", message, worktree.branch, check=False)
    if result.returncode != 0:
        git(worktree.repo, "merge", "--abort", check=False)
        raise WorktreeError(f"merging {worktree.branch} into {target} failed, nothing was changed: "
                            + ((result.stdout + result.stderr).strip() or "?"))
    return f"{worktree.branch} merged into {target} with a merge commit"


def remove(worktree: Worktree, force: bool = False) -> None:
    """Delete the worktree's directory and its branch.

    Without `force`, refuses (WorktreeError) when the worktree has uncommitted changes or the branch has
    commits the main checkout's branch does not have: those would be lost.
    """
    if not force:
        now = status(worktree)
        if now.dirty:
            raise WorktreeError(f"{worktree.path} has uncommitted changes ({len(now.uncommitted)} files)")
        if now.ahead:
            raise WorktreeError(f"{worktree.branch} has {now.ahead} commit(s) not merged into {now.target or 'HEAD'}")
    if worktree.path.exists():
        git(worktree.repo, "worktree", "remove", *(["--force"] if force else []), str(worktree.path))
    else:
        git(worktree.repo, "worktree", "prune")
    git(worktree.repo, "branch", "-D" if force else "-d", worktree.branch)
    try:
        worktree.path.parent.rmdir()  # the per-worktree folder, when now empty
    except OSError:
        pass
