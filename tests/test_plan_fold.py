"""The plan panel folds to one line when every entry is done, and when a new turn's agent answers without
sending a plan (the plan shown is an earlier turn's); F2 or a click unfolds it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from rat_tui.app import RatApp

from .helpers.app import scripted_named as scripted
from .helpers.app import send, until, view


def plan(*statuses: str) -> dict:
    return {"update": {"sessionUpdate": "plan", "entries": [
        {"content": f"Step {n}", "priority": "medium", "status": status} for n, status in enumerate(statuses)]}}


TURNS = [
    [plan("in_progress", "pending"), {"chunk": "Working on step 0."}],
    [{"chunk": "Something else, no plan."}],
    [plan("completed", "completed"), {"chunk": "All done."}],
    [{"update": {"sessionUpdate": "plan_update", "plan": {"planId": "docs", "type": "items", "entries": [
        {"content": "Write the docs", "priority": "low", "status": "in_progress"}]}}},
     {"chunk": "A keyed plan."}],
]


def panel_text(app: RatApp) -> str:
    """The panel's lines as drawn."""
    panel = view(app).plan_panel
    console = Console(width=96, record=True, file=io.StringIO())
    console.print(panel.content)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


@pytest.mark.slow
async def test_plan_folds_when_done_and_when_a_turn_leaves_it_behind(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": TURNS}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 36)) as pilot:
        panel = view(app).plan_panel
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "one")
        await until(pilot, lambda: "Working on step 0" in view(app).transcript.plain_text, "the first answer")
        assert not panel.folded and "◐ Step 0" in panel_text(app) and panel.size.height > 1

        await send(pilot, "two")  # this turn sends no plan before its answer
        await until(pilot, lambda: "no plan" in view(app).transcript.plain_text, "the second answer")
        await until(pilot, lambda: panel.folded, "the plan folded")
        assert panel_text(app) == "Plan of an earlier turn ◐ 0/2 done · f2 shows it"
        await until(pilot, lambda: panel.size.height == 1, "the panel one line high")
        await pilot.press("f2")  # unfolds it, does not hide it
        assert not panel.folded and "◐ Step 0" in panel_text(app) and not panel.has_class("-hidden")

        await send(pilot, "three")  # a new plan, every entry done
        await until(pilot, lambda: "All done" in view(app).transcript.plain_text, "the third answer")
        await until(pilot, lambda: panel.folded, "the done plan folded")
        assert panel_text(app) == "Plan ✓ 2/2 done · f2 shows it"
        await pilot.click(panel)  # a click unfolds it too
        assert not panel.folded and "● Step 1" in panel_text(app)
        await pilot.press("f2")  # then the key hides the panel, as on any plan
        assert panel.has_class("-hidden")
        await pilot.press("f2")
        assert not panel.has_class("-hidden") and panel.folded  # shown again, folded again

        await send(pilot, "four")  # a keyed plan not done: the whole panel unfolds
        await until(pilot, lambda: "A keyed plan" in view(app).transcript.plain_text, "the fourth answer")
        await until(pilot, lambda: not panel.folded, "the panel unfolded")
        assert "Write the docs" in panel_text(app)
