"""Provides session controls: set config options, modes and models of a running session (no Textual).

ACP has two generations of these. Config options (`configOptions`, `session/set_config_option`)
supersede the legacy modes (`modes`, `session/set_mode`) and the unstable models (`models`,
`session/set_model`); agents in transition send both, so the legacy calls are used only when no
config option covers the same thing. See
https://agentclientprotocol.com/protocol/session-config-options.

Categories rat places: `mode`, `model`, `thought_level`, and `speed` (stable since ACP 1.34: a fast mode
toggle, where `true` is the faster setting, or a select ordered slowest to fastest), shown beside the model.
A fork starts with the parent's values (`initial_values`: `configOptions` on `session/fork`, the shape of
`session/set_config_option` without `sessionId`), sent only to an agent advertising
`sessionCapabilities.options` (the session-options RFD: one capability for `session/options` and initial
values on session setup requests; the agent ignores an unknown id or value rather than refusing).

Every call returns None on success or a message for the user; none raises into the UI.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, NamedTuple

from ..protocol.router import ConnectionClosed, RpcError
from ..state import reducer
from ..state.models import SessionState

if TYPE_CHECKING:
    from .agent_session import AgentSession

log = logging.getLogger("rat.controls")

REQUEST_TIMEOUT = 30.0


class Choice(NamedTuple):
    """One selectable value of a select option (or of legacy modes / models)."""

    value: str
    name: str
    description: str | None
    group: str | None  # the name of the group heading it sits under, if the agent grouped them


# -- reading options (pure) -------------------------------------------------------------------


def option_choices(option: dict[str, Any]) -> list[Choice]:
    """The values of a select option, flattened in the agent's order; grouped ones keep their group name."""
    choices: list[Choice] = []
    for item in option.get("options") or []:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("options"), list):  # a SessionConfigSelectGroup
            group = str(item.get("name") or item.get("group") or "")
            choices += [_choice(sub, group) for sub in item["options"] if isinstance(sub, dict) and "value" in sub]
        elif "value" in item:
            choices.append(_choice(item, None))
    return choices


def _choice(item: dict[str, Any], group: str | None) -> Choice:
    value = str(item["value"])
    description = item.get("description")
    return Choice(value, str(item.get("name") or value), description if isinstance(description, str) else None, group)


def current_value_name(option: dict[str, Any]) -> str:
    """What the option is set to, as the user reads it: the value's name, or on/off for a boolean."""
    current = option.get("currentValue")
    if option.get("type") == "boolean":
        return "on" if current is True else "off"
    for choice in option_choices(option):
        if choice.value == current:
            return choice.name
    return "" if current is None else str(current)


def find_option(state: SessionState, config_id: str) -> dict[str, Any] | None:
    """The config option with this id, or None."""
    return next((o for o in state.config_options if o.get("id") == config_id), None)


def find_category(state: SessionState, category: str) -> dict[str, Any] | None:
    """The first config option of a category ("model", "mode", "thought_level", ...), or None."""
    for option in state.config_options:
        if option.get("category") == category:
            return option
    return None


def legacy_mode_choices(state: SessionState) -> list[Choice]:
    """The legacy `modes.availableModes` as choices; empty when config options exist (they supersede modes)."""
    if state.config_options or not isinstance(state.modes, dict):
        return []
    modes = state.modes.get("availableModes") or []
    return [_legacy_choice(m, "id") for m in modes if isinstance(m, dict) and "id" in m]


def legacy_model_choices(state: SessionState) -> list[Choice]:
    """The legacy `models.availableModels` as choices; empty when a config option of category model exists."""
    if find_category(state, "model") is not None or not isinstance(state.models, dict):
        return []
    models = state.models.get("availableModels") or []
    return [_legacy_choice(m, "modelId") for m in models if isinstance(m, dict) and "modelId" in m]


def _legacy_choice(item: dict[str, Any], id_key: str) -> Choice:
    description = item.get("description")
    value = str(item[id_key])
    return Choice(value, str(item.get("name") or value), description if isinstance(description, str) else None, None)


def category_choices(state: SessionState, category: str) -> tuple[list[Choice], str | None]:
    """Choices and current value for "mode" or "model": from the config option, else the legacy field."""
    option = find_category(state, category)
    if option is not None and option.get("type", "select") == "select":
        current = option.get("currentValue")
        return option_choices(option), current if isinstance(current, str) else None
    if category == "mode":
        return legacy_mode_choices(state), state.current_mode_id
    if category == "model":
        current = state.models.get("currentModelId") if isinstance(state.models, dict) else None
        return legacy_model_choices(state), current if isinstance(current, str) else None
    return [], None


def speed_name(state: SessionState) -> str | None:
    """What the `speed` option is set to, for the status bar, when faster than the slowest: a boolean's "fast"
    when on, a select's value name unless it is the first (selects go slowest to fastest); else None."""
    option = find_category(state, "speed")
    if option is None:
        return None
    if option.get("type") == "boolean":
        return "fast" if option.get("currentValue") is True else None
    choices = option_choices(option)
    if not choices or option.get("currentValue") == choices[0].value:
        return None
    return current_value_name(option) or None


