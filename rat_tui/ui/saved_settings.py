"""Provides `save_setting`: a setting chosen in the UI (theme, follow mode, plan panel) written to
config.toml with tomlkit, which keeps the file's comments, order and formatting.

A file that cannot be parsed is left alone (the user is editing it; the app already said what is
wrong with it): the choice then holds for this run only, and the caller says so.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

log = logging.getLogger("rat.ui.settings")


def save_setting(path: Path, key: str, value: Any) -> str | None:
    """Set top-level `key` to `value` in the config file; None when saved, else why not."""
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        document = tomlkit.parse(text)
    except (OSError, UnicodeDecodeError, TOMLKitError) as error:
        log.warning("not saving %s: cannot read %s: %s", key, path, error)
        return f"Not saved to {path}: {error}"
    if document.get(key) == value:
        return None
    document[key] = value  # tomlkit puts a new top-level key before the first table
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(path.suffix + ".tmp")
        temporary.write_text(tomlkit.dumps(document), encoding="utf-8")
        temporary.replace(path)
    except OSError as error:
        log.warning("not saving %s to %s: %s", key, path, error)
        return f"Not saved to {path}: {error}"
    log.info("saved %s = %r to %s", key, value, path)
    return None
