"""Textual's internals that rat_tui/ui/textual_ext/ uses are still what they were checked to be.

Fails on a Textual upgrade that changes them, naming what to re-check: a private name the package docstring lists
that is gone, a Textual method overridden there whose signature changed, a method whose body is copied or rewritten
there that changed in Textual, or another Textual version than the one the docstring names. After re-checking the
module named (and its tests), update the docstring and the tables below.
"""

from __future__ import annotations

from importlib.metadata import version

import pytest

import rat_tui.ui.textual_ext as textual_ext
from tests.helpers.textual_internals import listed, overrides, resolve, source_hash

# The signature of every Textual method a textual_ext class overrides (written by the helpers' `overrides()`).
SIGNATURES = {'textual._compositor.Compositor._get_renders': "(self, crop: 'Region | None' = None) -> 'Iterable[tuple[Region, "
                                                "Region, list[Strip]]]'",
 'textual._compositor.Compositor.render_partial_update': "(self) -> 'ChopsUpdate | None'",
 'textual._styles_cache.StylesCache.render': "(self, styles: 'StylesBase', size: 'Size', base_background: "
                                             "'Color', background: 'Color', render_content_line: "
                                             "'RenderLineCallback', filters: 'Sequence[LineFilter]', "
                                             "border_title: 'tuple[Content, Color, Color, Style] | None', "
                                             "border_subtitle: 'tuple[Content, Color, Color, Style] | None', "
                                             "content_size: 'Size | None' = None, padding: 'Spacing | None' = "
                                             "None, crop: 'Region | None' = None, opacity: 'float' = 1.0, "
                                             "ansi_theme: 'TerminalTheme' = <rich.terminal_theme.TerminalTheme "
                                             "object>, native_ansi: 'bool' = False) -> 'list[Strip]'",
 'textual._styles_cache.StylesCache.render_line': "(self, styles: 'StylesBase', y: 'int', size: 'Size', "
                                                  "content_size: 'Size', padding: 'Spacing', base_background: "
                                                  "'Color', background: 'Color', render_content_line: "
                                                  "'Callable[[int], Strip]', border_title: 'tuple[Content, "
                                                  "Color, Color, Style] | None', border_subtitle: "
                                                  "'tuple[Content, Color, Color, Style] | None', opacity: "
                                                  "'float', ansi_theme: 'TerminalTheme', native_ansi: 'bool') -> "
                                                  "'Strip'",
 'textual.app.App._display': "(self, screen: 'Screen', renderable: 'RenderableType | None') -> 'None'",
 'textual.app.App._handle_exception': "(self, error: 'Exception') -> 'None'",
 'textual.app.App._prune': "(self, *nodes: 'Widget', parent: 'DOMNode | None' = None) -> 'AwaitRemove'",
 'textual.app.App.on_event': "(self, event: 'events.Event') -> 'None'",
 'textual.app.App.refresh': "(self, *, repaint: 'bool' = True, layout: 'bool' = False, recompose: 'bool' = "
                            "False) -> 'Self'",
 'textual.dom.DOMNode._get_default_css': "(self) -> 'list[tuple[CSSLocation, str, int, str]]'",
 'textual.driver.Driver.process_message': "(self, message: 'messages.Message') -> 'None'",
 'textual.drivers.headless_driver.HeadlessDriver.start_application_mode': "(self) -> 'None'",
 'textual.drivers.headless_driver.HeadlessDriver.stop_application_mode': "(self) -> 'None'",
 'textual.drivers.headless_driver.HeadlessDriver.write': "(self, data: 'str') -> 'None'",
 'textual.drivers.linux_driver.LinuxDriver.process_message': "(self, message: 'Message') -> 'None'",
 'textual.drivers.linux_driver.LinuxDriver.start_application_mode': '(self)',
 'textual.drivers.linux_driver.LinuxDriver.stop_application_mode': "(self) -> 'None'",
 'textual.drivers.linux_driver.LinuxDriver.write': "(self, data: 'str') -> 'None'",
 'textual.message_pump.MessagePump.on_event': "(self, event: 'events.Event') -> 'None'",
 'textual.screen.Screen._compositor_refresh': "(self) -> 'None'",
 'textual.screen.Screen._extend_compose': "(self, widgets: 'list[Widget]') -> 'None'",
 'textual.screen.Screen._on_screen_resume': "(self, event: 'events.ScreenResume') -> 'None'",
 'textual.screen.Screen._on_timer_update': "(self) -> 'None'",
 'textual.screen.Screen._on_update': "(self, message: 'messages.Update') -> 'None'",
 'textual.screen.Screen.dismiss': "(self, result: 'ScreenResultType | None' = None) -> 'AwaitComplete'",
 'textual.scroll_view.ScrollView._size_updated': "(self, size: 'Size', virtual_size: 'Size', container_size: "
                                                 "'Size', layout: 'bool' = True) -> 'bool'",
 'textual.widget.Widget._render_content': "(self) -> 'None'",
 'textual.widget.Widget._scroll_update': "(self, virtual_size: 'Size') -> 'None'",
 'textual.widget.Widget.refresh': "(self, *regions: 'Region', repaint: 'bool' = True, layout: 'bool' = False, "
                                  "recompose: 'bool' = False) -> 'Self'",
 'textual.widgets._text_area.TextArea._on_paste': "(self, event: 'events.Paste') -> 'None'"}

COPIED = {'textual._compositor.Compositor.render_partial_update': '888dccc892d8ecc2',
 'textual._styles_cache.StylesCache.render_line': '928d7496e850dbf6',
 'textual.screen.Screen._on_screen_resume': 'f39caa8ec4424d3c',
 'textual.widget.Widget._render_content': '50c545576ca20403',
 'textual.widget.Widget.vertical_scrollbar': '6b140a728f0b50e4'}


