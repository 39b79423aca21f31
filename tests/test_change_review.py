"""The change review in the real app (F3): files written through fs/ and diffs of an agent's own edits, reverted by key."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from rat_tui.app import RatApp
from rat_tui.session.change_tracker import ChangeTracker
from rat_tui.agents.spec import AgentSpec
from rat_tui.state.models import NoticeEntry
from rat_tui.ui.screens.change_review import ChangeReviewScreen
from rat_tui.ui.screens.confirm import ConfirmScreen
from rat_tui.ui.widgets.diff_view import DiffView

from .helpers.agents import scripted_argv
from .helpers.app import send, until, view

pytestmark = pytest.mark.slow

NOTES_OLD = "# Notes\n\nalpha\nbeta\n"
NOTES_NEW = "# Notes\n\nalpha\nbeta\ngamma\n"
# Two changes far enough apart to be two hunks.
CODE_OLD = "".join(f"value_{n} = {n}\n" for n in range(1, 21))
CODE_NEW = CODE_OLD.replace("value_2 = 2\n", "value_2 = 'two'\n").replace("value_19 = 19\n", "value_19 = 'nineteen'\n")


def agent_turn(project: Path) -> list[dict]:
    """Writes notes.md through the client, and reports a diff of app.py, which it edited itself."""
    return [
        {"request": {"method": "fs/write_text_file",
                     "params": {"sessionId": "$SESSION", "path": str(project / "notes.md"), "content": NOTES_NEW}}},
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "edit-1", "title": "Edit app.py", "kind": "edit",
                    "status": "completed", "locations": [{"path": str(project / "app.py")}],
                    "content": [{"type": "diff", "path": str(project / "app.py"),
                                 "oldText": CODE_OLD, "newText": CODE_NEW}]}},
        {"chunk": "Added gamma and renamed two values."},
    ]


def make_app(tmp_path: Path) -> tuple[RatApp, Path]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text(NOTES_OLD)
    # The agent's own edit of app.py has already happened on disk when it reports the diff.
    (project / "app.py").write_text(CODE_NEW)
    argv = scripted_argv({"turns": [agent_turn(project)]}, tmp_path)
    return RatApp(AgentSpec(name="scripted", argv=argv, env={}, is_demo=False), project), project


async def run_turn(app: RatApp, pilot) -> None:
    await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
    await send(pilot, "Add gamma, rename two")
    await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn")


def labels(screen: ChangeReviewScreen) -> list[str]:
    options = screen.query_one(OptionList).options
    return [option.prompt.plain for option in options]


async def test_review_lists_both_files_and_reverts_one_hunk(tmp_path: Path) -> None:
    app, project = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_turn(app, pilot)
        notices = [e.text for e in view(app).session.state.entries if isinstance(e, NoticeEntry)]
        assert "2 files changed in this turn · F3 to review" in notices

        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review screen")
        screen = app.screen
        assert labels(screen) == [
            "Turn 1 · Add gamma, rename two · 2 files",
            "  notes.md  +1 −0",
            "  app.py  +2 −2",
        ]
        diff = screen.query_one(DiffView)
        assert diff.diff.path == "notes.md"

        await pilot.press("j")
        assert diff.diff.path == "app.py" and len(diff.diff.hunks) == 2
        await pilot.press("enter", "n")
        assert diff.has_focus and diff.current_hunk == 1
        await pilot.press("h")
        await pilot.pause()
        assert (project / "app.py").read_text() == CODE_NEW.replace("value_19 = 'nineteen'", "value_19 = 19")
        assert (project / "notes.md").read_text() == NOTES_NEW
        assert len(diff.diff.hunks) == 1  # the diff shows what is left
        assert labels(screen)[2] == "  app.py  +1 −1"
        assert any("Reverted change 2 of app.py" in n.message for n in app._notifications)

        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ChangeReviewScreen), "back to the session")


async def test_revert_a_whole_turn_asks_first_and_survives_a_restart(tmp_path: Path) -> None:
    app, project = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_turn(app, pilot)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review screen")
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("n")  # not yet: nothing changes
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review again")
        assert (project / "notes.md").read_text() == NOTES_NEW

    # "After a restart": a new journal instance, loaded from the data dir, reverts the turn.
    [journal] = ChangeTracker.load_all(str(project))
    assert journal.revert_turn(1) == "Reverted turn 1: 2 files."
    assert (project / "notes.md").read_text() == NOTES_OLD
    assert (project / "app.py").read_text() == CODE_OLD


async def test_revert_turn_by_key(tmp_path: Path) -> None:
    app, project = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_turn(app, pilot)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review screen")
        screen = app.screen
        await pilot.press("R")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await until(pilot, lambda: app.screen is screen, "the review again")
        await pilot.pause()
        assert (project / "notes.md").read_text() == NOTES_OLD
        assert (project / "app.py").read_text() == CODE_OLD
        assert labels(screen)[1:] == ["  notes.md  unchanged", "  app.py  unchanged"]
        assert not screen.query_one(DiffView).diff.hunks


async def test_empty_review(tmp_path: Path) -> None:
    argv = scripted_argv({"turns": [[{"chunk": "Nothing to change."}]]}, tmp_path)
    app = RatApp(AgentSpec(name="scripted", argv=argv, env={}, is_demo=False), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_turn(app, pilot)
        assert not any(isinstance(e, NoticeEntry) for e in view(app).session.state.entries)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review screen")
        assert "No changes to review yet" in str(app.screen.query_one(".empty").render())
        assert not app.screen.query(OptionList)


def test_snapshot_change_review(snap_compare, tmp_path: Path) -> None:
    app, _ = make_app(tmp_path)

    async def run_before(pilot) -> None:
        await run_turn(app, pilot)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review screen")
        await pilot.press("j")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


async def test_older_sessions_of_this_directory_are_listed_and_revertable(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "old.txt").write_text("kept\n")
    earlier = ChangeTracker.create(str(project))  # a session before a restart of rat-tui
    earlier.begin_turn(1, "yesterday's work")
    (project / "old.txt").write_text("changed\n")
    earlier.record(str(project / "old.txt"), "kept\n", "changed\n", "write")
    argv = scripted_argv({"turns": [[{"chunk": "Nothing to change."}]]}, tmp_path)
    app = RatApp(AgentSpec(name="scripted", argv=argv, env={}, is_demo=False), project)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_turn(app, pilot)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review screen")
        found = labels(app.screen)
        assert found[0].startswith("Earlier session · ")
        assert found[1:] == ["Turn 1 · yesterday's work · 1 file", "  old.txt  +1 −1"]
        await pilot.press("r")
        await pilot.pause()
        assert (project / "old.txt").read_text() == "kept\n"


def toasts(app: RatApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_a_revert_by_one_key_can_be_undone_to_the_exact_bytes_and_mode(tmp_path: Path) -> None:
    app, project = make_app(tmp_path)
    notes = project / "notes.md"
    async with app.run_test(size=(100, 30)) as pilot:
        await run_turn(app, pilot)
        # The user's own edit after the agent's: CRLF and LF mixed, a byte that is not UTF-8, another mode.
        edited = b"# Notes\r\n\nalpha\nbeta\ngamma \xff\n"
        notes.write_bytes(edited)
        notes.chmod(0o640)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review screen")
        screen = app.screen
        before = labels(screen)[1]
        await pilot.press("r")  # notes.md, the highlighted file: reverted at once...
        await until(pilot, lambda: notes.read_text() == NOTES_OLD, "the revert")  # (in the file's CRLF)
        assert any(t.startswith("Reverted notes.md.") and t.endswith("u to undo") for t in toasts(app))
        await pilot.press("u")  # ...and undone: exactly what was there
        await until(pilot, lambda: notes.read_bytes() == edited, "the undo")
        assert notes.stat().st_mode & 0o777 == 0o640
        assert "Undid the revert of notes.md." in toasts(app)
        assert labels(screen)[1] == before

        await pilot.press("j", "h")  # app.py: its first change reverted, then edited by the user again
        app_py = project / "app.py"
        await until(pilot, lambda: "value_2 = 2\n" in app_py.read_text(), "the hunk reverted")
        app_py.write_text(app_py.read_text() + "# mine\n")
        await pilot.press("u")  # refused: the user's later edit stays
        await until(pilot, lambda: any("Not undone: app.py changed since the revert" in t for t in toasts(app)),
                    "the refusal")
        assert app_py.read_text().endswith("# mine\n") and "value_2 = 2\n" in app_py.read_text()
        assert sum(len(t.undo_steps) for t in screen.trackers) == 1  # kept: it can be undone once the file is back


async def test_undo_brings_back_a_file_the_revert_deleted(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    made = project / "new.txt"
    turn = [{"request": {"method": "fs/write_text_file",
                         "params": {"sessionId": "$SESSION", "path": str(made), "content": "fresh\n"}}}]
    argv = scripted_argv({"turns": [turn]}, tmp_path)
    app = RatApp(AgentSpec(name="scripted", argv=argv, env={}, is_demo=False), project)
    async with app.run_test(size=(100, 30)) as pilot:
        await run_turn(app, pilot)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review screen")
        await pilot.press("r")
        await until(pilot, lambda: not made.exists(), "the file deleted (the agent created it)")
        await pilot.press("u")
        await until(pilot, lambda: made.exists(), "the file back")
        assert made.read_text() == "fresh\n"
        await pilot.press("u")
        await until(pilot, lambda: "No revert to undo." in toasts(app), "nothing left to undo")
