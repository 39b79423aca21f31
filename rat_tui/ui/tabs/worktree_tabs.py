"""Provides WorktreeTabs: sessions started in a fresh git worktree, from opening to the end-of-session choice.

The app asks it to open such a session (Ctrl+N with "In a fresh git worktree", or the palette) and tells
it when a tab closes; the git work is rat_tui/session/worktrees.py, run in a thread.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import paths

if TYPE_CHECKING:
    from ...app import RatApp
    from ...session.agent_session import AgentSession
    from ...session.worktrees import Worktree

# session/worktrees.py (the git work) is imported when a worktree is first made or asked about, not at launch.

log = logging.getLogger("rat.worktrees")


class WorktreeTabs:
    def __init__(self, app: RatApp) -> None:
        self.app = app
        self._worktrees: dict[int, Worktree] = {}  # by id() of the session

    def of(self, session: AgentSession) -> Worktree | None:
        return self._worktrees.get(id(session))

    def folder(self) -> Path:
        from ...session import worktrees

        configured = self.app.config.worktrees.dir
        return Path(configured).expanduser() if configured else worktrees.default_dir(paths.data_dir())

    async def open(self, command: Any, cwd: Path) -> AgentSession | None:
        """A new branch and worktree of the repository holding `cwd`, and a tab with the agent started there,
        placed after the other tabs of the same project and labelled with the branch."""
        from ...session import worktrees
        from ...session.worktrees import WorktreeError

        name = str(getattr(command, "name", "") or "agent")
        try:
            worktree, start = await asyncio.to_thread(worktrees.create, cwd, self.folder(), name)
        except (WorktreeError, OSError) as error:
            log.warning("no worktree for %s: %s", cwd, error)
            self.app.notify(f"Could not make a worktree: {error}", title="Worktree", severity="error", timeout=10)
            return None
        log.info("worktree %s on branch %s from %s", worktree.path, worktree.branch, worktree.base)
        after = self._last_tab_of(worktree.repo)
        session = self.app.make_session(command, start)
        self._worktrees[id(session)] = worktree
        await self.app.tabs.open(session, after=after, branch=worktree.branch)
        self.app.notify(f"{name} works in {worktree.path} on the new branch {worktree.branch}.", title="Worktree",
                        timeout=6)
        return session

    def _last_tab_of(self, repo: Path) -> str | None:
        """The last tab working in `repo` (its main checkout or one of its worktrees): the new tab goes after it."""
        last = None
        for pane, view in self.app.tabs.panes_and_views():
            worktree = self.of(view.session)
            if worktree is not None and worktree.repo == repo:
                last = pane.id
            elif worktree is None and Path(view.session.cwd).resolve().is_relative_to(repo.resolve()):
                last = pane.id
        return last

    def closed(self, session: AgentSession) -> bool:
        """The tab of `session` is closed: for a worktree session, ask what becomes of the worktree (the app
        then exits if that was the last tab). False for other sessions."""
        worktree = self._worktrees.pop(id(session), None)
        if worktree is None:
            return False
        from ..screens.worktree_end import WorktreeEndScreen

        def done(outcome: str | None) -> None:
            if outcome:
                log.info("%s", outcome)
                self.app.notify(outcome, title="Worktree", timeout=8)
            if not self.app.tabs.views:
                self.app.exit()

        # After the next refresh: the screen below a modal is drawn from its last layout, which may still hold
        # the closed tab's widgets (Textual then fails on the pruned composer's styles).
        self.app.call_after_refresh(self.app.push_screen, WorktreeEndScreen(worktree), done)
        return True
