"""Provides apply_defaults: a profile's `[agents.NAME.defaults]` set on a new session (no Textual).

A key is a config option id, else a category (`model`, `mode`, `thought_level`, ...), which also
reaches the legacy modes and models of agents without config options. A value may be the value id
or its name (any case); a boolean option takes true or false. A default that matches nothing leaves
the agent's choice and says so in the transcript: a typo must not pass silently.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .controls import (Choice, category_choices, find_category, find_option, option_choices, set_category,
                               set_config_option)
from ..state import reducer

if TYPE_CHECKING:
    from .agent_session import AgentSession

log = logging.getLogger("rat.defaults")
SHOWN_CHOICES = 8


async def apply_defaults(session: AgentSession, defaults: Mapping[str, Any]) -> None:
    """Apply each default in order; every problem becomes a warning notice, none raises."""
    for key, wanted in defaults.items():
        try:
            problem = await apply_default(session, str(key), wanted)
        except Exception as error:  # a default is a convenience: never let it stop the session
            log.exception("default %s failed", key)
            problem = f"Could not apply the default {key}: {error}"
        if problem:
            log.warning("%s", problem)
            session.store.dispatch(reducer.add_notice, problem, "warning")


async def apply_default(session: AgentSession, key: str, wanted: Any) -> str | None:
    """Set one default; None when applied (or already so), else a message for the user."""
    state = session.state
    option = find_option(state, key) or find_category(state, key)
    if option is not None:
        if option.get("type") == "boolean":
            if not isinstance(wanted, bool):
                return f"Default {key} = {wanted!r}: this option is on or off; write true or false."
            if option.get("currentValue") is wanted:
                return None
            return _failed(key, await set_config_option(session, str(option["id"]), wanted))
        choices = option_choices(option)
        current = option.get("currentValue")
    elif key in ("mode", "model"):
        choices, current = category_choices(state, key)  # the legacy modes / models
        if not choices:
            return f"Default {key} = {wanted!r}: this agent offers no {key} choice."
    else:
        known = ", ".join(str(o.get("id")) for o in state.config_options) or "none"
        return f"Default {key} = {wanted!r}: this agent has no such option (its options: {known})."
    value = match(choices, wanted)
    if value is None:
        names = ", ".join(c.value if c.name == c.value else f"{c.value} ({c.name})" for c in choices[:SHOWN_CHOICES])
        more = f", … {len(choices) - SHOWN_CHOICES} more" if len(choices) > SHOWN_CHOICES else ""
        left = next((c.name for c in choices if c.value == current), current)
        return f"Default {key} = {wanted!r} matches none of the agent's values ({names}{more}); left at {left}."
    if value == current:
        return None
    if option is not None:
        return _failed(key, await set_config_option(session, str(option["id"]), value))
    return _failed(key, await set_category(session, key, value))


def match(choices: list[Choice], wanted: Any) -> str | None:
    """The value id `wanted` names: the id itself, else the id or name in any case."""
    if not isinstance(wanted, str):
        return None
    for choice in choices:
        if choice.value == wanted:
            return choice.value
    folded = wanted.casefold()
    for choice in choices:
        if choice.value.casefold() == folded or choice.name.casefold() == folded:
            return choice.value
    return None


def _failed(key: str, error: str | None) -> str | None:
    return f"Could not apply the default {key}: {error}" if error else None
