"""Provides the pydantic models of config.toml and `load_config`, which never raises.

A bad config file must not stop the user from working: every problem becomes a plain message
(shown as a toast and logged) and the bad part alone falls back to its default.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import paths

# Unknown keys are forbidden at validation so pydantic reports them with their full path; the
# loader then turns those reports into warnings and drops the keys instead of failing.
_MODEL_CONFIG = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class AgentProfile(BaseModel):
    """How to start one ACP agent."""

    model_config = _MODEL_CONFIG

    command: str
    """Program to run: a bare name (looked up on PATH at spawn time) or a path (`~` expanded)."""
    args: list[str] = Field(default_factory=list)
    """Arguments passed to the command."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for the agent process, on top of rat's own environment."""
    title: str | None = None
    """Name shown in the UI; defaults to the profile's key."""
    missing_file_empty: bool = False
    """Answer a read of a missing file with empty content instead of an error (Gemini CLI needs this
    to create new files)."""


class Config(BaseModel):
    """Everything config.toml can set; every field has a default, so an empty file is valid."""

    model_config = _MODEL_CONFIG

    default_agent: str | None = None
    """Profile started when neither `--agent` nor `-- COMMAND` is given; unset means the demo agent."""
    agents: dict[str, AgentProfile] = Field(default_factory=dict)
    """Agent profiles by name, as chosen with `--agent NAME`."""
    outside_files: Literal["deny", "ask"] = "deny"
    """An agent's file access outside the session's directories: refused at once, or asked about."""
    theme: str = "rat-dark"
    """Theme name: a bundled theme, one from the user themes dir, or a Textual built-in."""
    keymap: dict[str, str] = Field(default_factory=dict)
    """Binding id -> comma-separated keys, as accepted by Textual's `App.set_keymap`."""
    rpc_log: str | None = None
    """Path of a JSONL log of all JSON-RPC traffic (`--rpc-log` overrides it); unset means none."""
    request_timeout_seconds: float = Field(default=120.0, gt=0)
    """A request the agent leaves unanswered this long is reported, with the offer to cancel it or
    restart the agent; a turn (`session/prompt`) is reported when the agent sends nothing this long."""


# Top-level tables whose entries are independent: a bad entry is dropped alone, not the table.
_TABLES_OF_ENTRIES = {"agents", "keymap"}


def load_config(path: Path | None = None) -> tuple[Config, list[str]]:
    """Load config.toml; returns the config and the problems found, never raises.

    `path` is the file named with `--config`; None means $RAT_CONFIG or the default file. A missing
    default file is normal (no problem); a missing file the user named is reported.
    """
    explicit = path is not None or paths.config_file_is_explicit()
    path = Path(path).expanduser() if path is not None else paths.config_file()
    try:
        if not path.exists():
            return Config(), ([f"Config file not found: {path}"] if explicit else [])
        text = path.read_bytes().decode("utf-8")
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return Config(), [f"{path}: TOML syntax error: {_with_line(str(error), text)}; using the defaults"]
    except (OSError, UnicodeDecodeError) as error:
        return Config(), [f"{path}: cannot read the config file ({error}); using the defaults"]
    config, problems = validate_config(data)
    return config, [f"{path}: {problem}" for problem in problems]


def _with_line(message: str, text: str) -> str:
    # tomllib says "(at line N, column M)" except for errors at the very end of the file.
    if "(at end of document)" in message:
        return message.replace("(at end of document)", f"(at end of document, line {len(text.splitlines())})")
    return message


def validate_config(data: dict[str, Any]) -> tuple[Config, list[str]]:
    """Validate parsed TOML, dropping only what is invalid; returns the config and the problems."""
    data = copy.deepcopy(data)  # pruned below; the caller's dict stays as it was
    problems: list[str] = []
    # Each pass removes at least one offending item, so this ends; the bound is a safety net.
    for _ in range(100):
        try:
            return Config.model_validate(data), problems
        except ValidationError as error:
            dropped = False
            for item in error.errors():
                problems.append(_describe(item))
                dropped |= _drop(data, tuple(item["loc"]), item["type"] == "extra_forbidden")
            if not dropped:
                break
    return Config(), [*problems, "could not repair the config; using the defaults"]


def _dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _describe(item: Any) -> str:
    loc = tuple(item["loc"])
    if item["type"] == "extra_forbidden":
        return f"unknown key {_dotted(loc)} (ignored)"
    message = f"{_dotted(loc)}: {item['msg']}"
    if loc and loc[0] == "agents" and len(loc) >= 2:
        return f"{message} (agent profile {loc[1]!r} skipped)"
    if loc and loc[0] in _TABLES_OF_ENTRIES and len(loc) >= 2:
        return f"{message} (ignored)"
    if loc:
        return f"{message} (using the default)"
    return message


def _drop(data: dict[str, Any], loc: tuple[Any, ...], exact: bool) -> bool:
    """Remove the invalid item at `loc`: an unknown key alone, a whole entry, or a top-level key.

    Returns False when there was nothing to remove (an earlier error already removed its parent).
    """
    if exact:
        target = loc  # an unknown key: drop just it, keep what surrounds it
    elif loc and loc[0] in _TABLES_OF_ENTRIES and len(loc) >= 2:
        target = loc[:2]  # a bad agent profile or keymap entry is dropped whole
    else:
        target = loc[:1]
    if not target:
        return False  # the document itself is wrong: cannot happen, TOML always gives a table
    parent: Any = data
    for part in target[:-1]:
        parent = parent.get(part) if isinstance(parent, dict) else None
    if isinstance(parent, dict) and target[-1] in parent:
        del parent[target[-1]]
        return True
    return False
