"""Provides the reading of `agentWorktree` on `session/list` rows: sessions an agent ran in a worktree it made.

Claude (claude-agent-acp 0.101) and Codex (codex-acp 2.6) mark such rows. No recording of ours carries one, so
the reading is lenient: the mark at the row's top level or in its `_meta`; `true`, a string (the branch or the
worktree's path) or an object with `branch`, `path` or `name`. Anything else is no mark. The session browser
(Ctrl+B) groups the marked rows after the others, under the branch (or the worktree's folder name).
"""

from __future__ import annotations

import os
from typing import Any

from ..protocol.sanitize import clean


def agent_worktree(info: Any) -> str | None:
    """The label of the worktree an agent made for this session (`True`: its folder), or None."""
    if not isinstance(info, dict):
        return None
    meta = info.get("_meta") if isinstance(info.get("_meta"), dict) else {}
    mark = info.get("agentWorktree", meta.get("agentWorktree"))
    if mark is True:
        cwd = info.get("cwd")
        return clean(os.path.basename(str(cwd).rstrip("/")))[:60] if isinstance(cwd, str) and cwd else "worktree"
    if isinstance(mark, str) and mark.strip():
        return clean(mark.strip())[:60]
    if isinstance(mark, dict):
        for key in ("branch", "name", "path"):
            value = mark.get(key)
            if isinstance(value, str) and value.strip():
                value = value.strip()
                return clean(os.path.basename(value.rstrip("/")) if key == "path" else value)[:60]
        return "worktree"
    return None


def worktree_label(info: Any, rat_worktrees: str | None = None) -> str | None:
    """The agent's worktree mark, else, for a session that ran in one of rat's own worktrees (its cwd inside
    `rat_worktrees`, `[worktrees] dir`), that worktree's folder name: both kinds are grouped together."""
    label = agent_worktree(info)
    if label is not None or not rat_worktrees or not isinstance(info, dict) or not isinstance(info.get("cwd"), str):
        return label
    root = rat_worktrees.rstrip("/") + "/"
    cwd = info["cwd"]
    return clean(cwd[len(root):].split("/", 1)[0])[:60] if cwd.startswith(root) else None


def grouped(sessions: list[dict[str, Any]], rat_worktrees: str | None = None) -> list[dict[str, Any]]:
    """The rows with the worktree sessions (the agent's and rat's own) after the others, grouped by worktree
    (first seen first), each group keeping the agent's order (newest first, as listed)."""
    plain = [info for info in sessions if worktree_label(info, rat_worktrees) is None]
    groups: dict[str, list[dict[str, Any]]] = {}
    for info in sessions:
        label = worktree_label(info, rat_worktrees)
        if label is not None:
            groups.setdefault(label, []).append(info)
    return plain + [info for rows in groups.values() for info in rows]
