"""Provides the permission rules file: `load_policy()` reads the user's remembered "always" answers from the
data dir into a PermissionPolicy, and `RulesFile` writes them back after each change.

A broken file never stops the app: the policy starts empty, says why in `problems`, and the broken file is
moved aside on the first save rather than silently overwritten. Saves are atomic (temp file, fsync,
os.replace), so a crash never leaves half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from .. import paths
from ..state.permission_policy import PermissionPolicy, PermissionRule, rule_from_json

RULES_FILE = "permission_rules.json"
FORMAT_VERSION = 1


def default_rules_path() -> Path:
    """Where the rules live: durable data, beside session history, not disposable state."""
    return paths.data_dir() / RULES_FILE


class RulesFile:
    """The JSON file a PermissionPolicy is kept in."""

    def __init__(self, path: Path, broken: bool = False) -> None:
        self.path = path
        self.broken = broken  # unreadable when loaded: moved aside before the first save

    def save(self, rules: list[PermissionRule]) -> str | None:
        data = {"version": FORMAT_VERSION, "rules": [asdict(rule) for rule in rules]}
        note = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.broken and self.path.exists():
                aside = self.path.with_name(self.path.name + ".broken")
                os.replace(self.path, aside)
                note = f"The unreadable rules file was kept as {aside}"
            self.broken = False
            handle = tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp", delete=False
            )
            try:
                with handle:
                    json.dump(data, handle, indent=2)
                    handle.write("\n")
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(handle.name, self.path)
            except BaseException:
                Path(handle.name).unlink(missing_ok=True)
                raise
        except OSError as error:
            return f"Cannot save permission rules to {self.path}: {error}"
        return note


def load_policy(path: Path | None = None) -> PermissionPolicy:
    """The policy kept in `path` (default: the data dir's rules file); problems are in its `problems`."""
    path = path if path is not None else default_rules_path()
    rules: list[PermissionRule] = []
    problems: list[str] = []

    def unusable(reason: str) -> PermissionPolicy:
        problems.append(f"Permission rules file {path} ignored: {reason}")
        return PermissionPolicy([], RulesFile(path, broken=True), problems)

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return PermissionPolicy([], RulesFile(path))  # first run: no rules yet, nothing to report
    except (OSError, UnicodeDecodeError) as error:
        return unusable(f"cannot read it ({error})")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        return unusable(f"not valid JSON ({error})")
    items = data.get("rules") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return unusable('expected an object with a "rules" list')
    for number, item in enumerate(items, 1):
        rule = rule_from_json(item)
        if rule is None:
            problems.append(f"Permission rule {number} in {path} skipped: malformed ({item!r:.80})")
        else:
            rules.append(rule)
    return PermissionPolicy(rules, RulesFile(path), problems)
