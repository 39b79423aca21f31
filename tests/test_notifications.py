"""Notifications outside the app (ui/notifications.py): the exact escape sequences per terminal kind, and the
real app on the demo agent deciding when to send them (never while the user is looking)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from rat_tui.agents.spec import demo_agent
from rat_tui.app import RatApp
from rat_tui.config import Config, NotificationsConfig
from rat_tui.ui.notifications import (
    NotifySettings,
    clean,
    desktop_command,
    detect_terminal,
    terminal_sequence,
    title_sequence,
    window_title,
)

from .helpers.app import scripted, send, until, view


def test_each_terminal_kind_gets_its_own_sequence() -> None:
    assert terminal_sequence("osc9", "rat · claude", "Asks permission") == "\x1b]9;rat · claude: Asks permission\x07"
    assert terminal_sequence("osc777", "rat · claude", "Done") == "\x1b]777;notify;rat · claude;Done\x07"
    assert terminal_sequence("osc99", "rat · claude", "Done") == (
        "\x1b]99;i=rat:d=0;rat · claude\x1b\\\x1b]99;i=rat:d=1:p=body;Done\x1b\\")
    assert terminal_sequence("bell", "t", "b") == "\x07"
    assert terminal_sequence("none", "t", "b") == ""


def test_inside_tmux_the_sequence_is_wrapped_for_passthrough_with_escapes_doubled() -> None:
    assert terminal_sequence("osc9", "rat", "hi", tmux=True) == "\x1bPtmux;\x1b\x1b]9;rat: hi\x07\x1b\\"
    assert terminal_sequence("osc99", "a", "b", tmux=True) == (
        "\x1bPtmux;\x1b\x1b]99;i=rat:d=0;a\x1b\x1b\\\x1b\x1b]99;i=rat:d=1:p=body;b\x1b\x1b\\\x1b\\")
    assert terminal_sequence("bell", "a", "b", tmux=True) == "\x07"  # tmux forwards the bell itself


def test_agent_text_cannot_end_the_sequence_or_start_another() -> None:
    hostile = "ok\x07\x1b]52;c;aGk=\x07\x1b[2J;more\nlines"
    sequence = terminal_sequence("osc777", "rat · \x1b]0;pwned\x07", hostile)
    assert sequence.count("\x1b") == 1 and sequence.count("\x07") == 1
    assert clean(hostile) == "ok ]52 c aGk= [2J more lines"
    assert title_sequence("a\x1b]0;b\x07c") == "\x1b]2;a ]0 b c\x07"


def test_terminal_kind_from_the_environment() -> None:
    assert detect_terminal({"TERM": "xterm-kitty"}) == "osc99"
    assert detect_terminal({"TERM_PROGRAM": "iTerm.app"}) == "osc9"
    assert detect_terminal({"TERM_PROGRAM": "WezTerm"}) == "osc9"
    assert detect_terminal({"TERM": "foot"}) == "osc777"
    assert detect_terminal({"VTE_VERSION": "7600", "TERM": "xterm-256color"}) == "osc777"
    assert detect_terminal({"TERM": "xterm-256color"}) == "bell"


def test_desktop_only_with_a_display_and_notify_send() -> None:
    which = {"notify-send": "/usr/bin/notify-send"}.get
    assert desktop_command("t", "b", {}, which) is None
    assert desktop_command("t", "b", {"DISPLAY": ":0"}, lambda name: None) is None
    assert desktop_command("t", "b\x1b[2J", {"WAYLAND_DISPLAY": "w"}, which) == [
        "/usr/bin/notify-send", "--app-name=rat", "t", "b [2J"]


def test_settings_per_event_and_per_agent() -> None:
    settings = NotifySettings(events=frozenset({"permission"}), per_agent={"codex": frozenset({"turn_done"})})
    assert settings.wants("permission", "claude") and not settings.wants("turn_done", "claude")
    assert settings.wants("turn_done", "codex") and not settings.wants("permission", "codex")
    assert window_title([("claude", "working"), ("demo", "ready")], 2) == "rat · 2 waiting · claude: working, demo: ready"


def notifying_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec=None, **settings) -> tuple[RatApp, list[str]]:
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.setenv("DISPLAY", "")  # no desktop notifications from a test
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    (tmp_path / "demo-notes.txt").write_text("one\ntwo\n")
    app = RatApp(spec or demo_agent(), tmp_path, config=Config(notifications=NotificationsConfig(terminal="osc777", **settings)))
    written: list[str] = []
    app.notifier._write = written.append  # what would reach the terminal, as it would be written
    return app, written


def notifications(written: list[str]) -> list[str]:
    return [w for w in written if w.startswith("\x1b]777;")]


async def test_nothing_is_sent_while_the_user_looks_at_the_asking_tab(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    app, written = notifying_app(tmp_path, monkeypatch)
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        await send(pilot, "edit please")
        await until(pilot, lambda: ("permission", False) in app.notifier.considered, "the permission event seen")
        assert notifications(written) == []
        assert any(w.startswith("\x1b]2;rat · 1 waiting") for w in written)  # the title still counts it


async def test_a_request_while_the_window_is_not_focused_notifies_once(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    release = tmp_path / "release"
    ask = {"sessionId": "$SESSION", "toolCall": {"toolCallId": "t1", "title": "Run rm -rf build", "kind": "execute"},
           "options": [{"optionId": "ok", "name": "Allow", "kind": "allow_once"},
                       {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}
    script = {"turns": [[{"wait_file": str(release)}, {"request": {"method": "session/request_permission", "params": ask}}]]}
    app, written = notifying_app(tmp_path, monkeypatch, scripted(script, tmp_path), events=["permission"])
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        await send(pilot, "clean up")
        await until(pilot, lambda: view(app).session.busy, "the turn running")
        app.post_message(events.AppBlur())  # the user switched to another window
        await until(pilot, lambda: not app.app_focus, "the window unfocused")
        release.touch()
        await until(pilot, lambda: ("permission", True) in app.notifier.considered, "the permission notified")
        assert notifications(written) == [
            "\x1b]777;notify;rat · Scripted fake agent;Asks permission: Run rm -rf build\x07"]


async def test_a_turn_ending_in_a_background_tab_notifies_and_the_title_follows(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    release = tmp_path / "release"
    script = {"turns": [[{"chunk": "working on it"}, {"wait_file": str(release)}, {"chunk": " done"}]]}
    app, written = notifying_app(tmp_path, monkeypatch, scripted(script, tmp_path), events=["turn_done"])
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        first = app.tabs.views[0].session
        await send(pilot, "hello")  # a turn in tab 1 ...
        await until(pilot, lambda: first.busy, "the turn running")
        await until(pilot, lambda: any("working" in w for w in written if w.startswith("\x1b]2;")), "the title working")
        await app.open_session(demo_agent(), tmp_path)  # ... while the user moves to a new tab 2
        await until(pilot, lambda: app.tabs.active_view.session is not first, "tab 2 in view")
        release.touch()
        await until(pilot, lambda: ("turn_done", True) in app.notifier.considered, "the background turn's end")
        assert notifications(written) == ["\x1b]777;notify;rat · Scripted fake agent;Turn ended.\x07"]
        # The last title written (a notification may come after it; a title already idle is not written again).
        titles = lambda: [w for w in written if w.startswith("\x1b]2;")]  # noqa: E731
        await until(pilot, lambda: titles()[-1].startswith("\x1b]2;rat · ") and "working" not in titles()[-1],
                    "the title back to idle")


async def test_a_turn_ending_while_the_app_closes_tells_nobody_and_raises_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tabs are gone before the app is unmounted: a status change then (a turn ending as `rat` quits)
    used to fail the store's subscriber looking for them."""
    from rat_tui.ui.tabs.tab_bar import SessionTabs

    app, written = notifying_app(tmp_path, monkeypatch)
    async with app.run_test(size=(110, 40)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        session = view(app).session
        await app.query_one(SessionTabs).remove()
        app.notify_event("turn_done", session, "Turn ended.")
        assert ("turn_done", False) not in app.notifier.considered and notifications(written) == []
