"""No work on the UI thread that grows with one message: big diffs, big forms, slow patterns, long outputs.

Nothing here is timed (speed is bench/stress.py's): each test checks WHERE or HOW OFTEN the big work runs.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time

from textual.app import ComposeResult
from textual.widgets import Input, Static

from rat_tui.app import GC_THRESHOLD
from rat_tui import priority
from rat_tui.session.elicitation_broker import Elicitation
from rat_tui.session.elicitation_form import _SLOW_PATTERNS, FormField, check, parse_form
from rat_tui.state import diff_cache
from rat_tui.state.diffing import FileDiff
from rat_tui.state.models import TerminalState, ToolCallEntry
from rat_tui.ui.screens.elicitation import FIELD_BATCH, ElicitationScreen
from rat_tui.ui.screens.permission import DiffPreview
from rat_tui.ui.widgets.diff_view import DiffView
from rat_tui.ui.widgets.tool_call import render_tool_call

from .helpers.harness import RatThemedApp, wait_for


_EDITS = itertools.count()


def big_edit(lines: int = 20000, tag: str = "") -> tuple[str, str]:
    """A 20,000-line edit no other test (or earlier run of this one in the process) has diffed: the diff
    cache is process-wide, and a cached diff would make the 'placeholder first' checks meaningless."""
    tag = f"{tag}{next(_EDITS)}"
    old = [f"value_{i} = compute({i}){tag}" for i in range(lines)]
    new = [line + "  # changed" if i % 10 == 5 else line for i, line in enumerate(old)]
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


def card_text(call: ToolCallEntry, on_ready=None) -> str:
    from rich.console import Console

    console = Console(width=120, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(render_tool_call(call, {}, None, on_ready))
    return console.export_text()


class BuildThreads:
    """Records the thread each big FileDiff is built in (a real FileDiff, only its constructor observed;
    the empty placeholder a view holds meanwhile is not counted)."""

    def __init__(self, monkeypatch) -> None:
        self.threads: list[str] = []
        self.pauses: list[object] = []  # what each big build was given to pause with
        original = FileDiff.__init__

        def init(diff, path, old, new, pause=None) -> None:
            if len(new) > diff_cache.SYNC_CHARS:
                self.threads.append(threading.current_thread().name)
                self.pauses.append(pause)
            original(diff, path, old, new, pause)

        monkeypatch.setattr(FileDiff, "__init__", init)


async def test_card_with_a_20000_line_diff_diffs_once_off_the_ui_thread(monkeypatch) -> None:
    builds = BuildThreads(monkeypatch)
    old, new = big_edit(tag="card")
    call = ToolCallEntry("tc", "tc", title="Edit big.py", kind="edit", status="completed",
                         content=[{"type": "diff", "path": "/p/big.py", "oldText": old, "newText": new}])
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()
    first = card_text(call, lambda: loop.call_soon_threadsafe(ready.set))
    assert "computing the diff…" in first and "+2000" not in first  # a placeholder, at once
    await asyncio.wait_for(ready.wait(), 60)
    for _ in range(5):  # every later render (a status change, a theme change) reuses the same diff
        shown = card_text(call)
    assert "/p/big.py  +2000 −2000" in shown and "… 17992 more lines" in shown
    assert builds.threads and all(name.startswith("diff") for name in builds.threads)
    assert len(builds.threads) == 1
    assert builds.pauses == [priority.give_way]  # the worker gives way to keys (below)
    # The diff viewer ("d") opens the very same diff: no second computation.
    app = RatThemedApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = DiffView("/p/big.py", old, new)
        await app.mount(view)
        await pilot.pause()
        assert not view.pending and view.diff.added == 2000
    assert len(builds.threads) == 1


def test_a_big_diff_built_in_a_thread_pauses_while_a_key_is_on_its_way(monkeypatch) -> None:
    """The diff worker and the loop share the GIL: while a key the user typed is on its way to the screen
    the worker sleeps (priority.give_way), between the stretches it diffs, until the key is drawn."""
    monkeypatch.setattr(priority, "GIVE_WAY_WINDOW", 60.0)  # only the key being drawn ends the wait
    priority.reset()
    old, new = big_edit(tag="pause")
    log: list[str] = []
    started = threading.Event()
    pauses = [0]

    def pause() -> None:
        pauses[0] += 1
        if pauses[0] == 100:  # a key arrives a hundred stretches in
            priority.input_arrived()
            started.set()
        if priority.give_way():
            log.append("gave way")

    def build() -> None:
        FileDiff("/p/big.py", old, new, pause)
        log.append("diffed")

    worker = threading.Thread(target=build)
    worker.start()
    try:
        assert started.wait(60)
        deadline = time.monotonic() + 60
        while not _asleep(worker):  # the worker stops in give_way, and stays there...
            assert worker.is_alive() and time.monotonic() < deadline, log
            time.sleep(0.001)
        log.append("key drawn")  # ...until the key is drawn
        priority.input_done(priority.serial())
        worker.join(60)
    finally:
        priority.reset()
    assert log == ["key drawn", "gave way", "diffed"], log
    assert pauses[0] > 1000  # about 18,000 stretches for this file


def _asleep(thread: threading.Thread) -> bool:
    """Whether `thread` is inside priority.give_way now (its current frame)."""
    import sys

    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        if frame.f_code is priority.give_way.__code__:
            return True
        frame = frame.f_back
    return False


async def test_small_diff_is_drawn_at_once_without_a_worker() -> None:
    call = ToolCallEntry("tc", "tc", title="Edit", kind="edit", status="completed",
                         content=[{"type": "diff", "path": "a.txt", "oldText": "a\nb\n", "newText": "a\nc\n"}])
    before = diff_cache.shared.built_in_background
    shown = card_text(call)
    assert "a.txt  +1 −1" in shown and "-b" in shown and "+c" in shown
    assert diff_cache.shared.built_in_background == before


async def test_diff_view_shows_a_placeholder_then_the_diff(monkeypatch) -> None:
    builds = BuildThreads(monkeypatch)
    old, new = big_edit(tag="viewer")
    app = RatThemedApp()
    async with app.run_test(size=(100, 30)) as pilot:
        view = DiffView("/p/big.py", old, new)
        await app.mount(view)
        await pilot.pause()
        if view.pending:  # the worker may already be done on a fast machine
            assert "computing the diff…" in view.visible_text()
        await wait_for(lambda: not view.pending, 60, "the diff")
        await pilot.pause()
        assert "+2000 −2000" in view.visible_text()
    assert [name[:4] for name in builds.threads] == ["diff"]


async def test_permission_preview_of_a_20000_line_diff_opens_before_the_diff(monkeypatch) -> None:
    builds = BuildThreads(monkeypatch)
    old, new = big_edit(tag="permission")

    class Host(RatThemedApp):
        def compose(self) -> ComposeResult:
            yield DiffPreview({"path": "/p/big.py", "oldText": old, "newText": new})

    app = Host()
    async with app.run_test(size=(100, 60)) as pilot:
        preview = app.query_one(DiffPreview)
        await wait_for(lambda: not preview.pending, 60, "the preview")
        await pilot.pause()
        assert "… 17960 more lines" in preview.plain_text
    assert [name[:4] for name in builds.threads] == ["diff"]


def test_catastrophic_pattern_is_given_up_once_not_per_keystroke() -> None:
    field = FormField("name", "string", "Name", pattern="^(a|a)+$")
    value, problem = check(field, "a" * 30 + "!")
    assert problem is None and value == "a" * 30 + "!"  # unchecked: the agent checks its own pattern
    assert "^(a|a)+$" in _SLOW_PATTERNS
    assert check(field, "a" * 31 + "!") == ("a" * 31 + "!", None)  # not tried again
    ok = FormField("code", "string", "Code", pattern="^[a-z]+$")  # ordinary patterns still work
    assert check(ok, "Abc")[1] == "Must match the pattern ^[a-z]+$" and check(ok, "abc") == ("abc", None)


def thousand_fields() -> dict:
    props = {f"f{i}": {"type": "string", "title": f"Field {i}"} for i in range(1000)}
    return {"sessionId": "s", "mode": "form", "message": "Big", "requestedSchema": {
        "type": "object", "properties": props, "required": ["f999"]}}


class FormHost(RatThemedApp):
    def __init__(self, params: dict) -> None:
        super().__init__()
        self.params = params
        self.answer: dict | None = None

    def compose(self) -> ComposeResult:
        yield Static("session")

    def on_mount(self) -> None:
        question = Elicitation("form", self.params, "agent", form=parse_form(self.params))
        self.push_screen(ElicitationScreen(question), lambda answer: setattr(self, "answer", answer))


async def test_form_of_1000_fields_shows_a_page_at_a_time() -> None:
    app = FormHost(thousand_fields())
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ElicitationScreen)
        assert len(screen.query(".field")) == FIELD_BATCH
        assert app.focused.id == "input-0"
        await pilot.press(*"hello", "pagedown")
        await pilot.pause()
        assert app.focused.id == f"input-{FIELD_BATCH}" and len(screen.query(".field")) == FIELD_BATCH
        assert f"Fields {FIELD_BATCH + 1}–{2 * FIELD_BATCH} of 1000" in str(screen.query_one("#pages").render())
        await pilot.press(*"second", "pageup")
        await pilot.pause()
        assert screen.query_one("#input-0", Input).value == "hello"  # kept while its page was away
        await pilot.press("ctrl+s")  # the required last field is empty: its page is shown, the field focused
        await pilot.pause()
        assert screen.errors == {"f999": "Required."}
        assert app.focused.id == "input-999" and len(screen.query(".field")) == 1000 - (999 // FIELD_BATCH) * FIELD_BATCH
        await pilot.press(*"x", "ctrl+s")
        await pilot.pause()
        assert app.answer is not None and app.answer["action"] == "accept"
        content = app.answer["content"]
        assert (content["f0"], content[f"f{FIELD_BATCH}"], content["f999"]) == ("hello", "second", "x")
        assert "f500" not in content  # never shown, never typed into: left out as empty


async def test_recheck_reads_only_the_field_typed_into() -> None:
    params = thousand_fields()
    params["requestedSchema"]["properties"]["f0"]["minLength"] = 3
    app = FormHost(params)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        await pilot.press("a", "ctrl+s")  # f0 is the first bad field: its page stays
        await pilot.pause()
        assert app.focused.id == "input-0" and screen.errors == {"f0": "At least 3 characters."}
        await pilot.press("b")
        assert screen.errors.get("f0") == "At least 3 characters."
        await pilot.press("c")
        assert "f0" not in screen.errors


def test_terminal_tail_keeps_the_last_lines_only() -> None:
    terminal = TerminalState("t")
    terminal.output = "".join(f"\x1b[32mline {i}\x1b[0m\n" for i in range(20000))
    terminal.exited, terminal.exit_code = True, 0
    call = ToolCallEntry("tc", "tc", title="run", kind="execute", status="completed",
                         content=[{"type": "terminal", "terminalId": "t"}])
    from rich.console import Console

    console = Console(width=80, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(render_tool_call(call, {"t": terminal}))
    shown = console.export_text()
    assert "line 19999" in shown and "line 19992" in shown and "line 19991" not in shown
    assert "19992 earlier lines (v to view all)" in shown and "\x1b" not in shown and "exit code 0" in shown


FIRST_FRAME_CHECK = '''
import asyncio, gc, sys
from rat_tui import __main__ as entry
from rat_tui.app import RatApp

print("AT-IMPORT", "rat_tui.protocol.acp_models" in sys.modules)
first = []
original = RatApp._display

def display(self, screen, renderable):  # observes the first frame written, then draws it as usual
    if renderable is not None and not first:
        first.append("rat_tui.protocol.acp_models" in sys.modules)
    return original(self, screen, renderable)

async def headless(app):  # `rat` as launched, on Textual's headless driver instead of this terminal
    async with app.run_test() as pilot:
        await pilot.pause()
        print("COMPOSER", app.focused is not None and app.focused.id == "composer")
        while app.warm_thread is None:
            await pilot.pause()
        app.warm_thread.join()  # the models, then the startup heap frozen out of the collector
        print("WARM", "rat_tui.protocol.acp_models" in sys.modules, gc.get_freeze_count() > 10000, gc.get_threshold()[0])

RatApp._display = display
RatApp.run = lambda app, **kwargs: asyncio.run(headless(app))
entry.main(["--", sys.executable, "-c", "import time; time.sleep(30)"])  # an agent that never answers
print("AT-FIRST-FRAME", first[0])
'''


def test_first_frame_comes_before_the_acp_models_are_imported(tmp_path) -> None:
    """The ACP models cost about 0.3 s of pydantic importing and building that holds the GIL: not before the first frame
    (the agent here never answers `initialize`, and the composer is usable all the same). After it, the
    models are imported and the heap startup built is frozen out of the garbage collector."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "c"), "XDG_DATA_HOME": str(tmp_path / "d"),
           "XDG_STATE_HOME": str(tmp_path / "s"), "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", FIRST_FRAME_CHECK], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert "AT-IMPORT False" in out.stdout, out.stdout + out.stderr
    assert "AT-FIRST-FRAME False" in out.stdout, out.stdout + out.stderr
    assert "COMPOSER True" in out.stdout, out.stdout + out.stderr
    assert f"WARM True True {GC_THRESHOLD}" in out.stdout, out.stdout + out.stderr


