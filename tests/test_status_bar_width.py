"""The status bar at narrow widths: parts shortened with an ellipsis, then dropped, by priority; the agent's
name, the state word and a waiting request always stay."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.text import Text

from rat_tui.app import RatApp
from rat_tui.ui.widgets.status_fit import Part, fit

from .helpers.app import scripted_named, until, view
from .helpers.config_options import LEGACY_MODELS, LEGACY_MODES

PLAN = [{"content": f"Step {n}", "priority": "medium", "status": "completed" if n < 2 else "pending"} for n in range(5)]


def script(release: Path) -> dict:
    return {"new_session_result": {"modes": LEGACY_MODES, "models": LEGACY_MODELS},
            "turns": [[
                {"update": {"sessionUpdate": "session_info_update", "title": "Fix the flaky login test on CI"}},
                {"update": {"sessionUpdate": "usage_update", "used": 124_000, "size": 200_000,
                            "cost": {"amount": 0.42, "currency": "USD"}}},
                {"update": {"sessionUpdate": "plan", "entries": PLAN}},
                {"wait_file": str(release)},
                {"request": {"id": "perm-1", "method": "session/request_permission", "params": {
                    "sessionId": "$SESSION",
                    "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                                {"optionId": "reject", "name": "Reject", "kind": "reject_once"}],
                    "toolCall": {"toolCallId": "rm-1", "title": "rm -rf build", "kind": "execute"}}}},
            ]]}


def bar_text(app: RatApp) -> str:
    return str(view(app).status_bar.content)


@pytest.mark.slow
async def test_status_bar_keeps_what_matters_at_80_and_60_columns(tmp_path: Path) -> None:
    release = tmp_path / "release"
    cwd = tmp_path / "a-rather-long-project-directory-name"
    cwd.mkdir()
    app = RatApp(scripted_named(script(release), tmp_path, "agent"), cwd)
    async with app.run_test(size=(320, 30)) as pilot:
        await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: view(app).session.state.plan, "the plan")
        await pilot.press(*"a draft")  # typing: the request waits, announced in the status bar
        release.touch()
        await until(pilot, lambda: view(app).status_bar.waiting == 1, "the request announced")
        await pilot.pause()
        wide = bar_text(app)
        for piece in ("Scripted fake agent", "● working", "⚠ 1 request waiting · ^g opens", "mode Default",
                      "model Default (recommended)", "plan 2/5", "ctx ▰▰▰▱▱ 62% 124k/200k  $0.42",
                      "Fix the flaky login test on CI", str(cwd)):
            assert piece in wide, (piece, wide)

        await pilot.resize_terminal(80, 30)
        await until(pilot, lambda: view(app).status_bar.outer_size.width == 80, "80 columns")
        narrow = bar_text(app)
        assert cell_len(narrow) <= 78, narrow
        assert narrow.startswith("Scripted fake agent  ● working") and "⚠ 1 request waiting · ^g opens" in narrow
        assert narrow.endswith("  │ Default")  # the mode, shortened to its name: kept longest of the others
        assert "ctx" not in narrow and "plan" not in narrow and cwd.name not in narrow and "Fix the" not in narrow

        await pilot.resize_terminal(60, 30)
        await until(pilot, lambda: view(app).status_bar.outer_size.width == 60, "60 columns")
        narrowest = bar_text(app)
        assert cell_len(narrowest) <= 58, narrowest
        assert narrowest.startswith("Scripted fake agent  ● working") and "⚠ 1 " in narrowest and "^g" in narrowest
        assert "plan" not in narrowest and "ctx" not in narrowest

        await pilot.resize_terminal(30, 30)
        await until(pilot, lambda: view(app).status_bar.outer_size.width == 30, "30 columns")
        tiny = bar_text(app)
        assert "working" in tiny and "⚠ 1" in tiny and tiny.startswith("Scri")  # never dropped

        await pilot.resize_terminal(320, 30)
        await until(pilot, lambda: view(app).status_bar.outer_size.width == 320, "320 columns")
        assert bar_text(app) == wide  # nothing lost for good


def test_fit_shortens_the_lowest_priority_first_then_drops_it() -> None:
    parts = lambda: [Part(Text("agent"), 100, essential=True), Part(Text("● ready"), 100, prefix="  ", essential=True),  # noqa: E731
                     Part(Text("mode Accept edits"), 50, shorten="end"),
                     Part(Text("/home/user/src/project"), 10, shorten="start")]
    assert fit(parts(), None).plain == "agent  ● ready  │ mode Accept edits  │ /home/user/src/project"
    assert fit(parts(), 61).plain == "agent  ● ready  │ mode Accept edits  │ /home/user/src/project"
    assert fit(parts(), 50).plain == "agent  ● ready  │ mode Accept edits  │ …rc/project"  # a path: its end kept
    assert fit(parts(), 48).plain == "agent  ● ready  │ mode Accept edits  │ …/project"
    assert fit(parts(), 45).plain == "agent  ● ready  │ mode Accept edits"  # shorter than 8 cells: dropped
    assert fit(parts(), 30).plain == "agent  ● ready  │ mode Accept…"
    assert fit(parts(), 20).plain == "agent  ● ready"
    assert fit(parts(), 5).plain == "agent  ● ready"  # the essentials stay, whatever the width


def test_fit_shortens_essentials_last_compact_form_first() -> None:
    parts = [Part(Text("A very long agent name"), 100, essential=True, shorten="end", min_cells=6),
             Part(Text("● working"), 100, prefix="  ", essential=True),
             Part(Text("⚠ 1 request waiting · ^g opens"), 90, essential=True, compact=Text("⚠ 1 waiting · ^g")),
             Part(Text("plan 1/2"), 20)]
    assert fit(parts, 58).plain == "A very long agent name  ● working  │ ⚠ 1 waiting · ^g"
    assert fit(parts, 42).plain == "A very lon…  ● working  │ ⚠ 1 waiting · ^g"
    assert fit(parts, 200).plain == "A very long agent name  ● working  │ ⚠ 1 request waiting · ^g opens  │ plan 1/2"
