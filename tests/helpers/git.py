"""Real git repositories made in a test."""

from __future__ import annotations

import subprocess
from pathlib import Path

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
