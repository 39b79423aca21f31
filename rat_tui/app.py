"""Provides RatApp: themes, keymap and the session tabs; everything else lives in its widgets."""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel

from .session.agent_session import AgentCommand, AgentSession
from .config import Config, problem_severity
from .state import reducer
from .state.models import STARTING
from .history.journal import HistoryJournal, default_path, open_journal
from .session.registry import Sessions
from .protocol.rpc_log import open_rpc_log
from .session.permission_rules_file import load_policy
from . import dataclass_cache
from . import priority
from .protocol import wire
from .themes import THEME_VARIABLE_DEFAULTS, load_themes
from .ui.app_api import RatAppAPI
from .ui.textual_ext import css_ahead
from .ui.textual_ext.driver import input_first
from .ui.textual_ext.frames import FramesMixin
from .ui.textual_ext.keys import alt_digits_as_keys
from .ui.screens.dialog import KeyGuard
from .ui.tabs.permission_queue import PermissionQueue
from .ui.tabs.request_gate import OPEN_KEY, RequestGate
from .ui.tabs.elicitation_queue import ElicitationQueue
from .ui.palette.slash_commands import SlashCommandsProvider
from .ui.tabs.main_screen import MainScreen
from .ui.tabs.tab_bar import SessionTabs
from .ui.tabs.tab_ui import TabUI
from .ui.widgets.keys_footer import KeysFooter
from .ui.loop_hop import from_any_thread
from .ui.notifications import Notifier, notify_settings
from .ui.toasts import Toasts
from .ui.tabs.worktree_tabs import WorktreeTabs
from .ui.widgets import markdown_stream

if TYPE_CHECKING:
    from .agents import registry
    from .agents.catalog import Catalog

# Screens, the palette's commands, the agent catalog and registry (urllib, http, ssl) are imported where
# they are first used, not at launch: nothing of them is in the first frame (tests/test_startup_imports.py).

log = logging.getLogger("rat.app")
# Young-generation collection threshold (CPython default 700); see RatApp.__init__. 10,000 until stop 26: a young
# collection then took 8-16 ms and a middle one up to 46 ms in the load50000 replay; at 3,000, 4 and 10 ms, for
# less work in all (each object is walked once per generation whatever the threshold).
GC_THRESHOLD = 3_000
# The middle generation is collected after every GC_MIDDLE + 1 young collections (CPython: 10): each walks
# what survived them, so this bounds it to about 3 x GC_THRESHOLD objects. The old generation's threshold
# counts middle collections: GC_OLD keeps a full collection as rare as (10_000, 20, 20) made it (one every
# 3 x GC_THRESHOLD x GC_OLD allocations).
GC_MIDDLE = 2
GC_OLD = 487
# Seconds after the first frame the warm-up waits at most for the first agent's handshake (RatApp._warm_up).
WARM_UP_WAIT = 1.0
# Seconds in all the warm-up's module imports wait at most for keys typed meanwhile (priority.imports_give_way);
# the ACP models' classes wait apart (wire.GIVE_WAY_TOTAL).
WARM_UP_GIVE_WAY = 0.5
WARM_UP_SCREENS = ("permission", "elicitation", "confirm", "ask_user", "auth", "diff_screen", "output_viewer")
_heap_frozen = False  # the heap frozen after the warm-up's imports (RatApp._warm_up)


