"""Provides RequestGate: every dialog an agent raises (permission, form, link, question, login) goes
through it, so that none is answered by a key typed for something else.

The rules (README "Approvals only on purpose"):
- a request opens by itself only over its own tab, when that tab shows nothing else (no other dialog
  or screen) and its composer holds no draft (the user is not typing); it then takes no key typed
  within the grace period (screens/dialog.py): such a key withdraws it and goes to the composer;
- otherwise it waits, announced: the tab badge (⚠), the status bar (`⚠ 1 request waiting · Ctrl+G`),
  the bell and a toast; Ctrl+G (`app.open_request`) jumps to its tab and opens it; the toast goes as the
  request opens, is answered or is withdrawn (the status bar says what still waits);
- one dialog at a time, first asked first shown; after an answer the next waiting request of the
  same tab opens (the user is answering requests), subject to the same rules;
- a request that arrives while a key (a click, a scroll) is on its way to the screen is decided once
  that input is handled (`protocol/priority`): a key typed before the dialog existed reaches the
  composer, whose draft then holds the request back, announced. Opened at once, the dialog was mounted,
  laid out, drawn, then withdrawn by that key: the key's echo waited for all of it (bench/stress.py's
  form, its first key: 150-190 ms).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.css.query import NoMatches

from ... import priority
from ..screens.dialog import AgentDialog, Withdrawn, send_key_to
from ..app_api import RatAppAPI
from ..toasts import Toasts
from .main_screen import MainScreen

if TYPE_CHECKING:
    from textual.app import App

    from .view import SessionView

OPEN_KEY = "ctrl+g"


@dataclass(eq=False)
class Pending:
    view: SessionView
    what: str  # "permission request", "form", "question", "login"
    make_screen: Callable[[], AgentDialog[Any]]
    future: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    held: bool = False  # waits for a deliberate key (announced)
    screen: AgentDialog[Any] | None = None


class RequestGate:
    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.pending: list[Pending] = []
        self.showing: Pending | None = None
        self.on_change: list[Callable[[], None]] = []  # the tab bar relabels its tabs
        self.toasts = Toasts(app)  # each waiting request's toast, keyed by its Pending

    # -- asking -----------------------------------------------------------------------------------

    async def ask(self, view: SessionView, what: str, make_screen: Callable[[], AgentDialog[Any]]) -> Any:
        """The dialog's answer once the user gave one on purpose; None when the request is withdrawn
        (the awaiting task cancelled: the dialog closes, or never shows)."""
        item = Pending(view, what, make_screen)
        self.pending.append(item)
        self._pump(arrived=item)
        try:
            return await item.future
        finally:
            self.toasts.withdraw(item)  # answered or withdrawn: its news is stale
            if item.screen is not None and not item.screen.dismissed:
                item.screen.dismiss(None)
            if self.showing is item:
                self.showing = None
            if item in self.pending:
                self.pending.remove(item)
            self._pump()

    def _arrived_after_input(self, item: Pending) -> None:
        if item in self.pending and not item.future.done():
            self._pump(arrived=item)

    def waiting(self, view: SessionView) -> int:
        """How many of the view's requests wait (announced or queued), the shown one excluded."""
        return sum(1 for item in self.pending if item.view is view and item is not self.showing)

    # -- opening ----------------------------------------------------------------------------------

    def _tabs(self) -> Any:
        """The app's SessionTabs; None without them: a test app, or the app shutting down, its screen's widgets
        gone (`RatApp.tabs` queries them: NoMatches). A request cancelled then still ends cleanly (`ask`)."""
        try:
            return self.app.tabs if isinstance(self.app, RatAppAPI) else None
        except NoMatches:
            return None

    def _active_view(self) -> SessionView | None:
        tabs = self._tabs()
        try:
            return tabs.active_view if tabs is not None else None
        except Exception:  # no tabs mounted (a test app, or shutting down)
            return None

    def _can_open(self, item: Pending) -> bool:
        if self.showing is not None or not item.view.is_attached:
            return False
        active = self._active_view()
        if active is not None and active is not item.view:
            return False  # a background tab never covers the current one
        if len(self.app.screen_stack) > 1:
            return False  # a dialog or a screen the user opened is on top: do not cover it
        try:
            composer = item.view.composer
        except Exception:
            return True
        return not composer.text.strip()  # a draft: the user is typing

    def _pump(self, arrived: Pending | None = None) -> None:
        if arrived is not None and self.showing is None and (wait := priority.input_wait()) > 0:
            # Decided once the input on its way is handled (see the module's docstring).
            priority.call_after_input(asyncio.get_running_loop(), wait, lambda: self._arrived_after_input(arrived))
            return
        if self.showing is None:
            for item in self.pending:
                if item.future.done():
                    continue
                if (not item.held or arrived is None) and self._can_open(item):
                    self._show(item, by_itself=True)
                    break
            if arrived is not None and self.showing is not arrived and self.showing is None:
                arrived.held = True
                self._announce(arrived)
        self._changed()

    def open_next(self) -> bool:
        """The deliberate key: jump to the first waiting request's tab (the current tab's first) and open it."""
        if self.showing is not None:
            return False
        active = self._active_view()
        waiting = [item for item in self.pending if not item.future.done()]
        item = next((i for i in waiting if i.view is active), None) or next(iter(waiting), None)
        if item is None:
            return False
        tabs = self._tabs()
        if tabs is not None and item.view is not active:
            tabs.show_view(item.view)
        self._show(item, by_itself=False)
        self._changed()
        return True

    def open_for(self, view: SessionView) -> bool:
        """The deliberate key on the fleet board: open the first request waiting in `view`'s tab, over the
        board (the board stays under it; the tab beneath is shown, for when the board closes)."""
        if self.showing is not None:
            return False
        item = next((i for i in self.pending if i.view is view and not i.future.done()), None)
        if item is None:
            return False
        tabs = self._tabs()
        if tabs is not None and item.view is not self._active_view():
            tabs.show_view(item.view)
        self._show(item, by_itself=False)
        self._changed()
        return True

    def _show(self, item: Pending, by_itself: bool) -> None:
        self.toasts.withdraw(item)  # it shows: no toast needs to say it waits
        screen = item.make_screen()
        if by_itself:
            try:
                screen.key_sink = send_key_to(item.view.composer)
            except Exception:
                pass
            screen.keys_at_push = priority.keys_arrived()  # a key typed before it shows withdraws it unseen
            beneath = self.app.screen
            screen.repaint_beneath = beneath.whole_repaint_due() if isinstance(beneath, MainScreen) else True
        item.screen, self.showing = screen, item

        def answered(result: Any) -> None:
            if self.showing is item:
                self.showing = None
            item.screen = None
            if isinstance(result, Withdrawn):
                item.held = True
                self._announce(item, withdrawn=True)
                self._changed()
            elif not item.future.done():
                item.future.set_result(result)

        self.app.push_screen(screen, callback=answered)

    # -- announcing -------------------------------------------------------------------------------

    def _announce(self, item: Pending, withdrawn: bool = False) -> None:
        """The bell and a toast: the request waits. While a key is on its way (the key that withdrew the dialog, as
        a rule) they come once it is drawn: the toast's mount lays the screen out again, and in the key's frame
        it made that frame longer (bench/stress.py `pattern`). The status bar says it at once (`_changed`)."""
        if (wait := priority.input_wait()) > 0:
            priority.call_after_input(asyncio.get_running_loop(), wait, lambda: self._announce_now(item, withdrawn))
        else:
            self._announce_now(item, withdrawn)

    def _announce_now(self, item: Pending, withdrawn: bool) -> None:
        if item.future.done() or item.screen is not None:
            return  # answered, or opened, meanwhile
        agent = item.view.session.state.agent_name
        where = ""
        tabs = self._tabs()
        if tabs is not None and item.view is not self._active_view():
            number = next((n for n, v in enumerate(tabs.views, start=1) if v is item.view), None)
            where = f" in tab {number}" if number else " in another tab"
        self.app.bell()
        key = self.key_display()
        first = "Kept your typing: " if withdrawn else ""
        self.toasts.show(f"{first}{agent} is waiting for an answer{where} ({item.what}). {key} opens it.",
                         title="Waiting for you", severity="warning", timeout=6, markup=False, key=item)

    def key_display(self) -> str:
        """The key that opens a waiting request, as the user's keymap has it."""
        for active in self.app.active_bindings.values():
            if active.binding.action in ("open_request", "app.open_request"):
                return self.app.get_key_display(active.binding)
        return self.app.get_key_display(Binding(OPEN_KEY, "open_request"))

    def _changed(self) -> None:
        tabs = self._tabs()
        try:
            views = set(tabs.views) if tabs is not None else set()
        except Exception:
            views = set()
        try:
            numbers = {view: n for n, view in enumerate(tabs.views, start=1)} if tabs is not None else {}
        except Exception:
            numbers = {}
        counts = {view: self.waiting(view) for view in views | {item.view for item in self.pending}}
        try:
            key = self.key_display()
        except Exception:  # no screen left: the app is ending, no status bar to tell
            return
        for view, count in counts.items():
            # What waits in the other tabs shows here too, so it stays in sight where the user is typing.
            others = {numbers[v]: n for v, n in counts.items() if v is not view and n and v in numbers}
            try:
                view.status_bar.set_waiting(count, key, sum(others.values()), tuple(sorted(others)))  # type: ignore[union-attr]
            except Exception:
                pass  # the view is being removed
        for callback in list(self.on_change):
            callback()
