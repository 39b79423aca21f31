"""The UI reaches the app through one typed interface (rat_tui/ui/app_api.py), not attributes guessed by name."""

from __future__ import annotations

import ast
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Static

from rat_tui.agents.spec import demo_agent
from rat_tui.app import RatApp
from rat_tui.ui.app_api import RatAppAPI, rat_app

from .helpers.app import until, view

UI = Path(__file__).resolve().parents[1] / "rat_tui" / "ui"


class Host(App):
    def compose(self) -> ComposeResult:
        yield Static("a widget in another app", id="plain")


async def test_a_widget_finds_the_rat_app_it_runs_in_and_none_elsewhere(tmp_path: Path) -> None:
    app = RatApp(demo_agent(), tmp_path)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.is_mounted and app.tabs.active_view is not None, "the first tab")
        found = rat_app(view(app).transcript)
        assert found is app and isinstance(app, RatAppAPI)
        assert found.request_gate is app.request_gate and found.tabs is app.tabs
    host = Host()
    async with host.run_test():
        assert rat_app(host.query_one("#plain")) is None


def app_reaches_by_name(path: Path) -> list[int]:
    """Lines of `getattr(<...>.app, "name", ...)` (or of `app`): the app's attributes guessed by name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and node.args and isinstance(node.args[0], (ast.Attribute, ast.Name)):
            target = node.args[0]
            name = target.attr if isinstance(target, ast.Attribute) else target.id
            if name == "app":
                found.append(node.lineno)
    return found


def test_no_widget_reaches_into_the_app_by_attribute_name() -> None:
    reaches = {str(path.relative_to(UI)): lines for path in sorted(UI.rglob("*.py"))
               if not path.is_relative_to(UI / "textual_ext") and (lines := app_reaches_by_name(path))}
    assert reaches == {}, "ask the app through rat_tui/ui/app_api.py (rat_app) instead"
