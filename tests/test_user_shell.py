"""The tab's own shell (`!command`) over a real PTY, in the real app against scripted agents over pipes."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.history.rebuild import rebuild
from rat_tui.history.records import OUT, Recorded
from rat_tui.session.shell_context import card_text
from rat_tui.state import shell
from rat_tui.state.models import TERMINAL_DISPLAY_LIMIT

from .helpers.acp_schema import validate
from .helpers.agents import received
from .helpers.app import scripted, send, state_word, until, view
from .helpers.shell import output, processes_in, run_command

pytestmark = pytest.mark.skipif(os.name != "posix" or not Path("/proc").is_dir(), reason="needs a PTY and /proc")

EMBED = {"promptCapabilities": {"embeddedContext": True}}
NO_EMBED = {"promptCapabilities": {"embeddedContext": False}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "sub" / "notes.txt").write_text("n\n")
    (root / "readme.md").write_text("r\n")
    return root


def app_for(tmp_path: Path, project: Path, capabilities: dict | None = None, turns: list | None = None) -> RatApp:
    script: dict = {"turns": turns or [[{"chunk": "ok"}]]}
    if capabilities is not None:
        script["initialize_result"] = {"agentCapabilities": capabilities}
    return RatApp(scripted(script, tmp_path), project)


async def test_cd_and_export_persist_between_commands(tmp_path: Path, project: Path) -> None:
    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        cd = await run_command(pilot, app, "cd sub")
        assert cd.exit_code == 0 and cd.status == "completed"
        pwd = await run_command(pilot, app, "pwd")
        assert output(app, pwd).strip() == os.path.realpath(project / "sub")
        await run_command(pilot, app, "export X=1")
        echo = await run_command(pilot, app, "echo $X")
        assert output(app, echo).strip() == "1"
        failed = await run_command(pilot, app, "false")
        assert failed.exit_code == 1 and failed.status == "failed"
        transcript = view(app).transcript.plain_text
        assert "! pwd" in transcript and "exit code 1" in transcript
        assert "a attaches it to your prompt" in transcript  # how the agent may see it, said on the card
        assert received_prompts(tmp_path) == []  # nothing of it went to the agent


def received_prompts(tmp_path: Path) -> list:
    record = Path(os.environ.get("RAT_FAKE_RECORD", tmp_path / "none.jsonl"))
    return [m for m in received(record) if m.get("method") == "session/prompt"] if record.exists() else []


async def test_flood_is_capped_and_keys_echo_meanwhile(tmp_path: Path, project: Path) -> None:
    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        composer = view(app).composer

        async def echo_times(word: str) -> list[float]:
            times = []
            for char in word:
                started = time.perf_counter()
                await pilot.press(char)
                await until(pilot, lambda c=char: composer.text.endswith(c), "the key's echo")
                times.append(time.perf_counter() - started)
            return times

        floor = await echo_times("quiet")
        composer.clear()
        entry = await run_command(pilot, app, "head -c 50000000 /dev/zero | tr '\\0' 'y' | fold -w 99", wait=False)
        await until(pilot, lambda: entry.total_bytes > 0, "the flood's first output")
        busy = await echo_times("typing")
        session = view(app).session
        await until(pilot, lambda: not entry.running, "the flood to end", timeout=120)
        assert entry.exit_code == 0
        assert entry.total_bytes == 50_000_000 + 50_000_000 // 99  # the y's and a newline per full line
        kept = output(app, entry)
        assert 0 < len(kept) <= TERMINAL_DISPLAY_LIMIT and kept.rstrip("\n").endswith("y" * 10)
        assert composer.text == "typing"
        assert "earlier lines (v to view all)" in view(app).transcript.plain_text
        print(f"\nkey echo during a 50 MB shell flood: median {statistics.median(busy) * 1000:.1f} ms, "
              f"max {max(busy) * 1000:.1f} ms; idle floor median {statistics.median(floor) * 1000:.1f} ms "
              f"(ratio {statistics.median(busy) / statistics.median(floor):.1f}x)")
        assert session.shell.shell is not None


async def test_escape_interrupts_a_sleep_then_the_shell_goes_on(tmp_path: Path, project: Path) -> None:
    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await run_command(pilot, app, "cd sub")
        entry = await run_command(pilot, app, "sleep 30", wait=False)
        runs = view(app).session.shell
        await until(pilot, lambda: any(_is_sleep(pid) for pid in processes_in(project / "sub")), "sleep to start")
        tab = view(app)
        await until(pilot, lambda: "$ sleep 30 · Esc stops" in str(tab.status_bar.render()), "the status bar's mark")
        assert str(app.tabs.get_tab(app.tabs.active_pane.id).label).startswith("$ ")
        started = time.perf_counter()
        await pilot.press("escape")
        await until(pilot, lambda: not entry.running, "the interrupt", timeout=10)
        took = time.perf_counter() - started
        print(f"\nEsc to the end of `sleep 30`: {took * 1000:.0f} ms")
        assert entry.interrupted and entry.status == "cancelled" and not runs.running
        await until(pilot, lambda: "Esc stops" not in str(tab.status_bar.render()), "the mark gone")
        # Well before the 30 s the sleep would take: the interrupt ended it.
        assert took < 10
        after = await run_command(pilot, app, "pwd")
        assert output(app, after).strip() == os.path.realpath(project / "sub")  # the same shell, its cd kept


def _is_sleep(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"sleep")
    except OSError:
        return False


async def test_second_escape_kills_what_ignores_sigint(tmp_path: Path, project: Path) -> None:
    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        command = "python3 -c 'import signal,time; signal.signal(signal.SIGINT, signal.SIG_IGN); print(1, flush=True); time.sleep(60)'"
        entry = await run_command(pilot, app, command, wait=False)
        await until(pilot, lambda: "1" in output(app, entry), "the program to start")
        await pilot.press("escape")
        await pilot.press("escape")
        await until(pilot, lambda: not entry.running, "the kill", timeout=10)
        assert entry.interrupted and entry.exit_code == 137


async def test_closing_the_tab_leaves_no_process(tmp_path: Path, project: Path) -> None:
    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await run_command(pilot, app, "cd sub; (sleep 300 &) ; sleep 301 &")
        entry = await run_command(pilot, app, "sleep 302", wait=False)
        await until(pilot, lambda: sum(_is_sleep(pid) for pid in processes_in(project)) == 3, "three sleeps")
        assert entry.running
        await pilot.press("alt+w")
        await until(pilot, lambda: not app.tabs.views or not app.is_running, "the tab to close")
    deadline = time.monotonic() + 10
    while processes_in(project) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_in(project) == []


@pytest.mark.parametrize("capabilities, kind", [(EMBED, "resource"), (NO_EMBED, "text")])
async def test_attaching_a_card_sends_exactly_its_text(tmp_path: Path, project: Path, record_file: Path,
                                                       capabilities: dict, kind: str) -> None:
    app = app_for(tmp_path, project, capabilities)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        entry = await run_command(pilot, app, "printf 'one\\n\\033[31mtwo\\033[0m\\n'; exit 3")
        await run_command(pilot, app, "echo later")
        tab = view(app)
        await pilot.press("ctrl+t")  # the transcript
        await until(pilot, lambda: tab.transcript.has_focus, "the transcript focused")
        tab.transcript.cursor_key = entry.key
        await pilot.press("a")
        await until(pilot, lambda: tab.composer.text == "@!1 ", "the mention in the composer")
        await send(pilot, "why did it fail?")
        await until(pilot, lambda: "ok" in tab.transcript.plain_text, "the answer")
        expected = card_text(entry, tab.session.state.terminals)
        assert "🐚 !1" in tab.transcript.plain_text
    assert expected.startswith("$ printf") and "one\ntwo\n" in expected and "exit code 3" in expected
    (prompt,) = [m for m in received(record_file) if m.get("method") == "session/prompt"]
    validate("session/prompt", "request", prompt["params"])
    blocks = prompt["params"]["prompt"]
    assert blocks[0] == {"type": "text", "text": "@!1 why did it fail?"}
    assert len(blocks) == 2 and blocks[1]["type"] == kind
    sent = blocks[1]["resource"]["text"] if kind == "resource" else blocks[1]["text"]
    assert sent == expected
    assert "later" not in sent  # only the card named


async def test_at_bang_with_no_command_is_not_sent(tmp_path: Path, project: Path, record_file: Path) -> None:
    app = app_for(tmp_path, project, EMBED)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "look @! ")
        await until(pilot, lambda: any("no shell command" in n.message for n in app._notifications), "the refusal")
        assert view(app).composer.text == "look @! "  # kept, nothing lost
        view(app).composer.clear()
        await send(pilot, "x")  # something else goes, and the agent proves it read what came before
        await until(pilot, lambda: "ok" in view(app).transcript.plain_text, "the answer")
    prompts = [m for m in received(record_file) if m.get("method") == "session/prompt"]
    assert [p["params"]["prompt"][0]["text"] for p in prompts] == ["x"]


async def test_full_screen_program_is_stopped_with_a_message(tmp_path: Path, project: Path) -> None:
    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        entry = await run_command(pilot, app, "printf '\\033[?1049hscreen'; sleep 60")
        assert entry.note and "whole screen" in entry.note and entry.status == "failed"
        assert "whole screen" in view(app).transcript.plain_text
        assert "\x1b[?1049h" not in output(app, entry)


async def test_tab_completes_paths_where_the_shell_is(tmp_path: Path, project: Path) -> None:
    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        composer = view(app).composer
        await pilot.press("!", *"ls s")
        await pilot.press("tab")
        assert composer.text == "!ls sub/"
        await pilot.press("d", "tab")
        assert composer.text == "!ls sub/deeper/"
        composer.clear()
        await run_command(pilot, app, "cd sub")
        await pilot.press("!", *"cat n", "tab")
        assert composer.text == "!cat notes.txt "  # relative to the shell's directory now


async def test_up_after_bang_walks_shell_commands_only(tmp_path: Path, project: Path) -> None:
    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await run_command(pilot, app, "echo first")
        await send(pilot, "a prompt")
        await until(pilot, lambda: "ok" in view(app).transcript.plain_text, "the answer")
        await run_command(pilot, app, "echo second")
        composer = view(app).composer
        await pilot.press("!", "up")
        assert composer.text == "!echo second"
        await pilot.press("up")
        assert composer.text == "!echo first"
        await pilot.press("down", "down")
        assert composer.text == "!"
        await pilot.press("backspace", "up")
        assert composer.text == "!echo second"  # the whole history (prompts and commands) on an empty composer
        await pilot.press("up")
        assert composer.text == "a prompt"


async def test_remote_agent_says_bang_cannot_run(tmp_path: Path, project: Path) -> None:
    from rat_tui.agents.spec import AgentSpec

    fake = tmp_path / "bin" / "ssh"  # an agent launched through ssh: the shell would run on the wrong machine
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    fake.chmod(0o755)
    app = RatApp(AgentSpec(name="remote", argv=[str(fake), "host", "agent"], env={}, is_demo=False), project)
    async with app.run_test(size=(110, 36)) as pilot:
        await run_command_refused(pilot, app, "ls")
        assert view(app).composer.text == "!ls"
        assert shell.shell_entries(view(app).session.state) == []


async def run_command_refused(pilot, app, command: str) -> None:
    await pilot.press("!", *command, "enter")
    await until(pilot, lambda: any("another machine" in n.message for n in app._notifications), "the refusal")


def test_journal_record_rebuilds_the_card() -> None:
    from rat_tui.state.store import SessionStore

    store = SessionStore()
    store.dispatch(shell.start, 1, "make test", "~/p")
    store.dispatch(shell.output, 1, "\x1b[32mok\x1b[0m 3 passed\n")
    store.dispatch(shell.finish, 1, 0, 1.5, total_bytes=30)
    entry = shell.find(store.state)
    assert entry is not None
    message = shell.record(store.state, entry)
    rebuilt = rebuild([Recorded(0.0, OUT, message)]).store.state
    (again,) = shell.shell_entries(rebuilt)
    assert (again.command, again.exit_code, again.duration, again.cwd, again.total_bytes) == ("make test", 0, 1.5, "~/p", 30)
    assert shell.output_of(rebuilt, again) == "\x1b[32mok\x1b[0m 3 passed\n"
    assert again.name == "!1 · ~/p · 1.5 s"
    assert rebuild([Recorded(0.0, OUT, {"method": shell.RECORD_METHOD, "params": {"command": 3}})]).store.state.entries == []


async def test_commands_typed_ahead_run_in_order(tmp_path: Path, project: Path) -> None:
    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        first = await run_command(pilot, app, "sleep 2; cd sub", wait=False)
        second = await run_command(pilot, app, "pwd", wait=False)
        assert first.status == "running" and second.status == "queued"
        await until(pilot, lambda: not second.running, "the queued command to run")
        assert output(app, second).strip() == os.path.realpath(project / "sub")
        # Esc stops the running one and drops what was typed after it.
        running = await run_command(pilot, app, "sleep 30", wait=False)
        dropped = await run_command(pilot, app, "echo never", wait=False)
        await until(pilot, lambda: any(_is_sleep(pid) for pid in processes_in(project)), "sleep to start")
        await pilot.press("escape")
        await until(pilot, lambda: not running.running and not dropped.running, "both to end")
        assert dropped.status == "cancelled" and "Not run" in (dropped.note or "") and output(app, dropped) == ""


async def test_at_bang_typed_by_hand_attaches_the_last_command(tmp_path: Path, project: Path, record_file: Path) -> None:
    app = app_for(tmp_path, project, EMBED)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await run_command(pilot, app, "echo first")
        last = await run_command(pilot, app, "echo second")
        composer = view(app).composer
        await pilot.press(*"see @!")
        assert not composer.file_menu.is_open  # `@!` is no file name: Enter sends
        await pilot.press("enter")
        await until(pilot, lambda: "ok" in view(app).transcript.plain_text, "the answer")
        expected = card_text(last, view(app).session.state.terminals)
    (prompt,) = [m for m in received(record_file) if m.get("method") == "session/prompt"]
    assert [block.get("resource", {}).get("text") for block in prompt["params"]["prompt"][1:]] == [expected]
    assert expected == f"$ echo second\nsecond\n[exit code 0 in {last.cwd}]"


async def test_keys_are_in_f1_and_the_palette(tmp_path: Path, project: Path) -> None:
    from rat_tui.ui.screens.help import HelpScreen

    app = app_for(tmp_path, project)
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        commands = {command.title: command for command in app.get_system_commands(app.screen)}
        assert "Attach shell card" in commands and commands["Attach shell card"].help.endswith("(a)")
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        rows = "\n".join(f"{row.area} | {row.keys} | {row.what} | {row.ident}" for row in app.screen.rows)
        assert "Prompt | ! | At the start: run the rest in this tab's own shell" in rows
        assert "@! / @!N" in rows
        await pilot.press("escape", "ctrl+t", "f1")
        rows = "\n".join(f"{row.area} | {row.keys} | {row.what} | {row.ident}" for row in app.screen.rows)
        assert "Session | a | Attach the nearest shell card (a !command and its output) to the next prompt" in rows


def test_journal_finds_and_exports_shell_commands(tmp_path: Path) -> None:
    from rat_tui.history.journal import HistoryJournal
    from rat_tui.history.markdown import to_markdown
    from rat_tui.state.store import SessionStore

    store = SessionStore()
    store.dispatch(shell.start, 1, "pytest -q", "~/p")
    store.dispatch(shell.output, 1, "\x1b[31m1 failed\x1b[0m\n")
    store.dispatch(shell.finish, 1, 1, 2.0)
    entry = shell.find(store.state)
    assert entry is not None
    journal = HistoryJournal(tmp_path / "history.sqlite3")
    try:
        recorder = journal.start_session("agent", ["agent"], str(tmp_path))
        recorder.record(OUT, shell.record(store.state, entry), 10)
        recorder.flush()
        (found,) = journal.sessions("pytest")
        markdown = to_markdown(rebuild(journal.records(found.id)).store.state)
    finally:
        journal.close()
    assert "### Shell: `pytest -q` — exit code 1 · !1 · ~/p · 2.0 s" in markdown
    assert "1 failed" in markdown and "\x1b" not in markdown


async def test_engine_end_comes_from_its_own_pipe_not_the_output(tmp_path: Path) -> None:
    from rat_tui.session.user_shell import UserShell

    chunks: list[str] = []
    engine = UserShell(tmp_path, on_output=chunks.append, environ={**os.environ, "SHELL": "/bin/sh"})
    try:
        # The status line's own mark printed by the command: neither an end nor a directory change.
        result = await engine.run("printf '\\036rat 0 /elsewhere\\n'; sleep 0.1; echo done; (exit 7)")
        assert (result.exit_code, result.cwd) == (7, str(tmp_path))
        assert "".join(chunks) == "\x1erat 0 /elsewhere\ndone\n"
        chunks.clear()
        broken = await engine.run("if then fi")  # a syntax error ends the command, not the shell
        assert broken.exit_code == 2 and not broken.shell_exited and "then" in "".join(chunks)
        multi = await engine.run("X=a\necho \"$X\"b")
        assert multi.exit_code == 0 and "".join(chunks).endswith("ab\n")
    finally:
        await engine.close()
    assert engine.pid is None


def test_a_shell_that_is_not_posix_falls_back_to_sh_with_a_note() -> None:
    from rat_tui.session.user_shell import FALLBACK_SHELL, pick_shell

    assert pick_shell({"SHELL": "/usr/bin/fish"}) == (FALLBACK_SHELL, "Your shell /usr/bin/fish does not speak POSIX "
                                                      f"sh: `!` commands run in {FALLBACK_SHELL} instead.")
    assert pick_shell({"SHELL": "/bin/sh"}) == ("/bin/sh", None)
    assert pick_shell({}) == (FALLBACK_SHELL, None)


async def test_a_replayed_session_shows_its_shell_cards_and_refuses_bang(tmp_path: Path, project: Path) -> None:
    from rat_tui.session.replay import ReplaySession
    from rat_tui.state.store import SessionStore

    store = SessionStore()
    store.dispatch(shell.start, 1, "git status", str(project))
    store.dispatch(shell.output, 1, "nothing to commit\n")
    store.dispatch(shell.finish, 1, 0, 0.2)
    entry = shell.find(store.state)
    assert entry is not None
    replay = ReplaySession([Recorded(0.0, OUT, shell.record(store.state, entry))], "agent", project)
    await replay.run()
    (card,) = shell.shell_entries(replay.state)
    assert card.command == "git status" and shell.output_of(replay.state, card) == "nothing to commit\n"
    assert replay.shell.run("ls") == replay.shell.refusal and "read-only" in replay.shell.refusal
    assert len(shell.shell_entries(replay.state)) == 1


def test_a_start_without_an_end_rebuilds_as_unfinished_then_the_end_fills_it() -> None:
    from rat_tui.state.store import SessionStore

    store = SessionStore()
    store.dispatch(shell.start, 1, "make", "~/p")
    entry = shell.find(store.state)
    assert entry is not None
    begun = Recorded(0.0, OUT, shell.record(store.state, entry, running=True))
    store.dispatch(shell.output, 1, "built\n")
    store.dispatch(shell.finish, 1, 0, 3.0)
    ended = Recorded(1.0, OUT, shell.record(store.state, entry))
    crashed = rebuild([begun]).store.state  # rat killed while it ran: the command is there, said unfinished
    (card,) = shell.shell_entries(crashed)
    assert card.command == "make" and not card.running and card.note == shell.NO_END and crashed.shell_running is None
    whole = rebuild([begun, ended]).store.state
    (card,) = shell.shell_entries(whole)
    assert (card.status, card.note, card.exit_code) == ("completed", None, 0)
    assert shell.output_of(whole, card) == "built\n" and card.total_bytes == len("built\n")


def test_a_long_or_multi_line_command_is_titled_by_its_first_line() -> None:
    assert shell.title_of("make test") == "make test"
    assert shell.title_of("for f in *; do\n  echo $f\ndone") == "for f in *; do … (2 more lines)"
    assert shell.title_of("x" * 250 + "\ny") == "x" * 200 + " … (50 more characters, 1 more line)"
    assert shell.title_of("printf '\x1b[2J'") == "printf '\u241b[2J'"  # the escape shown, not run
