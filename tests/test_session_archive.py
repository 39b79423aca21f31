"""`session/archive` / `session/unarchive` (unstable, ACP 1.34) in the agent's session list (Ctrl+B) and in
history (Ctrl+R), offered only where the agent advertises `sessionCapabilities.archive`.

The shapes, as agentclientprotocol.com/rfds/session-archive and the unstable schema give them:
`session/archive {sessionId}` and `session/unarchive {sessionId}` answer `{}`; `session/list` takes
`archived: "exclude" | "include" | "only"` (omitted: exclude) and marks each row `archived: true|false`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from rat_tui.app import RatApp
from rat_tui.ui.screens.session_browser import SessionBrowserScreen

from .helpers.agents import received, sent
from .helpers.app import scripted_named, until, view

ARCHIVING = {"loadSession": True, "sessionCapabilities": {"list": {}, "archive": {}}}


@pytest.fixture(autouse=True)
def unstable_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAT_ACP_SCHEMA_UNSTABLE", "1")  # archive and the list's filter are unstable


def rows(here: str, archived: bool | None = None) -> dict:
    second = {"sessionId": "s-b", "cwd": here, "title": "Write docs"}
    if archived is not None:
        second["archived"] = archived
    return {"sessions": [{"sessionId": "s-a", "cwd": here, "title": "Fix the parser", "archived": False}, second]}


def prompts(app: RatApp) -> list[str]:
    options = app.screen.query_one(OptionList)
    return [str(options.get_option_at_index(i).prompt).split("\n")[0] for i in range(options.option_count)]


async def open_list(pilot, app: RatApp, count: int) -> SessionBrowserScreen:  # noqa: ANN001
    await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
    await pilot.press("ctrl+b")
    await until(pilot, lambda: isinstance(app.screen, SessionBrowserScreen)
                and app.screen.query_one(OptionList).option_count == count, "the list")
    return app.screen


async def test_archive_hides_a_session_and_the_toggle_shows_it_to_unarchive(tmp_path: Path, record_file: Path) -> None:
    here = str(tmp_path)
    refused = {"error": {"code": -32002, "message": "Resource not found: s-b"}}
    script = {"initialize_result": {"agentCapabilities": ARCHIVING},
              "on_request": {"session/list": [[{"respond": rows(here)}], [{"respond": rows(here, archived=True)}],
                                              [{"respond": rows(here, archived=False)}]],
                             "session/archive": [[refused], []], "session/unarchive": [[]]}}
    app = RatApp(scripted_named(script, tmp_path, "archiver"), tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_list(pilot, app, 2)
        assert "x archives · h shows archived" in str(screen.query_one(".keys").render())
        assert "archived" not in sent(record_file, "session/list")[0]["params"]  # the default: exclude
        await pilot.press("down", "x")  # refused: said, the row kept
        await until(pilot, lambda: "Could not archive the session" in str(screen.query_one(".message").render()),
                    "the refusal said")
        assert prompts(app) == ["Fix the parser", "Write docs"]
        await pilot.press("x")
        await until(pilot, lambda: prompts(app) == ["Fix the parser"], "the archived row hidden")
        assert [m["params"] for m in sent(record_file, "session/archive")] == [{"sessionId": "s-b"}] * 2
        assert "h shows archived" in str(screen.query_one(".message").render())
        await pilot.press("h")  # archived ones shown, marked
        await until(pilot, lambda: prompts(app) == ["Fix the parser", "archived  Write docs"], "the archived shown")
        assert sent(record_file, "session/list")[1]["params"]["archived"] == "include"
        await pilot.press("down", "x")
        await until(pilot, lambda: prompts(app) == ["Fix the parser", "Write docs"], "unarchived")
        assert [m["params"] for m in sent(record_file, "session/unarchive")] == [{"sessionId": "s-b"}]
        await pilot.press("h")
        await until(pilot, lambda: len(sent(record_file, "session/list")) == 3, "listed again")
        assert "archived" not in sent(record_file, "session/list")[2]["params"]


async def test_an_archived_session_is_unarchived_before_it_is_opened(tmp_path: Path, record_file: Path) -> None:
    here = str(tmp_path)
    script = {"initialize_result": {"agentCapabilities": ARCHIVING},
              "on_request": {"session/list": [[{"respond": rows(here)}], [{"respond": rows(here, archived=True)}]],
                             "session/unarchive": [[]]}}
    app = RatApp(scripted_named(script, tmp_path, "archiver"), tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await open_list(pilot, app, 2)
        await pilot.press("h")
        await until(pilot, lambda: prompts(app) == ["Fix the parser", "archived  Write docs"], "the archived shown")
        await pilot.press("down", "enter")
        await until(pilot, lambda: len(app.tabs.views) == 2 and app.tabs.active_view.session.session_id == "s-b",
                    "the session opened")
    assert [m["params"] for m in sent(record_file, "session/unarchive")] == [{"sessionId": "s-b"}]
    methods = [m.get("method") for m in received(record_file)]
    assert methods.index("session/unarchive") < methods.index("session/load")  # unarchived first


async def test_no_archive_where_the_agent_does_not_offer_it(tmp_path: Path, record_file: Path) -> None:
    here = str(tmp_path)
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}}},
              "on_request": {"session/list": [[{"respond": rows(here)}]]}}
    app = RatApp(scripted_named(script, tmp_path, "plain"), tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await open_list(pilot, app, 2)
        assert "archive" not in str(screen.query_one(".keys").render())
        assert screen.check_action("archive", ()) is False and screen.check_action("toggle_archived", ()) is False
        await pilot.press("down", "x", "h", "r")  # r lists again: the keys before it were handled by then
        await until(pilot, lambda: len(sent(record_file, "session/list")) == 2, "listed again")
        assert sent(record_file, "session/archive") == []
        assert all("archived" not in m["params"] for m in sent(record_file, "session/list"))


async def test_this_tabs_own_session_is_not_archived_under_it(tmp_path: Path, record_file: Path) -> None:
    listing = {"sessions": [{"sessionId": "sess-1", "cwd": str(tmp_path), "title": "This one"}]}
    script = {"initialize_result": {"agentCapabilities": ARCHIVING},
              "on_request": {"session/list": [[{"respond": listing}]]}}
    app = RatApp(scripted_named(script, tmp_path, "archiver"), tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await open_list(pilot, app, 1)
        await pilot.press("x")
        await until(pilot, lambda: any("this tab's own session" in n.message for n in app._notifications),
                    "the refusal")
        assert sent(record_file, "session/archive") == []


def notified(app: RatApp, text: str) -> bool:
    return any(text in n.message for n in app._notifications)


async def test_history_archives_a_record_with_its_agent_and_hides_it(tmp_path: Path, record_file: Path) -> None:
    from rat_tui.ui.screens.history import HistoryScreen, HistoryTranscriptScreen

    from .helpers.history import first_view, prompt, scripted_in

    caps = {"initialize_result": {"agentCapabilities": ARCHIVING}}
    project = tmp_path / "proj"
    app = RatApp(scripted_in({**caps, "session_id": "sess-old", "turns": [[{"chunk": "an answer"}]]}, project), project)
    async with app.run_test(size=(140, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        await prompt(pilot, app, "first words", "an answer")
        # Open in this tab: archiving would close the agent's session under it.
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen) and len(app.screen.rows) == 1, "the list")
        await pilot.press("alt+a")
        await until(pilot, lambda: notified(app, "open in a tab: close it first"), "the refusal")
    # rat again, another agent that does not archive, prompted once: two records now.
    other = tmp_path / "other"
    app = RatApp(scripted_in({"turns": [[{"chunk": "other answer"}]]}, other), other)
    async with app.run_test(size=(140, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        await prompt(pilot, app, "other words", "other answer")
        await pilot.press("ctrl+r")
        screen = app.screen
        assert isinstance(screen, HistoryScreen) and [i.first_prompt for i in screen.rows] == ["other words",
                                                                                                "first words"]
        # Its own record, open here and of an agent that does not archive: Alt+A is not offered on it.
        assert screen.check_action("archive", ()) is False
        await pilot.press("down")  # the first record: its agent archives (its initialize said so), not open
        await until(pilot, lambda: screen.check_action("archive", ()) is True, "offered on the archiving record")
        await pilot.press("alt+a")
        await until(pilot, lambda: notified(app, "Open a tab on Scripted fake agent first"), "what to do")
        assert not screen.rows[1].archived and sent(record_file, "session/archive") == []
    # rat again on the record's agent (a new session): that tab's agent archives the record's session.
    script = {**caps, "session_id": "sess-new", "on_request": {"session/archive": [[]], "session/unarchive": [[]]}}
    app = RatApp(scripted_in(script, project), project)
    async with app.run_test(size=(140, 36)) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        await pilot.press("ctrl+r")
        screen = app.screen
        assert isinstance(screen, HistoryScreen) and [i.first_prompt for i in screen.rows] == ["other words",
                                                                                                "first words"]
        await pilot.press("down", "alt+a")
        await until(pilot, lambda: [i.first_prompt for i in screen.rows] == ["other words"], "the archived one hidden")
        assert [m["params"] for m in sent(record_file, "session/archive")] == [{"sessionId": "sess-old"}]
        assert notified(app, "Archived the session with Scripted fake agent")
        await pilot.press("alt+h")
        await until(pilot, lambda: len(screen.rows) == 2 and screen.rows[1].archived, "the archived shown")
        assert str(screen.table.get_row_at(1)[3]) == "archived · first words"
        assert "(archived shown)" in str(screen.status.render())
        await pilot.press("down")
        await until(pilot, lambda: screen.selected is screen.rows[1], "the archived one chosen")
        await pilot.press("alt+a")
        await until(pilot, lambda: len(screen.rows) == 2 and not screen.rows[1].archived, "unarchived")
        assert [m["params"] for m in sent(record_file, "session/unarchive")] == [{"sessionId": "sess-old"}]
        await pilot.press("alt+h")
        await until(pilot, lambda: "(archived shown)" not in str(screen.status.render()), "archived hidden again")
        assert len(screen.rows) == 2  # unarchived: listed by default again
        # Archived again, then continued (c): unarchived with its agent before the new tab loads it.
        await pilot.press("down", "alt+a")
        await until(pilot, lambda: len(sent(record_file, "session/archive")) == 2 and len(screen.rows) == 1,
                    "archived again")
        await pilot.press("alt+h")
        await until(pilot, lambda: len(screen.rows) == 2, "the archived shown again")
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, HistoryTranscriptScreen) and app.screen.session.done,
                    "the record's transcript")
        await pilot.press("c")
        await until(pilot, lambda: any(m.get("method") == "session/load" for m in received(record_file)), "the load")
        methods = [m.get("method") for m in received(record_file)]
        assert methods.count("session/unarchive") == 2
        assert methods.index("session/load") > len(methods) - 1 - methods[::-1].index("session/unarchive")


def test_a_journal_from_before_the_archived_table_opens_and_archives(tmp_path: Path) -> None:
    import sqlite3

    from rat_tui.history.journal import HistoryJournal

    path = tmp_path / "history.sqlite3"
    old = sqlite3.connect(path)  # the tables as a journal written before archiving existed has them
    old.executescript("""
        CREATE TABLE sessions (id INTEGER PRIMARY KEY, agent TEXT NOT NULL, agent_title TEXT, argv TEXT NOT NULL,
            cwd TEXT NOT NULL, agent_session_id TEXT, title TEXT, first_prompt TEXT, created REAL NOT NULL,
            updated REAL NOT NULL, messages INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0,
            draft TEXT NOT NULL DEFAULT '', settings TEXT NOT NULL DEFAULT '{}');
        CREATE TABLE messages (id INTEGER PRIMARY KEY, session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE
            CASCADE, t REAL NOT NULL, dir TEXT NOT NULL, method TEXT, body TEXT NOT NULL, text TEXT);
        INSERT INTO sessions(agent, argv, cwd, agent_session_id, first_prompt, created, updated)
            VALUES ('a', '["a"]', '/p', 's-1', 'hello', 1, 1);
    """)
    old.commit()
    old.close()
    journal = HistoryJournal(path)
    try:
        [info] = journal.sessions()
        assert not info.archived
        journal.set_archived(info.id, True)
        assert journal.sessions(include_archived=False) == [] and journal.session(info.id).archived
        journal.delete(info.id)  # its archived mark goes with it
        assert journal.sessions() == []
    finally:
        journal.close()
