"""F3's review offers only files inside the working directory (or one rat wrote outside it with the
user's approval, marked so): a diff an agent names outside it, by an absolute path, `..` or a symlink
leading out, is not listed, over real pipes with the real app."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from rat_tui.agents.spec import AgentSpec
from rat_tui.app import RatApp
from rat_tui.ui.screens.change_review import ChangeReviewScreen

from .helpers.agents import scripted_argv
from .helpers.app import send, until, view

pytestmark = pytest.mark.slow


def diff_call(call_id: str, path: str, status: str = "completed") -> dict:
    return {"update": {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": f"Edit {path}", "kind": "edit",
                       "status": status, "content": [{"type": "diff", "path": path, "oldText": "victim\n",
                                                      "newText": "owned\n"}]}}


async def test_review_does_not_offer_a_file_outside_the_working_directory(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "victim.txt").write_text("owned\n")  # as if the agent had edited it
    (project / "link").symlink_to(outside)
    (project / "inside.txt").write_text("owned\n")
    steps = [
        diff_call("p1", str(outside / "victim.txt"), "pending"), diff_call("p2", "../outside/victim.txt", "pending"),
        diff_call("p3", str(project / "link" / "victim.txt"), "pending"), diff_call("p4", str(project / "inside.txt"), "pending"),
        diff_call("p1", str(outside / "victim.txt")), diff_call("p2", "../outside/victim.txt"),
        diff_call("p3", str(project / "link" / "victim.txt")), diff_call("p4", str(project / "inside.txt")),
        {"chunk": "edited"},
    ]
    argv = scripted_argv({"turns": [steps]}, tmp_path)
    app = RatApp(AgentSpec(name="scripted", argv=argv, env={}, is_demo=False), project)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "edit")
        await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn")
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, ChangeReviewScreen), "the review screen")
        labels = [option.prompt.plain for option in app.screen.query_one(OptionList).options]
        print(labels)
        assert not any("victim" in label or "outside" in label for label in labels), labels
    assert (outside / "victim.txt").read_text() == "owned\n"


def test_a_stored_record_of_an_outside_diff_is_not_offered_and_an_approved_write_is_marked(tmp_path: Path) -> None:
    """A tracker holding such a record anyway (an older rat's manifest) lists it neither; a file rat wrote
    outside after the user allowed it is listed, marked as outside."""
    from rat_tui.session.change_tracker import ChangeTracker

    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    tracker = ChangeTracker.create(str(project), root=tmp_path / "changes")
    tracker.begin_turn(1, "edit")
    tracker.record(str(outside / "named-by-a-diff.txt"), "a\n", "b\n", "diff")
    tracker.record(str(outside / "approved.txt"), "a\n", "b\n", "write")
    tracker.record(str(project / "inside.txt"), "a\n", "b\n", "diff")
    screen = ChangeReviewScreen([tracker])
    listed = [row.change.path for row in screen.rows if row.change is not None]
    assert listed == [str(outside / "approved.txt"), str(project / "inside.txt")]

    from textual.app import App

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(screen)

    async def look() -> list[str]:
        async with Host().run_test(size=(120, 20)) as pilot:
            await pilot.pause()
            return [option.prompt.plain for option in screen.query_one(OptionList).options]

    import asyncio

    labels = asyncio.run(look())
    assert labels[0] == "Turn 1 · edit · 2 files"
    assert "approved.txt" in labels[1] and "(outside the working directory: written with your approval)" in labels[1]
    assert "inside.txt" in labels[2] and "outside" not in labels[2]