async def test_plan_of_1000_entries_draws_a_window_around_the_work_in_progress() -> None:
    from rat_tui.state.models import PlanItem
    from rat_tui.ui.widgets.plan_panel import WINDOW, PlanPanel

    class Host(RatThemedApp):
        def compose(self) -> ComposeResult:
            yield PlanPanel()

    items = tuple(PlanItem(f"step {i}", "medium", "completed" if i < 500 else "in_progress" if i == 500 else "pending")
                  for i in range(1000))
    app = Host()
    async with app.run_test(size=(80, 30)) as pilot:
        panel = app.query_one(PlanPanel)
        panel.show_plan(items)
        await pilot.pause()
        drawn = [line.text.strip() for line in panel.render_lines(panel.region.reset_offset)]
        text = "\n".join(drawn)
        assert "Plan 500/1000" in text and "… 498 earlier" in text and "◐ step 500" in text
        assert f"… {1000 - 498 - WINDOW} more" in text and "step 499" in text and "step 506" not in text
        assert len(panel.plain_text.splitlines()) == 1000  # the whole plan is still there to copy


async def test_thousands_of_tool_calls_build_only_the_cards_drawn() -> None:
    from rat_tui.ui.widgets.tool_call import LazyCard
    from rat_tui.ui.widgets.transcript import Transcript

    class Host(RatThemedApp):
        def compose(self) -> ComposeResult:
            yield Transcript()

    cards: list[LazyCard] = []
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        for i in range(5000):
            call = ToolCallEntry(f"tc{i}", f"tc{i}", title=f"Read file_{i}.py", kind="read", status="completed")
            cards.append(LazyCard(lambda call=call: render_tool_call(call, {})))
            transcript.set_renderable(call.key, cards[-1])
        await pilot.pause()
        assert "Read file_4999.py" in transcript.visible_text()
        built = sum(card.built for card in cards)
        assert 0 < built < 100  # what is near the viewport, not 5,000


