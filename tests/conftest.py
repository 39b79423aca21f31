"""Shared fixtures: keep the developer's config and data out of every test, and colour on."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers.agents import assert_sent_messages_valid


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("xdg")
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    monkeypatch.delenv("RAT_CONFIG", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    # A terminal's size is its own (tmux's pane, Pilot's `size=`): pytest-xdist's workers are given COLUMNS=80
    # and LINES=24, which a rat started in a 120-column tmux pane would take over the pane's size.
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    monkeypatch.setenv("RAT_DEMO_DELAY", "0")
    monkeypatch.setenv("RAT_REGISTRY_OFF", "1")  # no test reaches the live agent registry


@pytest.fixture(autouse=True, scope="session")
def markdown_imported() -> None:
    """Markdown imported once per test process, as the app's warm-up would: a frame drawn before an app's
    warm-up has imported it shows source text (markdown_stream.warming), and a snapshot must not depend on
    how fast that thread ran. tests/test_markdown_warming.py puts the warm-up back to 'not done yet'."""
    from rat_tui.ui.widgets import markdown_stream

    markdown_stream.warm_up()


@pytest.fixture(autouse=True)
def instant_dialogs(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pilot's keys arrive the instant a dialog shows, like no person's: the agent dialogs' grace period
    (rat_tui/ui/screens/dialog.py) is off, except in tests marked `grace`, which type at human speed."""
    if request.node.get_closest_marker("grace") is None:
        from rat_tui.ui.screens import dialog

        monkeypatch.setattr(dialog, "GRACE_SECONDS", 0.0)


@pytest.fixture
def record_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Where a fake agent writes every line it receives from rat-tui.

    After the test, every message rat-tui sent is validated against the ACP schema `$defs` of its
    method (answers to the agent's requests against the method of the request they answer).
    """
    path = tmp_path / "received.jsonl"
    monkeypatch.setenv("RAT_FAKE_RECORD", str(path))
    yield path
    assert_sent_messages_valid(path)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project folder (README.md, notes.txt) for an agent to work in."""
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "README.md").write_text("# Sample project\n\nalpha\nbeta\n")
    (ws / "notes.txt").write_text("gamma\n")
    return ws


@pytest.fixture(autouse=True)
def labels_at_once_in_snapshots(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot must not depend on when the agent paused: a tab label that changes width is put off until
    it does (ui/tabs/tab_bar.py QUIET_RELABEL), and Textual moves the tab's underline a refresh after the
    label, so a label shown just before the screenshot could leave the underline where it was. In snapshot
    tests labels change at once, as before the deferral."""
    if "snap_compare" in request.fixturenames:
        from rat_tui.ui.tabs import tab_bar

        monkeypatch.setattr(tab_bar, "MAX_RELABEL_DELAY", 0.0)
