"""Themes: bundled TOML files load into Textual themes; broken files are reported, not fatal."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.color import Color
from textual.widgets import Static

from rat_tui import paths
from rat_tui.themes import THEME_VARIABLE_DEFAULTS, load_theme_file, load_themes

APP_VARIABLES = {
    "tool-pending", "tool-running", "tool-completed", "tool-failed",
    "diff-added", "diff-removed", "user-message", "thought",
}  # fmt: skip


def test_bundled_themes_load_without_problems() -> None:
    assert paths.bundled_themes_dir().is_dir()
    themes, problems = load_themes()
    assert problems == []
    by_name = {theme.name: theme for theme in themes}
    assert {"rat-dark", "rat-light"} <= set(by_name)
    assert by_name["rat-dark"].dark and not by_name["rat-light"].dark
    for theme in themes:
        # Every bundled theme sets every app variable, to a real colour ($references resolved).
        assert APP_VARIABLES <= set(theme.variables), theme.name
        for value in theme.variables.values():
            Color.parse(value)


def test_variable_defaults_cover_the_app_variables() -> None:
    assert set(THEME_VARIABLE_DEFAULTS) == APP_VARIABLES
    for value in THEME_VARIABLE_DEFAULTS.values():
        Color.parse(value)


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    return path


def test_user_theme_overrides_bundled_by_name_and_adds_new_ones() -> None:
    user = paths.user_themes_dir()
    write(user, "mine.toml", 'name = "rat-dark"\nprimary = "#ff0000"\n')
    write(user, "extra.toml", 'primary = "#00ff00"\ndark = false\n')  # name defaults to the stem
    themes, problems = load_themes()
    assert problems == []
    by_name = {theme.name: theme for theme in themes}
    assert by_name["rat-dark"].primary == "#ff0000"
    assert by_name["extra"].dark is False
    assert "rat-light" in by_name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('primary = "#ff0000"\nbackground = [', "TOML syntax error"),
        ('background = "#000000"\n', "primary: Field required"),
        ('primary = "not-a-colour"\n', "primary: Value error, not a colour"),
        ('primary = "#ff0000"\nprimay = "#00ff00"\n', "primay: Extra inputs are not permitted"),
        ('primary = "#ff0000"\n[variables]\ntool-failed = "nope"\n', "variables.tool-failed: not a colour"),
        ('primary = "#ff0000"\n[variables]\nthought = "$panel"\n', "$panel is not set"),
    ],
)
def test_broken_theme_is_skipped_and_reported(tmp_path: Path, text: str, expected: str) -> None:
    good = write(tmp_path, "good.toml", 'primary = "#123456"\n')
    broken = write(tmp_path, "broken.toml", text)
    themes, problems = load_themes(tmp_path)
    assert [theme.name for theme in themes] == ["good"]
    assert len(problems) == 1
    assert str(broken) in problems[0] and expected in problems[0]
    assert load_theme_file(good).primary == "#123456"


def test_missing_directories_are_fine(tmp_path: Path) -> None:
    assert load_themes(tmp_path / "nowhere") == ([], [])


class ThemedApp(App[None]):
    """Uses every app variable in CSS, as the real widgets will."""

    CSS = "\n".join(f"#{name} {{ color: ${name}; background: ${name} 20%; }}" for name in sorted(APP_VARIABLES))

    def __init__(self, theme_name: str) -> None:
        super().__init__()
        self.theme_name = theme_name

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        for name in sorted(APP_VARIABLES):
            yield Static(name, id=name)

    def on_mount(self) -> None:
        for theme in load_themes()[0]:
            self.register_theme(theme)
        self.theme = self.theme_name


@pytest.mark.parametrize("theme_name", ["rat-dark", "rat-light", "nord"])
async def test_themes_apply_in_a_textual_app(theme_name: str) -> None:
    # Textual's own themes lack our variables: the defaults must fill them in.
    app = ThemedApp(theme_name)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == theme_name
        failed = app.query_one("#tool-failed", Static)
        expected = app.current_theme.variables.get("tool-failed", THEME_VARIABLE_DEFAULTS["tool-failed"])
        assert failed.styles.color == Color.parse(expected)


async def test_inline_code_is_no_black_box_on_the_light_theme(tmp_path: Path) -> None:
    """Rich's default draws `inline code` on black; on rat-light it is the theme's primary on its panel, and
    switching back to a dark theme brings Rich's own style back."""
    from rat_tui.agents.spec import demo_agent
    from rat_tui.app import RatApp
    from rat_tui.config import Config
    from rat_tui.ui.widgets.markdown_stream import markdown, parse

    def code_style(app: RatApp):
        tokens, _ = parse("run `make test` now", {})
        lines = markdown_lines(app, tokens)
        [segment] = [s for line in lines for s in line if s.text == "make test"]
        return segment.style

    def markdown_lines(app: RatApp, tokens):
        console = app.console
        return console.render_lines(markdown(tokens, "default"), console.options.update_width(40))

    app = RatApp(demo_agent(), tmp_path, config=Config(theme="rat-light"))
    async with app.run_test(size=(100, 30)) as pilot:
        light = code_style(app)
        assert light.bgcolor is not None and light.bgcolor.triplet.hex == app.current_theme.panel.lower()
        assert light.color.triplet.hex == app.current_theme.primary.lower()
        app.theme = "rat-dark"
        await pilot.pause()
        dark = code_style(app)
        assert dark.bgcolor.name == "black" and dark.color.name == "cyan"