async def test_500_slash_commands_fill_the_menu_with_the_best_matches_only() -> None:
    from rat_tui.ui.widgets.command_menu import CommandMenu
    from rat_tui.ui.widgets.prompt import PromptComposer

    commands = [{"name": f"command-{i}", "description": f"does {i}"} for i in range(500)]

    class Host(RatThemedApp):
        CSS = "#above { height: 1fr; }"

        def compose(self) -> ComposeResult:
            yield Static("transcript", id="above")
            yield PromptComposer(id="composer")

        def on_mount(self) -> None:
            composer = self.query_one(PromptComposer)
            composer.set_commands(commands)
            composer.focus()

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        composer = app.query_one(PromptComposer)
        menu = composer.menu
        await pilot.press("/")
        await pilot.pause()
        assert menu.is_open and len(menu.matches) == menu.option_count == CommandMenu.MAX_MATCHES
        await pilot.press(*"command-49")
        await pilot.pause()
        assert menu.selected_name == "command-49"  # the prefix match first; the rest as typing narrows
        await pilot.press("tab")
        assert composer.text == "/command-49 "


async def test_readers_share_one_reading_slice_per_turn_of_the_loop() -> None:
    """Twenty agents streaming at once hold the loop no longer per turn than one does: once the turn's
    slice is used up, every reader waits for the next turn (the clock is given, not read)."""
    from rat_tui.protocol import transport

    transport._next_turn()
    assert not transport.turn_used(100.0)  # the first reader to run starts the turn's slice
    assert not transport.turn_used(100.0 + transport.READ_SLICE_SECONDS / 2)
    assert transport.turn_used(100.0 + 2 * transport.READ_SLICE_SECONDS)  # used up...
    assert transport.turn_used(100.0 + 2 * transport.READ_SLICE_SECONDS)  # ...for the other readers too
    await asyncio.sleep(0)  # what was ready ran (keys, redraws); a new turn begins
    assert not transport.turn_used(200.0)