class RatApp(FramesMixin, KeyGuard, RatAppAPI, App[None]):
    """The terminal client: sessions in tabs, one agent process each."""

    TITLE = "rat"
    # A drag scrolls the view only from its top or bottom row (Textual: 3): in the second row, a drag down to
    # select scrolled the transcript up under it and took in the lines above.
    SELECT_AUTO_SCROLL_LINES = 1
    # Toasts top right under the tab bar (two rows), never over the composer and the status bar at the bottom;
    # at most half the screen high however many there are (ui/toasts.py).
    CSS = """
    ToastRack {
        dock: top;
        align: right top;
        margin-top: 2;
        margin-bottom: 0;
        max-height: 50%;
    }
    """
    COMMANDS = App.COMMANDS | {SlashCommandsProvider}  # and get_system_commands: rat's own actions
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding(OPEN_KEY, "open_request", "Open request", id="app.open_request", priority=True, show=False,
                tooltip="Open the agent's request waiting for an answer (jumps to its tab)"),
        Binding("f1", "key_help", "Keys", id="app.help", tooltip="The keys that work where the focus is"),
        Binding("f4", "permission_rules", "Rules", id="app.permission_rules",
                tooltip="List, edit and revoke remembered permission rules"),
        Binding("ctrl+n", "new_session", "New tab", id="app.new_session", tooltip="Open a new session in a tab"),
        Binding("alt+w", "close_session", "Close tab", id="app.close_session", show=False,
                tooltip="Close the current session (asks first while its agent runs)"),
        Binding("ctrl+pagedown", "step_tab(1)", "Next tab", id="app.next_tab", show=False),
        Binding("ctrl+pageup", "step_tab(-1)", "Previous tab", id="app.previous_tab", show=False),
        Binding("ctrl+r", "history", "History", id="app.history", show=False,
                tooltip="Browse, search, export and continue past sessions"),
        *(Binding(f"alt+{n}", f"select_tab({n - 1})", f"Tab {n}", id=f"app.tab_{n}", show=False) for n in range(1, 10)),
        Binding("ctrl+b", "agent_sessions", "Sessions", id="app.agent_sessions", show=False,
                tooltip="Browse the agent's saved sessions: open one in a new tab, or delete it"),
        Binding("f12", "board", "Fleet board", id="app.board", show=False,
                tooltip="Every session, subagent, tool call and terminal at once: go there, answer, stop"),
    ]

    def __init__(
        self,
        command: AgentCommand,
        cwd: Path,
        config: Config | None = None,
        rpc_log_path: Path | None = None,
        problems: list[str] | None = None,
        config_path: Path | None = None,
    ) -> None:
        alt_digits_as_keys()  # Alt+1..9 switch tabs in tmux and terminals that send ESC+digit
        # Fewer young-generation collections: a streamed answer allocates strips and segments by the
        # thousand per frame, and the default threshold (700) ran the collector every few hundred lines.
        # The middle generation often: collected after every 21 young ones (20), it held up to 200,000
        # survivors (a `session/load` replay keeps most of what it builds) and each of its collections
        # stalled the loop 80-110 ms; after every third, 10-30 ms, for the same work in all (at 3,000, 10 ms).
        gc.set_threshold(GC_THRESHOLD, GC_MIDDLE, GC_OLD)
        self.warm_thread: threading.Thread | None = None  # _warm_up's
        self.first_frame = asyncio.Event()  # set once the first frame is drawn (_warm_up runs right after it)
        self.config_path = config_path  # where settings chosen in the UI are saved (None: not saved)
        self._saving_settings = False
        self._code_theme_pushed = False  # a Rich theme for inline code pushed on the console (light themes)
        self.config = config or Config()
        self._problems = list(problems or [])
        self._themes, theme_problems = load_themes()
        self._problems.extend(theme_problems)
        super().__init__()
        self.driver_class = input_first(self.driver_class)
        self._choose_theme()
        self.rpc_log, problem = open_rpc_log(rpc_log_path)
        self._problems.extend([problem] if problem else [])
        self.policy = load_policy()
        self._problems.extend(self.policy.problems)
        self.toasts = Toasts(self)  # every toast (notify): no duplicates, stale ones taken down
        self._loop_thread = threading.get_ident()  # the app runs where it is made (`notify`)
        self.request_gate = RequestGate(self)  # every agent-raised dialog goes through it
        self.permission_queue = PermissionQueue(self.request_gate)
        self.elicitation_queue = ElicitationQueue(self.request_gate)
        self.notifier = Notifier(self, notify_settings(self.config.notifications))
        self._agent_registry: registry.RegistrySnapshot | None = None
        self._agent_registry_stale = self._agent_registry_fetching = False
        self._statuses: dict[AgentSession, str] = {}
        self.launched = command
        self.cwd = Path(cwd)
        self.history = self._open_history()
        self.sessions = Sessions(self.config, self.policy, self.rpc_log, self.history)
        self.first_session = self.make_session(command, self.cwd)
        self.worktree_tabs = WorktreeTabs(self)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Textual's, through `Toasts`: a toast saying what one on screen says replaces it. From another thread than
        the app's, Textual's own (by message, as it promises), without that check."""
        if threading.get_ident() != self._loop_thread:
            super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)
            return
        self.toasts.show(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def make_session(self, command: AgentCommand, cwd: Path, attach_session_id: str | None = None) -> AgentSession:
        """A session in the registry, whose questions come to this app's screens (TabUI)."""
        session = self.sessions.make(command, cwd, TabUI(self), attach_session_id)
        session.models_gate = self.first_frame.wait
        self.watch_session(session)
        return session

    # -- notifications outside the app (ui/notifications.py) -----------------------------------------

    def watch_session(self, session: AgentSession) -> None:
        """Turn ends and agent exits of `session` notify (when the user is not looking) and retitle."""
        self._statuses[session] = session.state.status
        session.store.subscribe(lambda batch: self._status_seen(session))

    def _status_seen(self, session: AgentSession) -> None:
        status, before = session.state.status, self._statuses.get(session)
        if status == before:
            return
        self._statuses[session] = status
        name = session.state.agent_name
        if before == "working" and status in ("ready", "cancelled", "error"):
            self.notify_event("turn_done", session, f"Turn {'ended' if status == 'ready' else status}.")
        elif status == "exited" and session in self.sessions:
            self.notify_event("agent_exited", session, f"{name} exited.")
        self.update_title()

    def notify_event(self, event: str, session: AgentSession, text: str) -> None:
        """Tell the user outside the app about `event`, unless they are looking at `session`'s tab."""
        try:
            view = self.tabs.active_view if self.is_mounted else None
        except NoMatches:  # the app is closing (its screen is gone) as the turn ends: nobody to tell
            return
        visible = view is not None and view.session is session
        try:
            self.notifier.event(event, session.state.agent_name, text, visible)
        except Exception:  # a notification is a convenience: never let it break the session
            log.exception("notification failed")
        self.update_title()

    def update_title(self) -> None:
        waiting = sum(s.permissions.pending + s.elicitations.pending for s in self.sessions)
        self.notifier.update_title([(s.state.agent_name, s.state.status) for s in self.sessions], waiting)

    # -- history journal (rat_tui/history) ----------------------------------------------------------

    def _open_history(self) -> HistoryJournal | None:
        """Open the journal and apply the retention policy; a broken journal turns history off with a toast."""
        settings = self.config.history
        if not settings.enabled:
            return None
        journal, problem = open_journal(default_path())
        if journal is None:
            self._problems.append(problem or "History is off.")
            return None
        journal.on_problem = lambda text: self.notify(text, title="History", severity="error")  # on the loop
        try:
            removed = journal.prune(settings.retention_days, settings.max_sessions, settings.max_megabytes)
            if removed:
                log.info("history: %d old sessions pruned", removed)
        except Exception as error:  # pruning is housekeeping: never stop the app for it
            log.exception("history pruning failed")
            self._problems.append(f"Could not prune the history: {error}")
        return journal

    def on_prompt_composer_draft_changed(self, event) -> None:
        """The composer's draft goes to the journal (debounced there), so a crash or a restart keeps it."""
        from .ui.tabs.view import SessionView

        view = next((node for node in event.composer.ancestors if isinstance(node, SessionView)), None)
        journal = self.sessions.journal(view.session) if view is not None else None
        if journal is not None and event.composer is view.composer:
            journal.set_draft(event.text)

    def _restore_draft(self, session: AgentSession) -> None:
        journal = self.sessions.journal(session)
        view = next((v for v in self.tabs.views if v.session is session), None)
        if journal is not None and journal.draft and view is not None and not view.composer.text:
            view.composer.restore_draft(journal.draft)

    def action_history(self) -> None:
        if self.history is None:
            self.notify("History is off (see [history] in config.toml).", severity="warning")
            return
        from .ui.screens.history import HistoryScreen

        self.push_screen(HistoryScreen(self.history))

    def get_system_commands(self, screen):
        """Textual's own commands, then every bound action of the app and of the tab shown (with
        its key, as remapped), then the few actions without a key (ui/palette/commands.py)."""
        from .ui.palette.commands import AGENTS_HELP, bound_commands
        from .ui.tabs import controls_ui, export_ui

        yield from super().get_system_commands(screen)
        view = self.tabs.active_view if screen is self.screen_stack[0] else None
        nodes = [self] + ([view, view.transcript] if view is not None else [])
        yield from bound_commands(self, nodes)
        yield SystemCommand("Agents", AGENTS_HELP, self.action_agents)
        if view is not None and view.session.supports("logout"):
            yield SystemCommand("Log out of the agent", "Send logout to the agent", view.action_logout)
        if view is not None:  # rename and fork, where the agent offers them (ui/tabs/controls_ui.py)
            yield from controls_ui.palette_commands(view)
            yield from export_ui.palette_commands(view)  # the live session's exports, as history's e and j
        yield SystemCommand("New session in a fresh worktree",
                            "A new branch and git worktree of the repository; keep, merge or remove it at the end",
                            lambda: self.action_new_session(worktree=True))

    @property
    def tabs(self) -> SessionTabs:
        return self.query_one(SessionTabs)

    @property
    def session(self) -> AgentSession:
        """The session of the active tab."""
        view = self.tabs.active_view
        return view.session if view is not None else self.first_session

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def get_default_screen(self) -> MainScreen:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        with SessionTabs():
            yield SessionTabs.pane(self.first_session, 1)
        yield KeysFooter(focus_first=True)  # the composer's focus comes as its tab mounts

    def _choose_theme(self) -> None:
        """The configured theme, chosen before the app starts: the stylesheet is parsed once, with its
        variables (set once mounted, the theme made Textual parse every widget's CSS again: about 50 ms)."""
        for theme in self._themes:
            self.register_theme(theme)
        name = self.config.theme
        if name not in self.available_themes:
            self._problems.append(f"Unknown theme {name!r}; using the default.")
            name = "rat-dark" if "rat-dark" in self.available_themes else "textual-dark"
        self.set_reactive(App.theme, name)  # no watcher yet: it would queue that second parse
        self.stylesheet.set_variables(self.get_css_variables())  # App.__init__ took the default theme's
        dark = self.current_theme.dark  # what App._watch_theme sets besides the stylesheet
        self.set_class(True, f"-theme-{name}")
        self.set_class(dark, "-dark-mode")
        self.set_class(not dark, "-light-mode")
        self._inline_code_style()

    def on_mount(self) -> None:
        if self.config.keymap:
            from .ui.keymap import checked_keymap

            keymap, problems = checked_keymap(self.config.keymap)  # a bad key never unbinds an action
            self._problems.extend(problems)
            self.set_keymap(keymap)
            self.run_worker(self._report_unknown_keymap_ids(keymap), name="keymap-ids")
        self.notifier.save_title()
        self.update_title()
        self._saving_settings = True  # from now on a theme change is the user's choice
        for problem in self._problems:
            self.report_problem(problem)
        # The ACP models (about 0.29 s of pydantic importing and building, GIL held: wire._import_models) and
        # the code lexers after the first frame and the first agent's handshake: in a thread started
        # earlier they only slowed those down on two cores. Until its markdown is imported the transcripts show source text
        # (markdown_stream.warming).
        markdown_stream.plan_warm_up()
        self.call_after_refresh(self._warm_up)

    def _warm_up(self) -> None:
        """After the first frame: once the first session is past `starting` (or WARM_UP_WAIT later, for a
        slow agent), import the ACP models, build the markdown parsers and code lexers, then freeze the
        heap built so far, in a thread. Sessions holding updates for the ACP models import them once
        `first_frame` is set, not before (AgentSession.models_gate): the import holds the GIL about 0.3 s.

        What startup built (Textual, Rich, the models) lives as long as the app; frozen out of the
        collector, a full collection no longer walks it (each took about 50 ms during a flood: a stall
        in typing).
        """

        self.first_frame.set()
        # The collector, off since launch (__main__.stop_collector: what startup built is no garbage), stays
        # off until the warm-up has imported what it imports, then freezes that heap and comes back on (in
        # `warm`). On during the warm-up, it collected about ten times while the models' import allocated
        # (3-4 ms each, 10-20 ms every third), each a stall in keys typed through the first turn. Frozen with
        # it: the cyclic garbage of those seconds (about 6,000 objects more with a flood under way, once).
        collector_off = not gc.isenabled()

        stylesheet = self.stylesheet
        store_css = from_any_thread(lambda parsed: css_ahead.store(stylesheet, parsed))

        def warm() -> None:
            put_back = priority.imports_give_way(WARM_UP_GIVE_WAY)
            try:
                warm_imports()
            finally:
                put_back()
                global _heap_frozen
                if not _heap_frozen or collector_off:  # once a process (tests start many apps in one)
                    _heap_frozen = True
                    gc.freeze()
                if collector_off:
                    gc.enable()
                # The methods of the classes made so far (startup's and the warm-up's), for the next launch.
                dataclass_cache.save()

        def warm_imports() -> None:
            # The markdown first (about 40 ms): a prompt sent at once renders the user's message with it,
            # and the main thread importing it while this thread held the GIL for the models took 150-180 ms.
            # (A shorter switch interval while this runs was tried: keys and floods were slower.)
            markdown_stream.warm_up()
            # Rich's table of character widths, imported at the first character outside its one-cell
            # ranges (an emoji, a CJK character): 1-3 ms alone, but an import on the loop waits for the
            # GIL at each file access while this thread builds the models (seen in stall logs).
            from rich.cells import cell_len

            cell_len("\u65e5")
            # Rich's ANSI decoder, for a terminal's output (Text.from_ansi in a tool card), imported at the
            # first terminal otherwise: on the loop (found by listing the modules imported after the warm-up).
            importlib.import_module("rich.ansi")
            # The dialogs an agent opens unasked (imported on first use, not before the first frame):
            # their first one took 60-200 ms on the loop thread, a key typed meanwhile waiting. Before
            # the models (10 ms against 0.29 s): a form asked at once found its screen imported.
            screens = [importlib.import_module(f"{__package__}.ui.screens.{name}") for name in WARM_UP_SCREENS]
            # ... and their widgets' CSS, parsed at the first mount of each class else (18 ms for the form).
            try:
                store_css(css_ahead.parse_ahead(stylesheet, css_ahead.widget_classes(screens)))
            except Exception:  # (the app closed meanwhile): each class's first mount parses its CSS, as before
                log.debug("CSS not parsed ahead", exc_info=True)
            # The change tracker, imported at the first prompt's Enter (AgentSession.changes): 2.5 ms
            # alone, 29 ms in a stall log while this thread held the GIL, keys typed after Enter waiting.
            importlib.import_module(f"{__package__}.session.change_tracker")
            wire.schema(give_way=True)  # pausing while a key is on its way to the screen (wire._give_way)

        async def when_started() -> None:
            session = self.first_session
            started = asyncio.Event()
            unsubscribe = session.store.subscribe(
                lambda _batch: started.set() if session.state.status != STARTING else None)
            try:
                if session.state.status == STARTING:
                    await asyncio.wait_for(started.wait(), WARM_UP_WAIT)
            except asyncio.TimeoutError:
                pass
            finally:
                unsubscribe()
            # After the screen's next refresh (as a rule the one showing the new status): the thread holds
            # the GIL for long stretches, and started at once it delayed the `ready` on screen by up to a
            # quarter of a second.
            self.call_after_refresh(start)

        def start() -> None:
            self.warm_thread = threading.Thread(target=warm, name="warm-up", daemon=True)
            self.warm_thread.start()

        # The function, not a coroutine: an app closing before the worker starts leaves none un-awaited.
        self.run_worker(when_started, name="warm-up", exit_on_error=False)

    async def _report_unknown_keymap_ids(self, keymap: dict[str, str]) -> None:
        """Off the first frame: importing every screen to list the binding ids takes a moment."""
        from .ui.keymap import binding_ids, unknown_ids

        known = await asyncio.to_thread(binding_ids)
        for problem in unknown_ids(keymap, known):
            self.report_problem(problem)

    def report_problem(self, problem: str, title: str = "Configuration") -> None:
        """A problem with the config (or the themes, keymap, rules file) found at startup: a toast, and a
        notice kept in the first tab's transcript, which does not vanish with the toast."""
        severity = problem_severity(problem)
        log.warning("%s", problem)
        self.notify(problem, title=title, severity=severity, timeout=10)
        views = self.tabs.views if self.is_mounted else []
        session = views[0].session if views else self.first_session
        session.store.dispatch(reducer.add_notice, f"{title}: {problem}", severity)

    def save_ui_setting(self, key: str, value: object) -> None:
        """A setting chosen in the UI goes to config.toml, comments kept (ui/saved_settings.py)."""
        if self.config_path is None or not self._saving_settings:
            return
        from .ui.saved_settings import save_setting

        problem = save_setting(self.config_path, key, value)
        if problem:
            self.notify(problem, title="Settings", severity="warning", timeout=6)

    def _inline_code_style(self) -> None:
        """Rich draws Markdown's `inline code` as bold cyan on black, its own default: a black box on a light
        theme. A light theme gets its primary colour on its panel colour instead (a dark one keeps Rich's)."""
        from rich.style import Style
        from rich.theme import Theme

        if self._code_theme_pushed:
            self.console.pop_theme()
            self._code_theme_pushed = False
        theme = self.current_theme
        if not theme.dark:
            style = Style(bold=True, color=theme.primary, bgcolor=theme.panel or theme.surface or None)
            self.console.push_theme(Theme({"markdown.code": style}))
            self._code_theme_pushed = True

    def watch_theme(self, theme: str) -> None:
        self._inline_code_style()
        if self._saving_settings and theme != self.config.theme:
            self.config.theme = theme
            self.save_ui_setting("theme", theme)

    def action_key_help(self) -> None:
        """F1: the keys of the focused area, from the live bindings (ui/screens/help.py)."""
        from .ui.screens.help import HelpScreen, help_for

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
            return
        self.push_screen(help_for(self.screen))

    def action_board(self) -> None:
        """F12: the fleet board (ui/screens/board.py); pressed on the board, it closes it."""
        from .ui.screens.board import BoardScreen, seats_of

        if isinstance(self.screen, BoardScreen):
            self.screen.dismiss(None)
            return
        self.push_screen(BoardScreen(lambda: seats_of(self)))

    def action_open_request(self) -> None:
        if not self.request_gate.open_next() and self.request_gate.showing is None:
            self.notify("No request is waiting for an answer.", timeout=2)

    def action_permission_rules(self) -> None:
        from .ui.screens.permission_rules import PermissionRulesScreen

        self.push_screen(PermissionRulesScreen(self.policy))

    def action_new_session(self, worktree: bool = False) -> None:
        from .agents.spec import agent_choices
        from .ui.screens.new_session import NewSessionScreen

        choices = agent_choices(self.config, self.launched)  # type: ignore[arg-type]

        async def chosen(choice) -> None:
            if choice is not None and choice.worktree:
                await self.worktree_tabs.open(choice.agent, choice.cwd)
            elif choice is not None:
                await self.open_session(choice.agent, choice.cwd)

        self.push_screen(NewSessionScreen(choices, self.session.cwd, catalog=self.catalog, worktree=worktree),
                         callback=chosen)

    def action_agents(self) -> None:
        """The agent picker: every catalog agent and profile; the chosen one starts in a new tab."""
        from .ui.screens.agent_picker import AgentPickerScreen

        cwd = self.session.cwd

        async def chosen(spec) -> None:
            if spec is not None:
                await self.open_session(spec, cwd)

        self.push_screen(AgentPickerScreen(self.catalog()), callback=chosen)

    # -- the agent catalog and the live registry (agents/registry.py) ----------------------------------

    def catalog(self) -> Catalog:
        """The catalog over the registry as cached; a stale or missing cache is refreshed in a thread,
        and an open agent picker redrawn when it is done."""
        from .agents import registry
        from .agents.catalog import load_catalog

        settings = self.config.registry
        if not settings.enabled or os.environ.get(registry.OFF_ENV):
            return load_catalog(self.config)
        if self._agent_registry is None:
            self._agent_registry, stale = registry.current()
            self._agent_registry_stale = stale
        if self._agent_registry_stale and not self._agent_registry_fetching:
            self._agent_registry_fetching = True
            self.run_worker(self._fetch_registry, thread=True, group="registry", exit_on_error=False)
        return load_catalog(self.config, registry=self._agent_registry)

    def _fetch_registry(self) -> None:
        from .agents import registry

        snapshot = registry.refresh(self.config.registry.url)
        self.call_from_thread(self._registry_fetched, snapshot)

    def _registry_fetched(self, snapshot: registry.RegistrySnapshot) -> None:
        from .agents.catalog import load_catalog
        from .ui.screens.agent_picker import AgentPickerScreen

        self._agent_registry, self._agent_registry_stale, self._agent_registry_fetching = snapshot, False, False
        for screen in self.screen_stack:
            if isinstance(screen, AgentPickerScreen):
                screen.set_catalog(load_catalog(self.config, registry=snapshot))

    async def open_session(self, command: AgentCommand, cwd: Path, attach_session_id: str | None = None) -> AgentSession:
        """A new tab; with `attach_session_id`, reattach to that agent-side session (load or resume), or
        switch to the tab already open on it (history's continue, Ctrl+B)."""
        if attach_session_id:
            existing = self.sessions.attached_to(command, cwd, attach_session_id)
            views = self.tabs.views
            index = next((i for i, v in enumerate(views) if existing is not None and v.session is existing), None)
            if existing is not None and index is not None:
                self.tabs.show_view(views[index])
                ended = " (its agent has exited: Alt+R restarts it)" if existing.state.status == "exited" else ""
                self.notify(f"That session is already open in tab {index + 1}: switched to it{ended}.", timeout=4)
                return existing
        session = self.make_session(command, cwd, attach_session_id)
        await self.tabs.open(session)
        self._restore_draft(session)
        return session

    def action_agent_sessions(self) -> None:
        """The current tab's agent lists its sessions; the chosen one opens in a new tab (load/resume)."""
        from .ui.screens.session_browser import SessionBrowserScreen

        current = self.session

        async def chosen(info: dict | None) -> None:
            if info is None:
                return
            cwd = Path(info["cwd"])
            if not cwd.is_dir():
                self.notify(f"The session's directory does not exist here: {cwd}", severity="error")
                return
            await self.open_session(current.command, cwd, attach_session_id=info["sessionId"])

        self.push_screen(SessionBrowserScreen(current, current.cwd), callback=chosen)

    def action_close_session(self) -> None:
        from .ui.screens.confirm import ConfirmScreen

        pane = self.tabs.active_pane
        view = self.tabs.active_view
        if pane is None or view is None:
            return
        pane_id = pane.id or ""

        async def close(yes: bool | None = True) -> None:
            if not yes:
                return
            await self.tabs.close(pane_id)
            self.sessions.remove(view.session)
            # A worktree session asks what becomes of its worktree first, then exits after the last tab.
            asking = self.worktree_tabs.closed(view.session)
            if not self.tabs.views and not asking:
                self.exit()
            self.update_title()

        session = view.session
        # Ask only when closing loses something: a running turn, prompts queued behind it, a request waiting,
        # words typed and not sent. An idle tab closes at once; its history keeps the session (Ctrl+R).
        losing = [what for what, lost in (
            ("a turn is running", session.state.status == "working" or session.busy),
            (f"{len(session.prompts.queue)} queued prompt(s)", bool(session.prompts.queue)),
            (f"{self.request_gate.waiting(view)} request(s) waiting", bool(self.request_gate.waiting(view))),
            ("the composer holds unsent text", bool(view.composer.text.strip())),
        ) if lost]
        if not losing or session.state.status in ("exited", "error"):
            self.call_later(close)
            return
        self.push_screen(
            ConfirmScreen("Close session", f"Stop {session.state.agent_name} and close this tab? "
                          f"({'; '.join(losing)})"), callback=close
        )

    async def action_quit(self) -> None:
        """Ctrl+Q: asks first while a turn runs in any tab (as Alt+W does for one)."""
        from .ui.screens.confirm import ConfirmScreen

        running = [s.state.agent_name for s in self.sessions if s.state.status == "working"]
        shells = [s.state.shell_running for s in self.sessions if s.state.shell_running is not None]  # `!commands`
        if not (running or shells) or isinstance(self.screen, ConfirmScreen):
            self.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        names = ", ".join(dict.fromkeys(running))
        what = f"A turn is running ({names})" if running else f"A shell command is running (! {shells[0][:40]})"
        self.push_screen(ConfirmScreen("Quit", f"{what}. Stop it and quit?"), callback=answered)

    def action_select_tab(self, index: int) -> None:
        self.tabs.select(index)

    def action_step_tab(self, delta: int) -> None:
        self.tabs.step(delta)

    async def on_unmount(self) -> None:
        self.notifier.restore_title()
        if self.warm_thread is None:  # closed before the warm-up began: the loop imports markdown itself
            markdown_stream.plan_warm_up(False)
        # Every agent process ends with the app (the views may already be gone at this point).
        log.info("quitting: stopping every agent")
        await self.sessions.stop_all()
        if self.rpc_log:
            self.rpc_log.close()
        if self.history is not None:
            self.history.close()