def test_textual_is_the_version_the_package_was_checked_against() -> None:
    installed = version("textual")
    assert installed == textual_ext.TEXTUAL_VERSION, (
        f"Textual {installed} is installed; rat_tui/ui/textual_ext/ was checked against {textual_ext.TEXTUAL_VERSION}."
        " Run tests/textual_ext/, re-check each module its __init__ docstring lists, then update TEXTUAL_VERSION")
    assert f"Checked against Textual {textual_ext.TEXTUAL_VERSION}." in (textual_ext.__doc__ or "")


def test_the_docstring_lists_names_under_each_module() -> None:
    names = listed()
    assert len(names) > 50
    modules = {name.module for name in names}
    assert {"frames", "screens", "driver", "keys", "dismiss_once", "widgets", "line_memo"} <= modules


@pytest.mark.parametrize("entry", listed(), ids=lambda entry: entry.path)
def test_every_listed_private_name_still_exists(entry) -> None:
    _, missing = resolve(entry.path)
    assert missing is None, (
        f"{entry.path} is gone from Textual {version('textual')} ({missing}): "
        f"re-check rat_tui/ui/textual_ext/{entry.module}.py, which uses it")


@pytest.mark.parametrize("path", sorted(SIGNATURES))
def test_every_overridden_method_keeps_its_signature(path: str) -> None:
    found = overrides()
    assert path in found, f"{path} is no longer overridden in rat_tui/ui/textual_ext/: drop it from SIGNATURES"
    assert found[path] == SIGNATURES[path], (
        f"{path} changed its signature in Textual {version('textual')}: {SIGNATURES[path]} -> {found[path]}. "
        "Re-check its override in rat_tui/ui/textual_ext/ (grep the method's name) and what it calls")


def test_every_override_is_recorded() -> None:
    unrecorded = sorted(set(overrides()) - set(SIGNATURES))
    assert unrecorded == [], f"record the signatures of these overridden Textual methods in SIGNATURES: {unrecorded}"


@pytest.mark.parametrize("entry", [entry for entry in listed() if entry.copied], ids=lambda entry: entry.path)
def test_the_methods_copied_here_are_unchanged_in_textual(entry) -> None:
    target, missing = resolve(entry.path)
    assert missing is None, f"{entry.path} is gone: re-check rat_tui/ui/textual_ext/{entry.module}.py"
    assert source_hash(target) == COPIED[entry.path], (
        f"Textual {version('textual')} changed {entry.path}, whose body rat_tui/ui/textual_ext/{entry.module}.py "
        "copies or rewrites: compare the two and carry the change over, then update COPIED")
    assert set(COPIED) == {entry.path for entry in listed() if entry.copied}


def test_ruff_bans_every_private_module_of_textual() -> None:
    """pyproject.toml's banned-api (TID251) names each `textual._*` module: ruff bans modules by name, not by
    pattern, so one a Textual upgrade adds would go unbanned."""
    import pkgutil
    import tomllib
    from pathlib import Path

    import textual

    config = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    banned = config["tool"]["ruff"]["lint"]["flake8-tidy-imports"]["banned-api"]
    private = {info.name for info in pkgutil.walk_packages(textual.__path__, "textual.")
               if any(part.startswith("_") and not part.startswith("__") for part in info.name.split("."))}
    missing = sorted(private - set(banned))
    assert missing == [], f"add these Textual modules to [tool.ruff.lint.flake8-tidy-imports.banned-api]: {missing}"
    assert {entry["msg"] for entry in banned.values()} == {"Textual internals live in rat_tui/ui/textual_ext/"}


def test_the_internals_dismiss_once_calls_keep_their_shape() -> None:
    """DismissOnce (textual_ext/dismiss_once.py) takes a screen out of the middle of the stack by hand."""
    import inspect

    from textual.app import App
    from textual.screen import ModalScreen, Screen

    app = App()
    assert isinstance(app._screen_stacks, dict), "App._screen_stacks: re-check textual_ext/dismiss_once.py"
    assert all(isinstance(stack, list) for stack in app._screen_stacks.values())
    assert inspect.iscoroutinefunction(App._replace_screen), "App._replace_screen: re-check dismiss_once.py"
    assert list(inspect.signature(App._replace_screen).parameters) == ["self", "screen"]
    assert ModalScreen()._result_callbacks == [], "Screen._result_callbacks: re-check dismiss_once.py"
    assert list(inspect.signature(Screen._pop_result_callback).parameters) == ["self"]


def test_every_private_name_the_package_uses_is_listed_under_its_module() -> None:
    """The docstring's list is whole: each Textual private the fence's checker finds in a module of textual_ext
    is listed (by its name) under that module's heading."""
    import re

    from tests.helpers.fence import FENCED, breaches_in

    listed_names: dict[str, set[str]] = {}
    for entry in listed():
        owner, name = entry.path.rsplit(".", 1)
        listed_names.setdefault(entry.module, set()).update({name, entry.path, owner})
    unlisted = []
    for path in sorted(FENCED.glob("*.py")):
        for breach in breaches_in(path):
            found = re.search(r"\((textual[\w.]+)\)$|(_\w+) by its name$|\.?(_\w+)$", breach.what)
            name = next(group for group in found.groups() if group)
            if name not in listed_names.get(path.stem, set()):
                unlisted.append(f"{path.name}: {name} ({breach})")
    assert unlisted == [], "list these in rat_tui/ui/textual_ext/__init__.py under their module:\n" + "\n".join(unlisted)