async def test_twenty_readers_flooding_at_once_each_deliver_every_line(tmp_path) -> None:
    import sys

    from rat_tui.protocol.transport import AgentProcess

    script = "import sys\nfor i in range(3000): sys.stdout.write(f'{{\"n\": {i}}}\\n')\n"
    procs = [AgentProcess([sys.executable, "-c", script], cwd=tmp_path) for _ in range(20)]
    for proc in procs:
        await proc.start()

    async def read(proc) -> list[bytes]:
        lines: list[bytes] = []
        await proc.read_lines(lines.append)
        return lines

    got = await asyncio.gather(*(read(proc) for proc in procs))
    assert all(lines == [f'{{"n": {i}}}'.encode() for i in range(3000)] for lines in got)
    for proc in procs:
        await proc.wait()


def in_fresh_interpreter(code: str, tmp_path, timeout: float = 120):
    """`code` run by a new Python (the ACP models not imported yet) from the repository, `tmp_path` its
    argument: the finished process (`stdout` to assert on, `stderr` to show when it fails)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    return subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, timeout=timeout)


PERMISSION_MODELS_CHECK = '''
import asyncio, sys, threading
from pathlib import Path
from tests.helpers.harness import finish, start_session, wait_for

threads = []


class Watch:  # which thread imports the ACP models
    def find_spec(self, name, path=None, target=None):
        if name == "rat_tui.protocol.acp_models":
            threads.append(threading.current_thread().name)
        return None


sys.meta_path.insert(0, Watch())
OPTIONS = [{"optionId": "yes", "name": "Yes", "kind": "allow_once"}]
# (a null line: a shape the models salvage, which wire.ToolCallFields leaves to them)
CALL = {"toolCallId": "t1", "title": "Edit big.py", "kind": "edit", "status": "pending",
        "content": [{"type": "diff", "path": "/tmp/big.py", "oldText": "a", "newText": "b"}],
        "locations": [{"path": "/tmp/big.py", "line": None}]}
SCRIPT = {"turns": [[{"request": {"method": "session/request_permission",
                                  "params": {"sessionId": "$SESSION", "toolCall": CALL, "options": OPTIONS}}}]]}


async def main():
    session, task = await start_session(SCRIPT, Path(sys.argv[1]))
    gate = asyncio.Event()

    async def first_frame():
        await gate.wait()

    session.models_gate = first_frame  # as RatApp sets it: the models wait for the first frame
    asked = []

    async def ask(params, tool_call):
        asked.append(session.state.tool_calls["t1"].title)
        return OPTIONS[0]

    session.permissions.ask = ask
    waiting = session.permissions.before_apply
    reached = asyncio.Event()

    async def before_apply(update):
        reached.set()
        await waiting(update)

    session.permissions.before_apply = before_apply
    turn = session.start_prompt("edit please")
    await asyncio.wait_for(reached.wait(), 20)  # the request is in, its tool call not applied yet
    for _ in range(5):
        await asyncio.sleep(0)  # the loop goes on: nothing imports the models on it
    print("BEFORE-GATE", asked, "rat_tui.protocol.acp_models" in sys.modules)
    gate.set()
    await wait_for(lambda: asked, what="the question")
    await asyncio.wait_for(turn, 20)
    print("ASKED", asked, "THREADS", threads)
    await finish(session, task)


asyncio.run(main())
'''


def test_a_permission_before_the_models_are_in_imports_them_off_the_loop(tmp_path) -> None:
    """A permission request carries a tool call, applied to the session as an update; the first one, a second
    after launch, imported the ACP models on the loop (0.5 s frozen, a key typed meanwhile 640 ms late).
    It now waits like a streamed update: for the app's gate (the first frame), then imports them in a thread."""
    out = in_fresh_interpreter(PERMISSION_MODELS_CHECK, tmp_path)
    assert "BEFORE-GATE [] False" in out.stdout, out.stdout + out.stderr
    assert "ASKED ['Edit big.py']" in out.stdout, out.stdout + out.stderr
    threads = out.stdout.split("THREADS", 1)[1].strip()
    assert threads.startswith("['") and "MainThread" not in threads, out.stdout + out.stderr  # the executor's


