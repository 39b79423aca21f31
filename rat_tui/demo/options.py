"""The demo agent's session config options: a mode, a grouped model selector and a boolean toggle.

Pure data and checks, no I/O. The boolean option is offered only to clients that advertised
``clientCapabilities.session.configOptions.boolean`` at ``initialize``, as ACP requires.
"""

from __future__ import annotations

from typing import Any

MODES = [
    {"value": "ask", "name": "Ask", "description": "Ask before every file change and command"},
    {"value": "accept_edits", "name": "Accept edits", "description": "Change files without asking; still ask before commands"},
    {"value": "read_only", "name": "Read only", "description": "Never change files or run commands"},
]
MODEL_GROUPS = [
    {"group": "fast", "name": "Fast", "options": [
        {"value": "demo-mini", "name": "Demo Mini", "description": "Small and quick (32k context)"},
        {"value": "demo-flash", "name": "Demo Flash", "description": "Quick, bigger context (128k)"},
    ]},
    {"group": "smart", "name": "Smart", "options": [
        {"value": "demo-pro", "name": "Demo Pro", "description": "Careful answers (200k context)"},
        {"value": "demo-ultra", "name": "Demo Ultra", "description": "The largest demo model (1M context)"},
    ]},
]
# tokens of context and dollars per 1,000 tokens, for the usage_update after each turn
MODEL_LIMITS = {"demo-mini": (32_000, 0.0002), "demo-flash": (128_000, 0.0005),
                "demo-pro": (200_000, 0.003), "demo-ultra": (1_000_000, 0.015)}
DEFAULTS: dict[str, Any] = {"mode": "ask", "model": "demo-flash", "thoughts": True}


def model_name(value: str) -> str:
    for group in MODEL_GROUPS:
        for option in group["options"]:
            if option["value"] == value:
                return option["name"]
    return value


def config_options(values: dict[str, Any], boolean_ok: bool) -> list[dict[str, Any]]:
    """Every option with its current value, as sent in session/new and set_config_option answers."""
    options: list[dict[str, Any]] = [
        {"id": "mode", "name": "Mode", "description": "How much rat-demo may do without asking",
         "category": "mode", "type": "select", "currentValue": values["mode"], "options": MODES},
        {"id": "model", "name": "Model", "description": "Which pretend model answers",
         "category": "model", "type": "select", "currentValue": values["model"], "options": MODEL_GROUPS},
    ]
    if boolean_ok:
        options.append({"id": "thoughts", "name": "Think out loud",
                        "description": "Stream a thought before each answer", "type": "boolean",
                        "currentValue": bool(values["thoughts"])})
    return options


def check_value(config_id: Any, value: Any, kind: Any, boolean_ok: bool) -> str | None:
    """None if `value` may be set for `config_id`, else why not (for an invalid-params error)."""
    if config_id == "mode":
        allowed = [m["value"] for m in MODES]
    elif config_id == "model":
        allowed = [o["value"] for g in MODEL_GROUPS for o in g["options"]]
    elif config_id == "thoughts" and boolean_ok:
        if kind != "boolean" or not isinstance(value, bool):
            return "thoughts is a boolean option: send type \"boolean\" and a true/false value"
        return None
    else:
        return f"unknown configId {config_id!r}"
    if value not in allowed:
        return f"{config_id} must be one of {', '.join(allowed)}, not {value!r}"
    return None
