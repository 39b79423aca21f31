"""Provides the platformdirs locations rat-tui reads and writes: config, data, state, logs, themes.

Everything is a function, not a module constant, so that XDG_* (or RAT_CONFIG) set by a test or
a wrapper script after import still takes effect.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "rat-tui"
CONFIG_ENV = "RAT_CONFIG"
"""Environment variable naming the config file; lets tests and scripts point at their own."""


def _dirs() -> platformdirs.PlatformDirs:
    # Built per call: platformdirs reads XDG_* when a property is accessed, and we want that fresh.
    return platformdirs.PlatformDirs(APP_NAME, appauthor=False)


def config_dir() -> Path:
    """Directory holding config.toml and the user's themes."""
    return Path(_dirs().user_config_dir)


def config_file() -> Path:
    """The config file in use: $RAT_CONFIG if set, else config.toml in the config dir."""
    override = os.environ.get(CONFIG_ENV)
    if override:
        return Path(override).expanduser()
    return config_dir() / "config.toml"


def config_file_is_explicit() -> bool:
    """True when the user named the config file (via RAT_CONFIG), so a missing one is an error."""
    return bool(os.environ.get(CONFIG_ENV))


def data_dir() -> Path:
    """Durable data: session history."""
    return Path(_dirs().user_data_dir)


def cache_dir() -> Path:
    """What can be fetched again (the agent registry's index)."""
    return Path(_dirs().user_cache_dir)


def log_dir() -> Path:
    """Log files: the terminal belongs to the UI, so logs go here."""
    return Path(_dirs().user_log_dir)


def user_themes_dir() -> Path:
    """The user's own theme files; a theme here replaces a bundled one of the same name."""
    return config_dir() / "themes"


def bundled_themes_dir() -> Path:
    """The themes shipped in the repository's top-level `themes/`.

    The package is installed editable, so the directory sits beside the package. A plain wheel
    install has no such directory: callers check `is_dir()` and fall back to Textual's themes.
    """
    return Path(__file__).resolve().parent.parent / "themes"
