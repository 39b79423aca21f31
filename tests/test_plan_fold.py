"""The plan panel folds to one line when every entry is done, and when a new turn's agent answers without
sending a plan (the plan shown is an earlier turn's); F2 or a click unfolds it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from rat_tui.app import RatApp
from rat_tui.state.models import PlanItem

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


def items(*statuses: str) -> tuple[PlanItem, ...]:
    return tuple(PlanItem(f"Step {n}", "medium", status) for n, status in enumerate(statuses))


@pytest.mark.slow
async def test_a_plan_update_lays_the_screen_out_only_when_the_panel_s_height_changes(tmp_path: Path) -> None:
    """Statuses changing (in the checklist, then in the folded summary) draw the panel again without a
    layout of the whole screen (30 ms each in a replay); an entry more, or the panel folding, lays it out
    and the panel takes its new height."""
    app = RatApp(scripted({}, tmp_path), tmp_path)
    layouts: list[str] = []
    async with app.run_test(size=(100, 36)) as pilot:
        panel = view(app).plan_panel
        refresh = panel.refresh

        def counted(*regions, layout: bool = False, **kwargs):
            if layout:
                layouts.append(panel_text(app).partition("\n")[0])
            return refresh(*regions, layout=layout, **kwargs)

        panel.refresh = counted  # type: ignore[method-assign]
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        panel.plan_changed()
        panel.show_plan(items("in_progress", "pending", "pending", "pending"))
        await until(pilot, lambda: panel.size.height == 5, "the plan shown, five lines")
        panel.show_plan(items("completed", "in_progress", "pending", "pending"))  # measured once shown
        await pilot.pause()
        layouts.clear()
        for done in range(2, 4):
            panel.show_plan(items(*(["completed"] * done + ["in_progress"] + ["pending"] * (3 - done))))
            await pilot.pause()
            assert f"◐ Step {done}" in panel_text(app)
        assert layouts == [] and panel.size.height == 5

        panel.show_plan(items("completed", "completed", "completed", "completed", "in_progress"))
        await until(pilot, lambda: panel.size.height == 6, "the panel one line taller")
        assert layouts and set(layouts) == {"Plan 4/5"}  # (Textual lays the panel out again as it grows)
        grown = len(layouts)

        panel.agent_answered()  # (a turn without a plan) ...
        panel.turn_started()
        assert panel.agent_answered() and panel.folded  # ... folds it to its summary
        panel.show_plan(panel.items)
        await until(pilot, lambda: panel.size.height == 1, "the panel folded to one line")
        folded = len(layouts)
        assert folded > grown
        panel.show_plan(items("completed", "completed", "completed", "completed", "completed"))
        await pilot.pause()
        assert panel_text(app).startswith("Plan of an earlier turn ✓ 5/5 done") and len(layouts) == folded

        # Hidden (F2), a plan changing lays out nothing; shown again, it has the latest plan at its height.
        panel.plan_changed()
        panel.toggle()
        await until(pilot, lambda: not panel.display and panel.size.height == 0, "the panel hidden")
        layouts.clear()
        for done in range(3):
            panel.show_plan(items(*(["completed"] * done + ["in_progress"] + ["pending"] * (3 - done))))
            await pilot.pause()
        assert layouts == []
        panel.toggle()
        await until(pilot, lambda: panel.size.height == 5, "the panel shown again, five lines")
        assert "◐ Step 2" in panel_text(app)


@pytest.mark.slow
async def test_a_session_without_a_plan_mounts_no_panel_and_one_that_comes_later_still_folds(tmp_path: Path) -> None:
    """The panel is mounted with the first plan, not at the first prompt (a mount and a layout of the whole
    screen as the answer began); a plan that comes in a later turn folds as ever when a turn leaves it."""
    from rat_tui.ui.widgets.plan_panel import PlanPanel

    turns = [[{"chunk": "No plan here."}], [plan("in_progress", "pending"), {"chunk": "Planned."}],
             [{"chunk": "Something else."}]]
    app = RatApp(scripted({"turns": turns}, tmp_path), tmp_path)
    async with app.run_test(size=(100, 36)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await send(pilot, "one")
        await until(pilot, lambda: "No plan here" in view(app).transcript.plain_text, "the first answer")
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "the first turn's end")
        assert not app.query(PlanPanel)
        await send(pilot, "two")
        await until(pilot, lambda: "Planned" in view(app).transcript.plain_text, "the second answer")
        panel = app.query_one(PlanPanel)
        assert not panel.folded and "◐ Step 0" in panel_text(app)
        await send(pilot, "three")
        await until(pilot, lambda: "Something else" in view(app).transcript.plain_text, "the third answer")
        await until(pilot, lambda: panel.folded, "the plan folded")


async def test_a_replay_s_plans_are_drawn_once_where_they_ended(tmp_path: Path, monkeypatch) -> None:
    """A `session/load` replays history: turn after turn, a plan comes and the next answer folds it. Drawn at
    each delivery, that laid the whole screen out again and again (30-60 ms each, ten times in the load50000
    replay of bench/stress.py), each a stall for a key typed meanwhile. The panel is drawn once the replay is
    over, with the plan where it ended. The user types in the new tab meanwhile."""
    from rat_tui.ui.widgets.plan_panel import PlanPanel

    release = tmp_path / "release"
    history: list[dict] = []
    for turn in range(6):
        history += [{"update": {"sessionUpdate": "user_message_chunk",
                                "content": {"type": "text", "text": f"question {turn}"}}},
                    plan(*(["completed"] * turn + ["in_progress"])) if turn % 2 == 0 else
                    {"update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "no plan"}}},
                    {"sleep": 0.05}]  # (a delivery each)
    history.insert(len(history) // 2, {"wait_file": str(release)})
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True}},
              "on_request": {"session/load": [history]}}
    shown: list[bool] = []  # each time the panel draws a plan: during the replay?
    show_plan = PlanPanel.show_plan
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        session = await app.open_session(app.launched, tmp_path, attach_session_id="old")

        def recording(panel: PlanPanel, items, plans=None) -> None:
            shown.append(session.opener.replay is not None)
            show_plan(panel, items, plans)

        monkeypatch.setattr(PlanPanel, "show_plan", recording)
        await until(pilot, lambda: len(session.state.entries) >= 4, "half the replay")
        await pilot.press(*"typed")
        release.write_text("")
        await until(pilot, lambda: session.state.status == "ready", "the replay over")
        loaded = app.tabs.active_view
        await until(pilot, lambda: shown != [], "the plan drawn")
        assert shown == [False]
        assert loaded.composer.text == "typed"
        panel = loaded.plan_panel
        assert [item.content for item in panel.items] == [f"Step {n}" for n in range(5)]
        console = Console(width=96, record=True, file=io.StringIO())
        console.print(panel.content)
        drawn = console.export_text()
        assert "Plan 4/5" in drawn and "◐ Step 4" in drawn
