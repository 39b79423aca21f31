"""Provides SessionView: one session's transcript, composer and status bar, fed by its store."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Iterator

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.worker import Worker, WorkerState

from ... import priority
from ...agents.spec import AgentSpec, spec_label
from ...session import controls as session_controls
from . import children_ui, controls_ui, focus_keys, shell_ui
from .tab_ui import TabUI
from ...session.agent_session import AgentSession
from ...state import reducer
from ...state.models import (
    CANCELLED,
    ERROR,
    READY,
    Change,
    EntryAdded,
    EntryChanged,
    FieldChanged,
    GenericEntry,
    MessageEntry,
    NoticeEntry,
    ReaderIdle,
    TextAppended,
    ToolCallEntry,
)
from ..loop_hop import from_any_thread
from ..widgets.file_preview import FilePreview
from ..widgets.image_view import show_nearest_image, show_new_image
from ..widgets.plan_panel import PlanPanel
from .prompt_flow import PromptFlow
from .search import SearchBar
from ..widgets.prompt import PromptComposer
from ..widgets.prompt_history import PromptHistory, history_file
from ..widgets.prompt_queue import PromptQueueView
from ..widgets.status_bar import StatusBar
from ..widgets.tool_call import LazyCard, render_tool_call
from ..widgets.transcript import Transcript
from ..widgets.welcome import Welcome
from ..textual_ext.widgets import going
from ..app_api import rat_app

log = logging.getLogger("rat.ui")
CARD_COLOURS = ("tool-pending", "tool-running", "tool-completed", "tool-failed", "diff-added", "diff-removed")

# A delivery of more changes than this is handled a slice at a time (_drain): this many, then more while they
# take less than SLICE_SECONDS and no key is on its way.
CHANGES_SLICE = 64
SLICE_SECONDS = 0.008


class SessionView(Vertical):
    """Widgets subscribe to the session's store on mount; the agent runs in this view's worker."""

    _images_seen = 0  # the agent's images already handled (a new one opens in the preview: image_view.py)

    DEFAULT_CSS = """
    SessionView {
        height: 1fr;
    }
    SessionView > #session-row {  /* (not every Horizontal: the search bar is one, of one row) */
        height: 1fr;
    }
    """

    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel turn", id="session.cancel",
                tooltip="Interrupt the running !command (twice: kill it), else cancel the running turn"),
        Binding("ctrl+t", "toggle_focus", "Transcript/prompt", id="session.toggle_focus", show=False,
                tooltip="Move the focus between the transcript (tool-call keys) and the prompt"),
        Binding("f2", "toggle_plan", "Plan", id="session.toggle_plan", tooltip="Show or hide the plan"),
        Binding("y", "copy_block", "Copy block", id="session.copy_block", show=False,
                tooltip="Copy the block under the cursor (an answer, a code block, a tool call's output, a diff) (transcript focused)"),
        Binding("ctrl+f", "search", "Search", id="session.search", show=False,
                tooltip="Search the transcript, collapsed thoughts and tool output included"),
        Binding("x", "toggle_tool_call", "Expand tool", id="session.toggle_tool_call", show=False,
                tooltip="Expand or collapse the tool call nearest the bottom of the view (transcript focused)"),
        Binding("s", "open_child", "Subagent", id="session.open_child", show=False,
                tooltip="Open the nearest subagent's session full screen (transcript focused)"),
        Binding("k", "cancel_child", "Cancel subagent", id="session.cancel_child", show=False,
                tooltip="Cancel the nearest subagent, when the agent allows it (transcript focused)"),
        Binding("K", "cancel_children", "Cancel subagents", id="session.cancel_children", show=False,
                tooltip="Cancel every running subagent that the agent allows to cancel (transcript focused)"),
        Binding("S", "stop_task", "Stop command", id="session.stop_task", show=False,
                tooltip="Stop the nearest running command (its terminal), the turn going on (transcript focused)"),
        Binding("d", "open_diff", "Diff", id="session.open_diff", show=False,
                tooltip="Open the diff of the nearest tool call that carries one (transcript focused)"),
        Binding("i", "show_image", "Image", id="session.show_image", show=False,
                tooltip="Show the nearest image the agent sent in the preview pane"),
        Binding("v", "view_output", "View output", id="session.view_output", show=False,
                tooltip="The nearest tool call's whole output, terminal output and raw input/output, "
                        "full screen and searchable (transcript focused)"),
        Binding("a", "attach_shell", "Attach shell card", id="session.attach_shell", show=False,
                tooltip="Attach the nearest shell card (a !command and its output) to the next prompt "
                        "(transcript focused)"),
        Binding("o", "open_location", "Open file", id="session.open_location", show=False,
                tooltip="Preview the file of the nearest tool call at its line (transcript focused)"),
        Binding("f5", "toggle_follow", "Follow", id="session.toggle_follow",
                tooltip="Follow the agent: preview each file a tool call touches"),
        Binding("f6", "toggle_preview", "Preview", id="session.toggle_preview", show=False,
                tooltip="Show or hide the file preview"),
        Binding("f7", "session_options", "Options", id="session.options",
                tooltip="Mode, model and the agent's other session options"),
        Binding("f9", "cycle_mode", "Mode", id="session.cycle_mode", show=False,
                tooltip="Switch to the agent's next mode"),
        Binding("f10,ctrl+o", "pick_model", "Model", id="session.pick_model", show=False,
                tooltip="Pick the agent's model"),
        Binding("f3", "review_changes", "Changes", id="session.review_changes",
                tooltip="Review and revert the files the agent changed, turn by turn"),
        Binding("f8", "show_traffic", "Traffic", id="session.traffic", show=False,
                tooltip="Inspect the JSON-RPC messages between rat and the agent"),
        Binding("alt+m", "show_mcp_servers", "MCP servers", id="session.mcp_servers", show=False,
                tooltip="The MCP servers passed to the agent, and those skipped and why"),
        Binding("ctrl+s", "send_now", "Send now", id="session.send_now", show=False,
                tooltip="Send the prompt (or the next queued one) now, cancelling the running turn first"),
        Binding("alt+s", "steer", "Steer", id="session.steer", show=False,
                tooltip="Send the prompt into the running turn without cancelling it, where the agent allows it "
                        "(else queue it)"),
        Binding("alt+up", "queue_edit", "Edit queued", id="session.queue_edit", show=False,
                tooltip="Load the last queued prompt back into the composer"),
        # Priority, and only while prompts are queued: the composer's own Alt+Delete deletes a word otherwise.
        Binding("alt+delete", "queue_remove", "Remove queued", id="session.queue_remove", show=False, priority=True,
                tooltip="Remove the last queued prompt"),
        Binding("alt+r", "restart_agent", "Restart agent", id="session.restart", show=False,
                tooltip="Start a new agent process for this tab; the transcript and the draft stay"),
        Binding("alt+l", "authenticate", "Log in", id="session.auth", show=False,
                tooltip="Pick one of the agent's login methods"),
    ]

    def __init__(self, session: AgentSession, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session
        self._unsubscribe = lambda: None
        self.flow = PromptFlow(self)
        self.navigation = focus_keys.Navigation(self)
        # Hidden until used, and mounted then (not styled for the first frame): the plan panel, the search
        # bar and the queued prompts, in that order above the composer (`plan_panel`, `action_search`,
        # `queue_view`).
        self._plan_panel: PlanPanel | None = None
        self._plan_behind = False  # a replay's plan not drawn yet: drawn once the replay is over (_on_changes)
        self._backlog: deque[Change] = deque()  # a big delivery's changes not handled yet (_drain)
        self._queue_view: PromptQueueView | None = None
        self._row = Horizontal(id="session-row")
        # Kept, not queried: a card with a location asks for it as each update comes (`_follow_along`).
        self._preview = FilePreview()
        self._card_colours: tuple[object, dict[str, str]] | None = None  # (theme variables, the cards' colours)
        self._welcome: Welcome | None = None  # an empty session's first words, until its first entry

    def compose(self) -> ComposeResult:
        if not self.session.state.entries:
            command = self.session.command
            is_demo = bool(getattr(command, "is_demo", False))
            name = "The demo agent" if is_demo else spec_label(command) if isinstance(command, AgentSpec) \
                else str(getattr(command, "name", "The agent"))
            self._welcome = Welcome(name, is_demo)
            yield self._welcome
        with self._row:
            yield Transcript()
            yield self._preview
        yield PromptComposer(id="composer")
        yield StatusBar()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def composer(self) -> PromptComposer:
        return self.query_one(PromptComposer)

    @property
    def queue_view(self) -> PromptQueueView:
        """Mounted when first asked for (above the composer)."""
        if self._queue_view is None:
            self._queue_view = PromptQueueView(self.flow.queue)
            self.mount(self._queue_view, before=self.composer)
        return self._queue_view

    @property
    def queue_view_mounted(self) -> bool:
        return self._queue_view is not None

    @property
    def status_bar(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def plan_panel(self) -> PlanPanel:
        """Mounted when first asked for (under the transcript), hidden if the saved choice (F2) says so."""
        if self._plan_panel is None:
            self._plan_panel = PlanPanel()
            app = rat_app(self)
            if app is not None:
                self._plan_panel.set_class(not app.config.plan_panel, "-hidden")
            self.mount(self._plan_panel, after=self._row)
        return self._plan_panel

    @property
    def preview(self) -> FilePreview:
        return self._preview

    def on_mount(self) -> None:
        store = self.session.store
        store.flush()  # pending appends are already in the entries' text shown below
        for entry in store.state.entries:  # anything already in the store (a restored session)
            self._add_entry(entry, entry.text if isinstance(entry, MessageEntry) else "")
        self._unsubscribe = store.subscribe(self._on_changes)
        self.transcript.pacer.follow(self.session.reader_activity)
        self.status_bar.show(store.state)
        if store.state.plan or store.state.plans:
            self.plan_panel.show_plan(store.state.plan, store.state.plans)
        self.composer.set_commands(list(store.state.commands))
        self.flow.mount()
        app = rat_app(self)
        if app is not None:  # the choice saved from F5
            self.preview.follow = app.config.follow
        host = self.session.remote_host
        if host is not None and self.session.remote is not None and not self.session.remote.local_files:
            from ...session.remote_side import reported_text  # the agent's files are on its machine

            self.preview.remote = (host, lambda path: reported_text(self.session.state, path))
        self.composer.prompt_history = PromptHistory(history_file(self.session.cwd))
        shell_ui.mount(self)
        if isinstance(self.session.ui, TabUI):  # the app's sessions; a replay's is headless
            self.session.ui.bind(self)
        # Focused now, not a message later: the footer learns the composer's keys before the first frame
        # (ui/widgets/keys_footer.py), not as the user types the first key.
        self.screen.set_focus(self.composer)
        self._run_agent()

    def on_unmount(self) -> None:
        self._unsubscribe()
        self.flow.unmount()

    @work(group="agent", exit_on_error=False, name="agent session")
    async def _run_agent(self) -> None:
        await self.session.run()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "agent" and event.state == WorkerState.ERROR:
            error = event.worker.error
            log.error("agent session failed", exc_info=error)
            self.session.store.dispatch(reducer.add_notice, f"Internal error in the session: {error!r}", "error")
            self.session.store.dispatch(reducer.set_status, "error", str(error))

    # -- store -> widgets -----------------------------------------------------------------------

    def _on_changes(self, batch: list[Change]) -> None:
        if going(self) or not self.is_attached:
            return  # the tab is being closed (or the app quitting): its widgets are going or gone
        backlog = self._backlog
        if backlog:
            backlog.extend(batch)  # after what an earlier delivery left for the next turn of the loop
            return
        if len(batch) < CHANGES_SLICE:
            self._apply_changes(iter(batch))
            return
        backlog.extend(batch)
        self._drain()

    def _drain(self) -> None:
        """A big delivery (a replay's, a flood of tool calls) a slice at a time: CHANGES_SLICE changes, and more
        while they take less than SLICE_SECONDS and no key is on its way; the rest at the next turn of the loop.
        Handled at once, each of a load50000 replay's deliveries was a stall for any key typed."""
        backlog = self._backlog
        if going(self) or not self.is_attached:
            backlog.clear()
            return
        started = time.perf_counter()

        def slice_of_changes():
            while backlog:
                for _ in range(min(CHANGES_SLICE, len(backlog))):
                    yield backlog.popleft()
                if time.perf_counter() - started > SLICE_SECONDS or priority.input_wait():
                    return

        self._apply_changes(slice_of_changes())
        if backlog:  # (one drain is scheduled at a time: a delivery meanwhile only queues behind, _on_changes)
            priority.Later(asyncio.get_running_loop(), 0.0, self._drain)  # (after a key on its way is drawn)

    def _apply_changes(self, batch: Iterator[Change]) -> None:
        transcript = self.transcript
        status_dirty = plan_dirty = False
        cards: dict[str, None] = {}  # each changed card drawn once per batch, however many updates it had
        added: set[str] = set()  # drawn from their state after this batch's updates: not again as changed
        for change in batch:
            if isinstance(change, TextAppended):
                transcript.append_text(change.key, change.text)
            elif isinstance(change, EntryAdded):
                entry = change.entry
                plan_dirty = self._plan_turns(entry) or plan_dirty
                # Later chunks of this batch follow as TextAppended: start from the first part only.
                first = entry.parts[0] if isinstance(entry, MessageEntry) and entry.parts else ""
                self._add_entry(entry, first, transcript)
                added.add(entry.key)
                if reducer.is_agent_notice(entry):
                    self._toast(entry)  # type: ignore[arg-type]
            elif isinstance(change, EntryChanged):
                cards[change.key] = None
            elif isinstance(change, ReaderIdle):
                transcript.reader_idle()  # (last in its batch: after the text it hurries)
            elif isinstance(change, FieldChanged):
                status_dirty = True
                if change.name == "plan":
                    self.plan_panel.plan_changed()
                    plan_dirty = True
                if change.name == "commands":
                    self.composer.set_commands(list(self.session.state.commands))
                elif change.name == "suggestions":
                    self.composer.offer_suggestion(self.session.state.suggestions)
                elif change.name == "shell":
                    self.refresh_bindings()  # Esc interrupts a `!command` only while one runs (check_action)
                elif change.name == "status":
                    self.flow.status_changed()
                    self.refresh_bindings()  # Esc cancels a turn only while one runs (check_action)
                    if self._welcome is not None:
                        self._welcome.status(self.session.state.status, self.session.state.agent_name)
                    if self.session.state.status in (READY, CANCELLED, ERROR):  # (a turn over ends its burst)
                        self.session.reader_activity.turn_over()
        for key in cards:
            if key in added:
                continue  # (a tool call and its first update in one batch: one card, not two)
            entry = self.session.state.by_key.get(key)
            if isinstance(entry, ToolCallEntry):
                transcript.set_renderable(entry.key, self._card(entry))
                self._follow_along(entry)
            else:  # subagent cards and compaction markers
                children_ui.draw(self, entry, transcript)
        if plan_dirty or self._plan_behind:
            if self.session.opener.replay is not None:
                # A session/load's replay: its plans are history, the panel shows where they ended. Drawn at each
                # delivery, a plan folded and unfolded turn by turn laid the whole screen out (ten times in
                # the load50000 replay of bench/stress.py), each a stall for a key typed meanwhile.
                self._plan_behind = True
            else:
                self._plan_behind = False
                self.plan_panel.show_plan(self.session.state.plan, self.session.state.plans)
        if len(self.session.state.images) != self._images_seen:
            self._images_seen = show_new_image(self.preview, self.session.state.images, self._images_seen)
        if status_dirty:
            self.status_bar.show(self.session.state)

    def _plan_turns(self, entry: object) -> bool:
        """A prompt starts a turn; the agent's first answer in it, with no plan sent before, leaves the
        plan shown to an earlier turn (the panel folds it). True when the panel must be drawn again.

        With no panel yet (no plan came), there is nothing to fold: the panel is not mounted for it (it was at
        every first prompt, a mount and a layout of the screen as the answer began)."""
        panel = self._plan_panel
        if panel is None:
            return False
        if isinstance(entry, MessageEntry) and entry.role == "user":
            panel.turn_started()
        elif isinstance(entry, (MessageEntry, ToolCallEntry)):
            return panel.agent_answered()
        return False

    def _add_entry(self, entry: object, text: str, transcript: Transcript | None = None) -> None:
        # The caller's transcript: a 5,000-entry session/load replay would otherwise query for it each time.
        transcript = transcript or self.transcript
        if self._welcome is not None:  # the session has begun: its first words go
            self._welcome.remove()
            self._welcome = None
        if isinstance(entry, MessageEntry):
            if entry.attachments:  # the user's prompt: its attachments as chips under the text
                text += "\n\n" + "  ".join(f"`{chip}`" for chip in entry.attachments)
            transcript.add_entry(entry.key, entry.role, text)
        elif isinstance(entry, ToolCallEntry):
            transcript.set_renderable(entry.key, self._card(entry))
            self._follow_along(entry)
        elif isinstance(entry, NoticeEntry):
            transcript.add_entry(entry.key, "notice", entry.text, title=entry.severity)
        elif children_ui.draw(self, entry, transcript):
            pass
        elif isinstance(entry, GenericEntry):
            title = f"{entry.kind}" + (f" — {entry.problem}" if entry.problem else "")
            transcript.add_entry(entry.key, "generic", json.dumps(entry.raw, indent=2, ensure_ascii=False), title=title)

    def _toast(self, notice: NoticeEntry) -> None:
        """An agent's `notice` update is advisory and live: a toast as well as its transcript line."""
        title, _, description = notice.text.partition("\n")
        severity = {"warning": "warning", "error": "error"}.get(notice.severity, "information")
        self.notify(description or title, title=f"{self.session.state.agent_name}: {title}" if description
                    else self.session.state.agent_name, severity=severity, timeout=8, markup=False)

    def _card(self, call: ToolCallEntry):
        variables = self.app.theme_variables
        if self._card_colours is None or self._card_colours[0] is not variables:
            self._card_colours = (variables, {name: variables.get(name, "") for name in CARD_COLOURS})
        colours = self._card_colours[1]
        key, terminals = call.key, self.session.state.terminals
        # Built when first drawn; a big diff is computed off the loop and the card drawn again once it is ready.
        redraw = from_any_thread(lambda: self._redraw_card(key))
        return LazyCard(lambda: render_tool_call(call, terminals, colours, redraw))

    def _redraw_card(self, key: str) -> None:
        entry = self.session.state.by_key.get(key)
        if self.is_attached and isinstance(entry, ToolCallEntry):
            self.transcript.set_renderable(key, self._card(entry))

    def _follow_along(self, call: ToolCallEntry) -> None:
        preview = self.preview
        if preview.follow and call.locations:
            location = call.locations[0]
            target = (str(location.get("path", "")), location.get("line"))
            if target != (str(preview.path or ""), preview.line):
                preview.show(*target)

    def _nearest_tool_call(self, with_diff: bool = False, with_location: bool = False) -> ToolCallEntry | None:
        calls = {
            call.key: call
            for call in self.session.state.tool_calls.values()
            if (not with_diff or any(item.get("type") == "diff" for item in call.content))
            and (not with_location or call.locations)
        }
        cursor = self.transcript.cursor_key if self.transcript.has_focus else None
        if cursor in calls:
            return calls[cursor]  # the block under the cursor (n/p)
        key = self.transcript.nearest_key(calls)
        return calls.get(key) if key else None

    # -- user actions ---------------------------------------------------------------------------

    def action_toggle_tool_call(self) -> None:
        children_ui.toggle_nearest(self)  # a tool call, a subagent's card or a compaction marker

    @on(Transcript.CardClicked)
    def _card_clicked(self, event: Transcript.CardClicked) -> None:
        children_ui.toggle(self, event.key)  # a click on a card's header expands or collapses it

    def action_open_child(self) -> None:
        children_ui.open_child(self)

    async def action_cancel_child(self) -> None:
        await children_ui.cancel_nearest(self)

    async def action_cancel_children(self) -> None:
        await children_ui.cancel_all(self)

    async def action_stop_task(self) -> None:
        from .stop_ui import stop_nearest

        await stop_nearest(self)

    def action_show_image(self) -> None:
        show_nearest_image(self.preview, self.transcript, self.session.state.images)

    def action_steer(self) -> None:
        controls_ui.steer(self)

    def action_rename_session(self) -> None:
        controls_ui.rename(self)

    def action_fork_session(self) -> None:
        controls_ui.fork(self)

    def action_open_diff(self) -> None:
        call = self._nearest_tool_call(with_diff=True)
        if call is None:
            self.notify("No diff to show.", timeout=2)
            return
        from ..screens.diff_screen import DiffScreen

        diffs = [item for item in call.content if item.get("type") == "diff"]
        self.app.push_screen(DiffScreen(call.title, diffs))

    def action_copy_block(self) -> None:
        """y: the block under the cursor (else the last answer) to the clipboard: an answer's markdown,
        a fenced code block's source (the cursor stepped into it), a tool call's whole output, its diffs as a
        unified diff."""
        transcript = self.transcript
        code = transcript.cursor_code_block()  # the cursor on one fenced code block: its source, no fences
        if code is not None:
            span, number, count = code
            self.app.copy_to_clipboard(span.text)
            lines = len(span.text.splitlines())
            self.notify(f"Copied code block {number} of {count}{f' ({span.lang})' if span.lang else ''}: "
                        f"{lines} line{'' if lines == 1 else 's'}.", timeout=2)
            return
        key = transcript.cursor_key or transcript.nearest_key(
            {e.key for e in self.session.state.entries if isinstance(e, MessageEntry) and e.role == "agent"})
        if key is None:
            self.notify("Nothing to copy.", timeout=2)
            return
        call = next((c for c in self.session.state.tool_calls.values() if c.key == key), None)
        if call is not None:
            from ..screens.output_viewer import output_text

            diffs = [item for item in call.content if item.get("type") == "diff"]
            if diffs:
                self._copy_diffs(diffs)
                return
            text = output_text(call, self.session.state.terminals)
        else:
            text = transcript.entry_source(key)
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {len(text.splitlines())} line(s).", timeout=2)

    def _copy_diffs(self, diffs: list[dict]) -> None:
        """A tool call's diffs as one unified diff (a patch to paste), computed off the UI thread: a
        20,000-line file's diff takes a while."""
        from ...history.markdown import unified_diff

        def build() -> None:
            patch = "\n".join(unified_diff(item) for item in diffs) + "\n"
            self.app.call_from_thread(done, patch)

        def done(patch: str) -> None:
            self.app.copy_to_clipboard(patch)
            files = len(diffs)
            self.notify(f"Copied the diff of {files} file{'' if files == 1 else 's'} "
                        f"({len(patch.splitlines())} lines, unified).", timeout=2)

        self.run_worker(build, thread=True, name="copy-diff", exclusive=False)

    async def action_search(self) -> None:
        bar = next(iter(self.query(SearchBar)), None)
        if bar is None:  # hidden until used: not mounted (nor styled) for the first frame
            bar = SearchBar()
            await self.mount(bar, before=self._queue_view or self.composer)
        bar.open()

    def action_view_output(self) -> None:
        call = self._nearest_tool_call()
        if call is None:
            self.notify("No tool call to show.", timeout=2)
            return
        from ..screens.output_viewer import OutputViewer, output_text, tail_first

        self.app.push_screen(OutputViewer(call.title, output_text(call, self.session.state.terminals),
                                          at_end=tail_first(call)))

    @on(PromptComposer.Submitted)
    def _submit(self, event: PromptComposer.Submitted) -> None:
        self.composer.remember(event.text)  # ↑ brings it back, after a restart too
        if shell_ui.submit(self, event.text):
            return  # `!command`: the tab's own shell, not the agent
        self.flow.submit(event.text)  # sends, or queues while a turn runs (prompt_flow.py)
        self.transcript.action_scroll_end()  # the question and its answer in sight

    def on_key(self, event: events.Key) -> None:
        """A printable key typed outside a text field goes to the composer, but in navigation mode."""
        if self.navigation.escape(event) or focus_keys.redirect_to_composer(self, event):
            event.stop()
            event.prevent_default()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.navigation.focused(event)

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self.navigation.blurred(event)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self.navigation.clicked(event)

    @on(PromptComposer.SendNext)
    def _send_next(self) -> None:
        self.flow.send_next()

    async def action_cancel_turn(self) -> None:
        if shell_ui.escape(self):
            return  # a running `!command` first
        if self.session.stalled_requests and await self.session.cancel_stalled():
            return  # Esc first gives up on requests reported as unanswered ($/cancel_request)
        await self.flow.escape()

    def action_send_now(self) -> None:
        self.flow.send_now()

    def action_queue_edit(self) -> None:
        self.flow.edit()

    def action_queue_remove(self) -> None:
        self.flow.remove()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "queue_remove" and not self.flow.queue:
            return False  # let Alt+Delete reach the composer
        if action == "cancel_turn":  # the footer offers "Cancel turn" only while there is one to cancel
            return self.session.busy or bool(self.session.stalled_requests) or self.session.shell.running  # or a `!command`
        return True

    @on(PromptQueueView.Edit)
    def _edit_queued(self, event: PromptQueueView.Edit) -> None:
        self.flow.edit(event.index)

    @on(PromptQueueView.Remove)
    def _remove_queued(self, event: PromptQueueView.Remove) -> None:
        self.flow.remove(event.index)

    @on(PromptQueueView.Leave)
    def _leave_queue(self) -> None:
        self.composer.focus()

    def action_restart_agent(self) -> None:
        from . import lifecycle_actions  # with the auth screen: not needed for the first frame

        lifecycle_actions.restart_agent(self)

    def action_authenticate(self) -> None:
        from . import lifecycle_actions

        lifecycle_actions.show_auth_picker(self)

    def action_logout(self) -> None:
        async def logout() -> None:
            error = await self.session.logout()
            if error:
                self.notify(error, severity="warning")

        self.run_worker(logout(), group="auth", exit_on_error=False)

    def action_attach_shell(self) -> None:
        shell_ui.attach(self)

    def action_open_location(self) -> None:
        call = self._nearest_tool_call(with_location=True)
        if call is None:
            self.notify("No tool call with a file location.", timeout=2)
            return
        location = call.locations[0]
        self.preview.show(str(location.get("path", "")), location.get("line"))

    def action_toggle_follow(self) -> None:
        preview = self.preview
        preview.follow = not preview.follow
        self._save("follow", preview.follow)
        self.notify("Following the agent's files." if preview.follow else "Stopped following.", timeout=2)
        if preview.follow:
            latest = next((c for c in reversed(self.session.state.tool_calls.values()) if c.locations), None)
            if latest is not None:
                self._follow_along(latest)

    def _save(self, key: str, value: object) -> None:
        app = rat_app(self)
        if app is not None:
            app.save_ui_setting(key, value)

    def action_toggle_preview(self) -> None:
        self.preview.toggle()

    def action_session_options(self) -> None:
        from ..screens.config_options import ConfigOptionsScreen

        self.app.push_screen(ConfigOptionsScreen(self.session))

    def action_pick_model(self) -> None:
        from ..screens.config_options import QuickPickScreen

        self.app.push_screen(QuickPickScreen(self.session, "model"))

    def action_cycle_mode(self) -> None:
        self.run_worker(self._cycle_mode(), group="session-controls", exit_on_error=False)

    async def _cycle_mode(self) -> None:
        error = await session_controls.cycle_mode(self.session)
        if error:
            self.notify(error, severity="warning")

    def action_toggle_plan(self) -> None:
        panel = self.plan_panel
        if not panel.has_class("-hidden") and not panel.has_class("-empty") and panel.unfold():
            return  # a folded plan (all done, or an earlier turn's) shown whole
        panel.toggle()
        self._save("plan_panel", not self.plan_panel.has_class("-hidden"))

    def action_toggle_focus(self) -> None:
        self.navigation.toggle()

    def action_show_traffic(self) -> None:
        from ..screens.traffic import TrafficScreen

        self.app.push_screen(TrafficScreen(self.session.traffic))

    def action_show_mcp_servers(self) -> None:
        from ..screens.mcp_servers import McpServersScreen

        self.app.push_screen(McpServersScreen(self.session))

    def action_review_changes(self) -> None:
        """This session's changes first, then older sessions' in the same directory (kept on disk)."""
        from ...session.change_tracker import ChangeTracker
        from ..screens.change_review import ChangeReviewScreen

        current = self.session.changes
        older = [j for j in ChangeTracker.load_all(current.cwd) if j.directory != current.directory]
        self.app.push_screen(ChangeReviewScreen([current, *older]))
