"""Agent quirks recognised from what the agent says of itself in `initialize` (`agentInfo`).

The catalog's manifests carry quirks (`rat.missingFileEmpty`) for agents started from the catalog. A user
often starts the same agent another way (`rat -- node …/gemini.js --acp`, a wrapper script, a profile that
does not set the switch): the quirk must follow the agent, so it is looked up again by the `agentInfo` name
(and version) the agent answers with, and added to whatever the launch line set.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Quirks:
    # Answer a read of a missing file with empty content instead of RESOURCE_NOT_FOUND: Gemini CLI reads a
    # file before creating it and gives up on any error answer ("Error checking existing file").
    missing_file_empty: bool = False

    def __bool__(self) -> bool:
        return self.missing_file_empty


@dataclass(frozen=True)
class KnownAgent:
    names: frozenset[str]  # agentInfo.name values, compared case-insensitively
    quirks: Quirks
    # The first version that no longer needs the quirks (None: every version so far does).
    fixed_in: tuple[int, ...] | None = None


KNOWN_AGENTS: tuple[KnownAgent, ...] = (
    KnownAgent(frozenset({"gemini-cli", "@google/gemini-cli", "gemini cli"}), Quirks(missing_file_empty=True)),
)


def _version(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    parts: list[int] = []
    for piece in text.strip().lstrip("vV").split("."):
        digits = ""
        for char in piece:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break  # "0-rc1": the rest is a pre-release tag
    return tuple(parts) or None


def quirks_for(name: str | None, version: str | None = None, title: str | None = None) -> Quirks:
    """The quirks of the agent that introduced itself as `name` (`title`) `version`; no quirks if unknown."""
    keys = {value.strip().lower() for value in (name, title) if isinstance(value, str) and value.strip()}
    if not keys:
        return Quirks()
    parsed = _version(version)
    for known in KNOWN_AGENTS:
        if keys & known.names:
            if known.fixed_in is not None and parsed is not None and parsed >= known.fixed_in:
                return Quirks()
            return known.quirks
    return Quirks()
