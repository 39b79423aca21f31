"""The warm-up parses the agent dialogs' CSS ahead (ui/textual_ext/css_ahead.py): Textual parsed a widget class's default
CSS at its first mount, on the loop (the form dialog's first opening: 13 sources, about 18 ms, a key typed
meanwhile waiting)."""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.css.stylesheet import Stylesheet
from textual.widgets import Checkbox, Input, Select, Static
from textual.widgets._select import SelectCurrent, SelectOverlay

from rat_tui.app import RatApp
from rat_tui.ui.textual_ext import css_ahead
from rat_tui.ui.screens import elicitation, permission
from rat_tui.ui.screens.elicitation import ElicitationScreen
from rat_tui.ui.screens.permission import PermissionScreen

from .helpers.app import scripted_named, until


def keys(classes) -> list[tuple]:
    return [(css, where, True, tie, scope) for cls in classes for where, css, tie, scope in css_ahead.default_css(cls)]


async def test_after_the_warm_up_the_dialogs_mount_with_their_css_parsed(tmp_path: Path) -> None:
    app = RatApp(scripted_named({}, tmp_path, "one"), tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.warm_thread is not None, "the warm-up")
        await until(pilot, lambda: not app.warm_thread.is_alive(), "the warm-up's end")
        await pilot.pause()
        cache = app.stylesheet._parse_cache
        # The form's widgets, the overlay a Select composes (defined beside it), the permission dialog.
        wanted = keys([ElicitationScreen, Input, Select, SelectOverlay, SelectCurrent, Checkbox, PermissionScreen])
        assert wanted and all(key in cache for key in wanted)
        assert cache.maxsize >= css_ahead.CACHE_SIZE  # past 64 sources, every new class parsed all CSS again
        # Parsed, not added: no rule of a dialog not opened applies yet.
        assert not [where for where in app.stylesheet.source if where[1] == "ElicitationScreen.DEFAULT_CSS"]


def test_widget_classes_takes_the_modules_classes_and_their_neighbours() -> None:
    classes = css_ahead.widget_classes([elicitation, permission])
    assert {ElicitationScreen, PermissionScreen, Select, SelectOverlay, Static} <= set(classes)
    assert len(classes) == len(set(classes))


def test_rules_parsed_with_other_variables_are_not_stored() -> None:
    app_sheet = Stylesheet(variables=App().get_css_variables())
    parsed = css_ahead.parse_ahead(app_sheet, [ElicitationScreen])
    assert parsed[1]
    app_sheet.set_variables({**app_sheet._variables, "accent": "#0000ff"})  # a theme changed meanwhile
    assert css_ahead.store(app_sheet, parsed) == 0 and not app_sheet._parse_cache
    parsed = css_ahead.parse_ahead(app_sheet, [ElicitationScreen])
    assert css_ahead.store(app_sheet, parsed) == len(parsed[1])
    assert all(key in app_sheet._parse_cache for key in keys([ElicitationScreen]))


def test_css_with_errors_is_left_to_its_first_mount() -> None:
    class Broken(Static):
        DEFAULT_CSS = "Broken { colour: red; }"

    sheet = App().stylesheet
    _, parsed = css_ahead.parse_ahead(sheet, [Broken])
    assert not any("Broken" in key[0] for key in parsed)
