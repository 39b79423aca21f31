"""Provides PermissionPolicy: the user's "always" answers kept as rules, and option choice by kind.

When the user answers a permission request with an `allow_always` (or `reject_always`) option,
rat-tui records its own rule as well, so that the answer survives the agent process: agents
remember "always" per session at best (Gemini: "Allow for this session"), and claude-code-acp not
at all. Matching requests are later answered from the rule without a dialog.

Pure Python, no I/O: the session driver asks the policy before it bothers the UI; the rules file is
session/permission_rules_file.py.
"""

from __future__ import annotations

import re
import shlex
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, Protocol

Decision = Literal["allow", "reject"]
DECISIONS: tuple[Decision, ...] = ("allow", "reject")

# Kinds whose subject is a file; for them the path says more than the agent's title.
PATH_KINDS = frozenset({"read", "edit", "delete", "move"})
# rawInput keys that name a file, as seen in the traces (Claude: file_path; others: path, ...).
_PATH_KEYS = ("file_path", "path", "filePath", "abs_path", "absolute_path", "notebook_path", "target_file", "source")
# Shell wrappers around the real command line (Codex: ["/bin/bash", "-lc", "echo … && ls"]).
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "fish"})

_UNSET: Any = object()


@dataclass(frozen=True)
class PermissionRule:
    """One remembered answer. `kind` None matches only calls that carry no kind (claude-code-acp).

    `pattern` is glob-like: `*` matches any text (also `/` and spaces), `\\*` a literal star; the
    whole subject must match. None matches any subject of that agent and kind.
    """

    id: str
    agent: str
    kind: str | None
    pattern: str | None
    decision: Decision
    created: str

    def matches(self, agent: str, kind: str | None, subject: str | None) -> bool:
        if agent != self.agent or kind != self.kind:
            return False
        if self.pattern is None:
            return True
        return subject is not None and pattern_matches(self.pattern, subject)


# -- subjects of tool calls --------------------------------------------------------------------


def escape_pattern(text: str) -> str:
    """A pattern that matches exactly `text`: a derived rule must not widen because of a `*`.

    Only a backslash before `*` or `\\` needs doubling, so `grep "a\\|b"` stays readable.
    """
    return re.sub(r"\\(?=[\\*])", r"\\\\", text).replace("*", "\\*")


def pattern_matches(pattern: str, subject: str) -> bool:
    """Whether `subject` matches the glob-like `pattern` (only `*` is special, unlike fnmatch,
    because commands are full of `?` and `[` that must stay literal)."""
    regex, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "*\\":
            regex.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        regex.append(".*" if char == "*" else re.escape(char))
        i += 1
    return re.fullmatch("".join(regex), subject, flags=re.DOTALL) is not None


def command_of(tool_call: dict[str, Any]) -> str | None:
    """The command line in `rawInput.command`: a string (Claude), or an argv list (Codex)."""
    raw = tool_call.get("rawInput")
    command = raw.get("command") if isinstance(raw, dict) else None
    if isinstance(command, str):
        return command.strip() or None
    if isinstance(command, list) and command and all(isinstance(part, str) for part in command):
        # ["/bin/bash", "-lc", line]: the user thinks of `line`, not of the wrapper.
        if len(command) == 3 and Path(command[0]).name in _SHELLS and command[1].startswith("-") and "c" in command[1]:
            return command[2].strip() or None
        return shlex.join(command)
    return None


def path_of(tool_call: dict[str, Any]) -> str | None:
    """The file a call is about: first location, then a path-like rawInput key, then a diff."""
    for location in tool_call.get("locations") or ():
        if isinstance(location, dict) and isinstance(location.get("path"), str) and location["path"]:
            return location["path"]
    raw = tool_call.get("rawInput")
    if isinstance(raw, dict):
        for key in _PATH_KEYS:
            if isinstance(raw.get(key), str) and raw[key]:
                return raw[key]
        changes = raw.get("changes")  # Codex: {path: {type, unified_diff}}
        if isinstance(changes, dict) and changes:
            return str(next(iter(changes)))
    for item in tool_call.get("content") or ():
        if isinstance(item, dict) and item.get("type") == "diff" and isinstance(item.get("path"), str):
            return item["path"]
    return None


def _title_of(tool_call: dict[str, Any]) -> str | None:
    title = tool_call.get("title")
    if not isinstance(title, str):
        return None
    # claude-code-acp wraps a command title in backticks: "`echo hi`".
    title = title.strip()
    if len(title) > 1 and title.startswith("`") and title.endswith("`"):
        title = title[1:-1].strip()
    return title or None


def subject_of(tool_call: dict[str, Any]) -> tuple[str | None, str | None]:
    """(kind, pattern) for a call: the exact command or path, escaped, so a new rule is narrow.

    execute: the command, else the title (Gemini sends no rawInput). File kinds: the path, else the
    title. Other kinds: a command (Codex runs shell lines as kind "search"), a path, or the title.
    """
    kind, subject = _raw_subject(tool_call)
    return kind, escape_pattern(subject) if subject is not None else None


def _raw_subject(tool_call: dict[str, Any]) -> tuple[str | None, str | None]:
    kind = tool_call.get("kind") if isinstance(tool_call.get("kind"), str) else None
    if kind == "execute":
        return kind, command_of(tool_call) or _title_of(tool_call)
    if kind in PATH_KINDS:
        return kind, path_of(tool_call) or _title_of(tool_call)
    return kind, command_of(tool_call) or path_of(tool_call) or _title_of(tool_call)