def initial_values(state: SessionState) -> list[dict[str, Any]]:
    """The session's config values as `InitialSessionConfigOption`s (`{configId, value}`, booleans tagged
    `type: "boolean"`), for a session that starts where this one is (a fork)."""
    values: list[dict[str, Any]] = []
    for option in state.config_options:
        config_id, current = option.get("id"), option.get("currentValue")
        if not isinstance(config_id, str):
            continue
        if option.get("type") == "boolean" and isinstance(current, bool):
            values.append({"configId": config_id, "type": "boolean", "value": current})
        elif option.get("type", "select") == "select" and isinstance(current, str):
            values.append({"configId": config_id, "value": current})
    return values


def current_name(state: SessionState, category: str) -> str | None:
    """The name of the current mode or model, for the status bar; None when the agent has none."""
    option = find_category(state, category)
    if option is not None:
        return current_value_name(option) or None
    choices, current = category_choices(state, category)
    for choice in choices:
        if choice.value == current:
            return choice.name
    return current


# -- changing them (requests) -----------------------------------------------------------------


async def set_config_option(session: AgentSession, config_id: str, value: str | bool) -> str | None:
    """`session/set_config_option`; the answer's complete option list replaces ours."""
    option = find_option(session.state, config_id)
    params: dict[str, Any] = {"sessionId": session.session_id, "configId": config_id, "value": value}
    if isinstance(value, bool) or (option is not None and option.get("type") == "boolean"):
        # Booleans are tagged; a value without `type` means a value id (SetSessionConfigOptionRequest).
        params.update(type="boolean", value=bool(value))
    result, error = await _request(session, "session/set_config_option", params)
    if error is not None:
        return error
    options = result.get("configOptions") if isinstance(result, dict) else None
    if isinstance(options, list):
        session.store.dispatch(reducer.set_config_options, options)
    elif option is not None:  # a non-conforming answer: assume the agent took the value
        patched = [{**o, "currentValue": params["value"]} if o is option else o for o in session.state.config_options]
        session.store.dispatch(reducer.set_config_options, patched)
    return None


async def set_mode(session: AgentSession, mode_id: str) -> str | None:
    """Set the mode: through the config option of category mode if there is one, else `session/set_mode`."""
    option = find_category(session.state, "mode")
    if option is not None:
        return await set_config_option(session, str(option["id"]), mode_id)
    if session.state.config_options:
        return "This agent manages its settings through config options and has no mode among them."
    if not legacy_mode_choices(session.state):
        return "This agent has no modes."
    _, error = await _request(session, "session/set_mode", {"sessionId": session.session_id, "modeId": mode_id})
    if error is not None:
        return error
    session.store.dispatch(reducer.set_current_mode, mode_id)
    return None


async def set_model(session: AgentSession, model_id: str) -> str | None:
    """Set the model: through the config option of category model if there is one, else `session/set_model`."""
    option = find_category(session.state, "model")
    if option is not None:
        return await set_config_option(session, str(option["id"]), model_id)
    if not legacy_model_choices(session.state):
        return "This agent offers no model choice."
    _, error = await _request(session, "session/set_model", {"sessionId": session.session_id, "modelId": model_id})
    if error is not None:
        return error
    session.store.dispatch(reducer.set_current_model, model_id)
    return None


async def set_category(session: AgentSession, category: str, value: str) -> str | None:
    """`set_mode` or `set_model` by category; other categories go to their config option."""
    if category == "mode":
        return await set_mode(session, value)
    if category == "model":
        return await set_model(session, value)
    option = find_category(session.state, category)
    if option is None:
        return f"This agent has no {category} option."
    return await set_config_option(session, str(option["id"]), value)


def next_mode(state: SessionState) -> str | None:
    """The mode after the current one, wrapping round (for a cycle key); None without modes."""
    choices, current = category_choices(state, "mode")
    if not choices:
        return None
    values = [c.value for c in choices]
    index = values.index(current) if current in values else -1
    return values[(index + 1) % len(values)]


async def cycle_mode(session: AgentSession) -> str | None:
    """Switch to the next mode; None on success, else a message."""
    mode = next_mode(session.state)
    if mode is None:
        return "This agent has no modes."
    return await set_mode(session, mode)


async def _request(session: AgentSession, method: str, params: dict[str, Any]) -> tuple[Any, str | None]:
    client = session.client
    if client is None or session.session_id is None:
        return None, "The agent is not ready yet."
    try:
        result = await asyncio.wait_for(client.connection.request(method, params), REQUEST_TIMEOUT)
    except RpcError as error:
        log.info("%s failed: %s", method, error)
        if error.code == -32601:
            return None, f"The agent does not support {method}."
        return None, f"The agent refused the change: {error.message}"
    except ConnectionClosed:
        return None, "The agent has exited."
    except asyncio.TimeoutError:
        return None, f"The agent did not answer {method} within {REQUEST_TIMEOUT:g} s."
    return result, None
