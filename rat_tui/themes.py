"""Provides the theme loader: `themes/*.toml` (bundled, then the user's) -> Textual `Theme`s.

Themes are data, so a broken file is skipped with a message naming it; it never stops the app.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

from . import paths
from .typed_data import Unsure, build, from_model, pydantic_model

THEME_VARIABLE_DEFAULTS: dict[str, str] = {
    # Concrete colours, not `$warning` references: Textual does not resolve references in variable
    # values, and these apply under any theme (including Textual's built-in ones).
    "tool-pending": "#d7a13b",
    "tool-running": "#3b8fd7",
    "tool-completed": "#4ebf71",
    "tool-failed": "#d9534f",
    "diff-added": "#2e8b57",
    "diff-removed": "#c0392b",
    "user-message": "#5b7fb5",
    "thought": "#8a8a8a",
}
"""rat's own CSS variables (`$tool-failed` and so on), for `App.get_theme_variable_defaults`."""

# Base colours a theme may name; a variable may refer to one of them as "$name".
_COLOUR_FIELDS = (
    "primary", "secondary", "accent", "foreground", "background",
    "surface", "panel", "boost", "warning", "error", "success",
)  # fmt: skip


@dataclass(kw_only=True)
class ThemeFile:
    """One theme file; field names follow `textual.theme.Theme`. Read without pydantic when it is right
    (typed_data.build); a broken one gets the messages of its pydantic model (`_checked`)."""

    name: str | None = None
    """Theme name (what `theme = ...` in config.toml selects); defaults to the file's stem."""
    dark: bool = True
    """Whether this is a dark theme."""
    primary: str
    """The only required colour: Textual derives the ones left out from it."""
    # The other base colours are optional; "#rrggbb", "rgb(...)", "hsl(...)" or a colour name.
    secondary: str | None = None
    accent: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    warning: str | None = None
    error: str | None = None
    success: str | None = None
    luminosity_spread: float | None = None
    """How far Textual spreads the shades it derives (its default: 0.15)."""
    text_alpha: float | None = None
    """Opacity of text (its default: 0.95)."""
    variables: dict[str, str] = field(default_factory=dict)
    """CSS variables: rat's (see THEME_VARIABLE_DEFAULTS) or Textual's; "$primary" etc. allowed."""


    def to_theme(self, default_name: str) -> Theme:
        """The Textual theme; "$colour" references in variables are resolved against this file."""
        variables = {}
        for key, value in self.variables.items():
            if value.startswith("$") and value[1:] in _COLOUR_FIELDS:
                resolved = getattr(self, value[1:])
                if resolved is None:
                    raise ValueError(f"variables.{key}: {value} is not set in this theme")
                value = resolved
            if key in THEME_VARIABLE_DEFAULTS:
                try:
                    Color.parse(value)
                except ColorParseError:
                    raise ValueError(f"variables.{key}: not a colour: {value!r}") from None
            variables[key] = value
        extra = {
            key: value
            for key in ("luminosity_spread", "text_alpha")
            if (value := getattr(self, key)) is not None
        }
        colours = {key: getattr(self, key) for key in _COLOUR_FIELDS}
        return Theme(name=self.name or default_name, dark=self.dark, variables=variables, **colours, **extra)


def load_theme_file(path: Path) -> Theme:
    """Load one theme file; raises ValueError with a readable message if it is broken."""
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"TOML syntax error: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"cannot read it ({error})") from None
    try:
        theme_file = build(ThemeFile, data)
        for name in _COLOUR_FIELDS:
            check_colour(getattr(theme_file, name))
    except (Unsure, ValueError):  # the pydantic model says what is wrong
        theme_file = _checked(data)
    return theme_file.to_theme(path.stem)


def check_colour(value: str | None) -> str | None:
    """Reject a bad colour here, with its key, rather than when the app applies the theme."""
    if value is not None:
        try:
            Color.parse(value)
        except ColorParseError:
            raise ValueError(f"not a colour: {value!r}") from None
    return value


def _checked(data: object) -> ThemeFile:
    """`data` validated by ThemeFile's pydantic model; raises ValueError with its messages."""
    from pydantic import ValidationError, field_validator

    validators = {"check_colour": field_validator(*_COLOUR_FIELDS)(lambda cls, value: check_colour(value))}
    try:
        model = pydantic_model(ThemeFile, validators).model_validate(data)
    except ValidationError as error:
        details = "; ".join(
            f"{'.'.join(map(str, item['loc'])) or 'file'}: {item['msg']}" for item in error.errors()
        )
        raise ValueError(details) from None
    return from_model(ThemeFile, model)


def load_themes(*directories: Path) -> tuple[list[Theme], list[str]]:
    """All themes, and a problem message per broken file; later directories override by name.

    With no arguments: the bundled themes, then the user themes dir. Missing dirs are fine.
    """
    if not directories:
        directories = (paths.bundled_themes_dir(), paths.user_themes_dir())
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for directory in directories:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ValueError as error:
                problems.append(f"Theme {path} skipped: {error}")
                continue
            themes[theme.name] = theme
    return list(themes.values()), problems