def merge_tool_call(known: dict[str, Any] | None, update: dict[str, Any]) -> dict[str, Any]:
    """The call as the client knows it: `update` fields that are present and not null win.

    A permission request's toolCall is a ToolCallUpdate: it may carry only what changed, or (Gemini)
    be the first sight of the call.
    """
    merged = dict(known or {})
    merged.update({key: value for key, value in update.items() if value is not None})
    return merged


# -- options -----------------------------------------------------------------------------------


def choose_option(options: list[dict[str, Any]], decision: Decision, once: bool = True) -> dict[str, Any] | None:
    """The option to answer with, by `kind`: option ids differ per agent ("allow", "approved",
    "proceed_once"), kinds do not. Prefers the once/always variant asked for, then the other one."""
    once_kind, always_kind = f"{decision}_once", f"{decision}_always"
    for wanted in (once_kind, always_kind) if once else (always_kind, once_kind):
        for option in options:
            if isinstance(option, dict) and option.get("kind") == wanted:
                return option
    return None


def remembered_decision(option: dict[str, Any] | None) -> Decision | None:
    """"allow"/"reject" when the chosen option is an "always" one the client should remember too."""
    kind = option.get("kind") if isinstance(option, dict) else None
    return {"allow_always": "allow", "reject_always": "reject"}.get(kind)  # type: ignore[return-value]


# -- the policy --------------------------------------------------------------------------------


class RulesStore(Protocol):
    """Where the rules are kept (session/permission_rules_file.py: a JSON file in the data dir)."""

    path: Path

    def save(self, rules: list[PermissionRule]) -> str | None:
        """Keep `rules`; None when done, else what went wrong (told to the user)."""
        ...


class PermissionPolicy:
    """The remembered rules, in memory; each change is handed to `store` (no I/O here).

    A store that cannot keep a change never costs the user the answer they just gave: the rule
    stays in force and the problem is added to `problems`.
    """

    def __init__(self, rules: list[PermissionRule] | None = None, store: RulesStore | None = None,
                 problems: list[str] | None = None) -> None:
        self.rules: list[PermissionRule] = list(rules or [])
        self.store = store
        self.problems: list[str] = list(problems or [])

    @property
    def path(self) -> Path | None:
        """The rules file, when the policy is kept in one."""
        return self.store.path if self.store is not None else None

    def get(self, rule_id: str) -> PermissionRule:
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        raise KeyError(rule_id)

    def match(self, agent: str, tool_call: dict[str, Any]) -> PermissionRule | None:
        """The rule answering this call, if any; a matching "reject" wins over an "allow".

        The caller still needs an option of the right kind (`choose_option`); when the agent
        offers none, it should ask the user as usual.
        """
        kind, subject = _raw_subject(tool_call)
        found = [rule for rule in self.rules if rule.matches(agent, kind, subject)]
        for rule in found:
            if rule.decision == "reject":
                return rule
        return found[0] if found else None

    def remember(self, agent: str, tool_call: dict[str, Any], decision: Decision) -> PermissionRule:
        """Record (and save) a rule for this call's exact subject; an equal rule is replaced."""
        if decision not in DECISIONS:
            raise ValueError(f"decision must be 'allow' or 'reject', not {decision!r}")
        kind, pattern = subject_of(tool_call)
        for index, rule in enumerate(self.rules):
            if (rule.agent, rule.kind, rule.pattern) == (agent, kind, pattern):
                self.rules[index] = rule = replace(rule, decision=decision)
                self.save()
                return rule
        rule = PermissionRule(
            id=uuid.uuid4().hex[:12],
            agent=agent,
            kind=kind,
            pattern=pattern,
            decision=decision,
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        )
        self.rules.append(rule)
        self.save()
        return rule

    def update(self, rule_id: str, *, pattern: Any = _UNSET, kind: Any = _UNSET, decision: Any = _UNSET) -> PermissionRule:
        """Change the fields given (None is a value: "any subject" / "no kind"), then save."""
        rule = self.get(rule_id)
        changes: dict[str, Any] = {}
        if pattern is not _UNSET:
            changes["pattern"] = pattern
        if kind is not _UNSET:
            changes["kind"] = kind
        if decision is not _UNSET:
            if decision not in DECISIONS:
                raise ValueError(f"decision must be 'allow' or 'reject', not {decision!r}")
            changes["decision"] = decision
        new = replace(rule, **changes)
        self.rules[self.rules.index(rule)] = new
        self.save()
        return new

    def revoke(self, rule_id: str) -> bool:
        """Remove a rule and save; False if it was already gone (two views may race)."""
        before = len(self.rules)
        self.rules = [rule for rule in self.rules if rule.id != rule_id]
        if len(self.rules) == before:
            return False
        self.save()
        return True

    def save(self) -> bool:
        """Hand the rules to the store; False, with the reason in `problems`, when it could not keep them."""
        if self.store is None:
            return True
        problem = self.store.save(list(self.rules))
        if problem is not None:
            self.problems.append(problem)
            return False
        return True


def rule_from_json(item: Any) -> PermissionRule | None:
    if not isinstance(item, dict):
        return None
    text_fields = ("id", "agent", "created")
    if not all(isinstance(item.get(key), str) and item[key] for key in text_fields):
        return None
    if item.get("decision") not in DECISIONS:
        return None
    if not all(item.get(key) is None or isinstance(item[key], str) for key in ("kind", "pattern")):
        return None
    return PermissionRule(
        id=item["id"],
        agent=item["agent"],
        kind=item.get("kind"),
        pattern=item.get("pattern"),
        decision=item["decision"],
        created=item["created"],
    )