RELEASE_CHECK = '''
import asyncio, sys
from pathlib import Path
from rat_tui import priority
from tests.helpers.harness import finish, start_session, wait_for

# (a null line: a shape the models salvage, which wire.ToolCallFields leaves to them)
CALLS = [{"update": {"sessionUpdate": "tool_call", "toolCallId": f"t{i}", "title": f"Read file_{i}.py", "kind": "read",
                     "status": "completed", "locations": [{"path": f"/tmp/file_{i}.py", "line": None}]}}
         for i in range(3000)]
SCRIPT = {"turns": [[*CALLS, {"chunk": "done"}]]}


async def main():
    session, task = await start_session(SCRIPT, Path(sys.argv[1]))
    gate = asyncio.Event()

    async def first_frame():
        await gate.wait()

    session.models_gate = first_frame  # as RatApp sets it: updates for the models are held until then
    applied, waiting = [], []
    apply = session._apply
    session._apply = lambda params: (applied.append(1), apply(params))
    passed = priority.input_passed

    async def input_passed(wait):
        waiting.append(len(applied))
        await passed(wait)

    priority.input_passed = input_passed
    turn = session.start_prompt("read them")
    await wait_for(lambda: session._held is not None and len(session._held) == 3001, what="the updates held")  # (and the chunk after them)
    priority.INPUT_WINDOW = 60.0  # a key on its way until it is drawn (input_done), however slow the machine
    priority.input_arrived()
    gate.set()  # the models import (a thread), then the held updates are applied
    await wait_for(lambda: waiting, 60, what="the release giving way to the key")
    print("WAITING", waiting[0] > 0, len(applied) < 3001, len(applied) == waiting[0])
    priority.input_done(priority.serial())  # the key is drawn: the release goes on
    await asyncio.wait_for(turn, 60)
    print("APPLIED", len(applied))
    await finish(session, task)


asyncio.run(main())
'''


