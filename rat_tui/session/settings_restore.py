"""Provides restore_settings: a continued session gets back the settings its history journal recorded (no Textual).

Continuing a session (history screen `c`, or any reattach the journal knows) reopens it with
session/load or session/resume; agents do not all remember the mode, model or config options chosen
in it. The journal does (`SessionJournal.settings`: `config` {id: value}, `mode`, `model`), so once
the reattach is ready every recorded value that differs from what the agent reports is set again:
config options first; the legacy `mode` / `model` only when no restored config option has that
category (config options supersede them). One notice says what was restored and what could not be.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .controls import category_choices, find_option, option_choices, set_category, set_config_option
from ..state import reducer

if TYPE_CHECKING:
    from .agent_session import AgentSession

log = logging.getLogger("rat.restore")


async def restore_settings(session: AgentSession, settings: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """Set the recorded values that differ; returns (restored, not restored) as "name = value" texts."""
    restored: list[str] = []
    failed: list[str] = []
    try:
        await _restore(session, settings, restored, failed)
    except Exception as error:  # restoring is a convenience: never let it stop the session
        log.exception("restoring the session's settings failed")
        failed.append(f"the rest ({error})")
    if restored:
        session.store.dispatch(reducer.add_notice, "Restored this session's settings: " + ", ".join(restored) + ".")
    if failed:
        session.store.dispatch(reducer.add_notice, "Could not restore: " + "; ".join(failed) + ".", "warning")
    return restored, failed


async def _restore(session: AgentSession, settings: Mapping[str, Any], restored: list[str], failed: list[str]) -> None:
    config = settings.get("config") if isinstance(settings.get("config"), dict) else {}
    covered: set[str] = set()
    for config_id, value in config.items():
        option = find_option(session.state, config_id)
        if option is None:
            failed.append(f"{config_id} = {value} (the agent no longer offers this option)")
            continue
        label = str(option.get("name") or config_id)
        if isinstance(option.get("category"), str):
            covered.add(option["category"])
        if option.get("currentValue") == value:
            continue
        if option.get("type") == "boolean":
            if not isinstance(value, bool):
                failed.append(f"{label} = {value} (not on or off)")
                continue
            shown = "on" if value else "off"
        else:
            names = {c.value: c.name for c in option_choices(option)}
            if value not in names:
                failed.append(f"{label} = {value} (not among its values now)")
                continue
            shown = names[value]
        error = await set_config_option(session, str(config_id), value)
        (failed if error else restored).append(f"{label} = {shown}" + (f" ({error})" if error else ""))
    for category in ("mode", "model"):
        value = settings.get(category)
        if not isinstance(value, str) or category in covered:
            continue
        choices, current = category_choices(session.state, category)
        if value == current:
            continue
        names = {c.value: c.name for c in choices}
        if value not in names:
            why = "not offered now" if choices else f"this agent offers no {category} choice now"
            failed.append(f"{category} = {value} ({why})")
            continue
        error = await set_category(session, category, value)
        (failed if error else restored).append(f"{category} = {names[value]}" + (f" ({error})" if error else ""))
