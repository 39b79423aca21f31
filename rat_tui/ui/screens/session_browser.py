"""Provides SessionBrowserScreen: the agent's own sessions (`session/list`), paged, filtered by directory.

Enter dismisses with the chosen SessionInfo (the app opens it in a new tab with `session/load` or
`session/resume`); `d` deletes one with `session/delete` after a confirmation, when advertised. Where the
agent advertises `sessionCapabilities.archive` (unstable, ACP 1.34), `x` archives the highlighted session
(`session/archive`: hidden from the default list, kept with its id and history) or unarchives an archived
one (`session/unarchive`; Enter on one unarchives it first, as ACP asks before a load or resume), and `h`
shows the archived ones too (`session/list` with `archived: "include"`;
each row's `archived: true` marks them).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from ...protocol.sanitize import clean
from ...session.agent_worktrees import grouped, worktree_label
from ...protocol.router import ConnectionClosed, RpcError
from .confirm import ConfirmScreen
from ..app_api import rat_app
from .dialog import Dialog

if TYPE_CHECKING:
    from ...session.agent_session import AgentSession

MORE = "more"
log = logging.getLogger("rat.sessions")


class SessionBrowserScreen(Dialog[dict[str, Any] | None]):
    """Lists one page at a time; "Load more" (or `m`) fetches the next with the agent's cursor."""

    DEFAULT_CSS = """
    SessionBrowserScreen > Vertical {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    SessionBrowserScreen .title { text-style: bold; }
    SessionBrowserScreen .filter { color: $text-muted; margin-bottom: 1; }
    SessionBrowserScreen OptionList { height: auto; max-height: 20; margin-bottom: 1; }
    SessionBrowserScreen .message { height: auto; margin-bottom: 1; }
    SessionBrowserScreen .keys { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", id="sessions.close", show=False),
        Binding("a", "toggle_all", "All directories", id="sessions.toggle_all", show=False),
        Binding("m", "load_more", "Load more", id="sessions.load_more", show=False),
        Binding("d", "delete", "Delete", id="sessions.delete", show=False),
        Binding("r", "reload", "Reload", id="sessions.reload", show=False),
        Binding("x", "archive", "Archive / unarchive", id="sessions.archive", show=False),
        Binding("h", "toggle_archived", "Show archived", id="sessions.toggle_archived", show=False),
    ]

    def __init__(self, session: AgentSession, cwd: Path) -> None:
        super().__init__()
        self.session = session
        self.cwd = Path(cwd)
        self.all_dirs = False
        self.show_archived = False
        self.sessions: list[dict[str, Any]] = []
        self.cursor: str | None = None
        self.loading = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"Sessions of {self.session.state.agent_name}", classes="title", markup=False)
            yield Static("", classes="filter", markup=False)
            yield OptionList()
            yield Static("", classes="message", markup=False)
            archive = " · x archives · h shows archived" if self.session.supports("archive") else ""
            yield Static(f"Enter opens in a new tab · d deletes{archive} · a all directories · m more · r reload · "
                         "Esc closes", classes="keys")

    @property
    def options(self) -> OptionList:
        return self.query_one(OptionList)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("archive", "toggle_archived"):
            return self.session.supports("archive")  # offered only where the agent advertises it
        return True

    def _message(self, text: str) -> None:
        self.query_one(".message", Static).update(text)

    def on_mount(self) -> None:
        self.options.focus()
        if self.session.hello is None:
            self._message("The agent has not started yet: try again when it is ready.")
            return
        if not self.session.supports("list"):
            self._message("This agent does not list its sessions (it does not advertise session/list).")
            return
        # After the first frame: filling the list within a few ms of the push left the screen blank.
        self.call_after_refresh(self.action_reload)

    # -- loading -------------------------------------------------------------------------------

    def action_reload(self) -> None:
        if not self.session.supports("list"):
            return
        self.sessions, self.cursor = [], None
        archived = " · archived shown (h hides them)" if self.show_archived else ""
        self.query_one(".filter", Static).update(
            ("All directories · a: only this one" if self.all_dirs else f"In {self.cwd} · a: all directories")
            + archived)
        self._load_page()

    def action_toggle_all(self) -> None:
        self.all_dirs = not self.all_dirs
        self.action_reload()

    def action_toggle_archived(self) -> None:
        self.show_archived = not self.show_archived
        self.action_reload()

    def action_load_more(self) -> None:
        if self.cursor and not self.loading:
            self._load_page(self.cursor)

    @work(group="session-list", exclusive=True, exit_on_error=False)
    async def _load_page(self, cursor: str | None = None) -> None:
        self.loading = True
        self._message("Loading…")
        try:
            page, next_cursor = await self.session.list_agent_sessions(None if self.all_dirs else self.cwd, cursor,
                                                                       archived=self.show_archived)
        except (RpcError, ConnectionClosed, LookupError) as error:
            self._message(f"Could not list the sessions: {error}")
            return
        finally:
            self.loading = False
        # Worktree sessions (the agent's own, `agentWorktree`, and rat's) together, after the others.
        self.sessions = grouped([*self.sessions, *page], self._rat_worktrees())
        self.cursor = next_cursor
        self._fill()
        shown = len(self.sessions)
        self._message(f"{shown} session{'' if shown == 1 else 's'}" + (" · more available" if self.cursor else "")
                      if shown else "No sessions" + ("." if self.all_dirs else " in this directory: a shows all."))

    def _rat_worktrees(self) -> str | None:
        """Where rat makes its own worktrees (`[worktrees] dir`), or None where the app has none."""
        app = rat_app(self)
        tabs = app.worktree_tabs if app is not None else None
        try:
            return str(tabs.folder()) if tabs is not None else None
        except Exception:  # no data directory: nothing of rat's to group
            return None

    def _fill(self) -> None:
        options = self.options
        highlighted = options.highlighted
        options.clear_options()
        options.add_options([Option(self._prompt(info), id=f"s{i}") for i, info in enumerate(self.sessions)])
        if self.cursor:
            options.add_option(Option(Text("Load more…", style="italic"), id=MORE))
        if options.option_count:
            options.highlighted = min(highlighted or 0, options.option_count - 1)
            options.focus()  # an empty list gives up the focus

    def _prompt(self, info: dict[str, Any]) -> Text:
        title = info.get("title") if isinstance(info.get("title"), str) and info.get("title") else "(untitled)"
        text = Text(" ".join(str(title).split())[:80], style="bold")
        if info.get("archived") is True:
            text = Text.assemble(Text("archived  ", style="italic dim"), text)
        worktree = worktree_label(info, self._rat_worktrees())
        if worktree is not None:  # a worktree the agent made for it (`agentWorktree`), or one of rat's
            text = Text.assemble(Text(f"⎇ {worktree}  ", style="dim"), text)
        updated = info.get("updatedAt")
        if isinstance(updated, str) and updated:
            text.append(f"  {updated.replace('T', ' ')[:19]}", style="dim")
        where = f"\n  {info['sessionId']}" + (f" · {info['cwd']}" if self.all_dirs or info["cwd"] != str(self.cwd) else "")
        text.append(clean(where), style="dim")
        return text

    # -- choosing ------------------------------------------------------------------------------

    def _highlighted(self) -> dict[str, Any] | None:
        index = self.options.highlighted
        return self.sessions[index] if index is not None and index < len(self.sessions) else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == MORE:
            self.action_load_more()
            return
        info = self._highlighted()
        if info is not None and info.get("archived") is True and self.session.supports("archive"):
            self._open_archived(info)  # ACP: unarchive before session/load or resume
        elif info is not None:
            self.dismiss(info)

    @work(group="session-archive", exit_on_error=False)
    async def _open_archived(self, info: dict[str, Any]) -> None:
        error = await self.session.archive_agent_session(info["sessionId"], archived=False)
        if error:
            log.warning("%s", error)
            self._message(error)
            return
        self.dismiss({**info, "archived": False})

    def action_delete(self) -> None:
        info = self._highlighted()
        if info is None:
            return
        if not self.session.supports("delete"):
            self.notify("This agent does not delete sessions (no session/delete).", severity="warning")
            return
        if info["sessionId"] == self.session.session_id:
            self.notify("That is this tab's own session: close the tab instead.", severity="warning")
            return
        title = info.get("title") or info["sessionId"]

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._delete(info)

        self.app.push_screen(ConfirmScreen("Delete session", f"Delete the agent's session {title!r}? "
                                           "The agent forgets it for good."), callback=confirmed)

    @work(group="session-delete", exit_on_error=False)
    async def _delete(self, info: dict[str, Any]) -> None:
        error = await self.session.delete_agent_session(info["sessionId"])
        if error:
            self._message(error)
            return
        if info in self.sessions:
            self.sessions.remove(info)
        self._fill()
        self._message(f"Deleted {info.get('title') or info['sessionId']}.")

    def action_archive(self) -> None:
        info = self._highlighted()
        if info is None or not self.session.supports("archive"):
            return
        if info["sessionId"] == self.session.session_id:
            # Archiving closes an active session (ACP): this tab would lose its agent session under it.
            self.notify("That is this tab's own session: close the tab first.", severity="warning")
            return
        self._archive(info, info.get("archived") is not True)

    @work(group="session-archive", exit_on_error=False)
    async def _archive(self, info: dict[str, Any], archived: bool) -> None:
        error = await self.session.archive_agent_session(info["sessionId"], archived)
        name = info.get("title") or info["sessionId"]
        if error:
            log.warning("%s", error)
            self._message(error)
            return
        index = self.sessions.index(info) if info in self.sessions else None
        if index is not None:
            if archived and not self.show_archived:
                del self.sessions[index]  # hidden, as the agent's default list now hides it
            else:
                self.sessions[index] = {**info, "archived": archived}
        self._fill()
        self._message(f"Archived {name}" + ("." if self.show_archived else " (h shows archived sessions).")
                      if archived else f"Unarchived {name}.")

    def action_close(self) -> None:
        self.dismiss(None)