def test_updates_held_for_the_models_give_way_to_a_key_as_they_are_released(tmp_path) -> None:
    """A `session/load` replay held for the models' import is applied in slices of RELEASE_SLICE; between slices
    a key on its way to the screen goes first (rat_tui/priority.py), as it does for the agent's reader. The
    release waited for nothing but a turn of the loop before: in bench/stress.py's load50000, keys waited
    behind its slices (40 ms of them in the six slowest keys' waits)."""
    out = in_fresh_interpreter(RELEASE_CHECK, tmp_path, timeout=180)
    assert "WAITING True True True" in out.stdout, out.stdout + out.stderr
    assert "APPLIED 3001" in out.stdout, out.stdout + out.stderr


def test_a_big_diff_s_rows_give_way_too_and_what_is_built_later_never_pauses() -> None:
    """The unified rows of a 20,000-line edit (2,000 hunks, 50 ms) are built in the worker too: it gives way
    between hunks. The side-by-side rows are built later where they are asked for, maybe on the loop: the
    cache's diffs no longer hold the worker's pause then."""
    old, new = big_edit(tag="rows")
    calls = [0]

    def pause() -> None:
        calls[0] += 1

    diff = FileDiff("/p/big.py", old, new, pause)
    before = calls[0]
    assert len(diff.unified) > 2000
    assert calls[0] - before >= len(diff.hunks) >= 2000
    built = diff_cache.DiffCache(sync_chars=0)._build(("/p/big.py", old, new), pause)
    assert built.pause is None and built.unified


MODELS_GIVE_WAY_CHECK = '''
import sys, threading, time
from rat_tui import priority
from rat_tui.protocol import wire

priority.clock = lambda: 0.0  # frozen: the key stays on its way until it is drawn
priority.input_arrived(priority.KEY_WINDOW, key=True)
done = threading.Event()
worker = threading.Thread(target=lambda: (wire.schema_off_loop(), done.set()), daemon=True)
worker.start()


def pausing():
    frame = sys._current_frames().get(worker.ident)
    while frame is not None:
        if frame.f_code.co_name in ("_pause_for_input", "_give_way"):
            return True
        frame = frame.f_back
    return False


deadline = time.monotonic() + 20
while not pausing():
    if done.is_set() or time.monotonic() > deadline:
        print("NEVER-PAUSED", done.is_set())
        sys.exit(0)
    time.sleep(0.0005)
print("PAUSED", done.is_set())
priority.input_done(priority.serial())  # the key is drawn
print("IMPORTED", done.wait(20), type(wire.schema_off_loop().AgentMessageChunk).__name__)
'''


def test_the_models_imported_for_a_waiting_session_give_way_to_a_key(tmp_path) -> None:
    """A session whose updates wait for the ACP models (a `session/load` replay just begun) imports them in an
    executor's thread (`wire.schema_off_loop`). That import holds the GIL between statements; as the warm-up's,
    it now pauses while a key is on its way to the screen, and goes on once the key is drawn. (It did not: a
    key typed as load50000's replay began waited 17 ms for the loop to run at all, 54 ms to its echo.)"""
    out = in_fresh_interpreter(MODELS_GIVE_WAY_CHECK, tmp_path)
    assert "PAUSED False" in out.stdout, out.stdout + out.stderr
    assert "IMPORTED True ModelMetaclass" in out.stdout, out.stdout + out.stderr
