"""Validate ACP messages against the official JSON Schema (``tests/fixtures/acp-schema/schema.json``).

Validating a whole message against the schema root proves little (see tests/fixtures/README.md), so we validate
``params`` / ``result`` against the ``$defs`` entry for the method:

    validate("session/update", "notification", params)
    validate("session/prompt", "response", result)
    validate_message(msg, sender="agent", pending_methods={3: "session/prompt"})

The schema folder is ``tests/fixtures/acp-schema`` unless env ``RAT_ACP_SCHEMA_DIR`` says otherwise.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match

SUFFIX = {"request": "Request", "response": "Response", "notification": "Notification"}


def schema_dir() -> Path:
    env = os.environ.get("RAT_ACP_SCHEMA_DIR")
    return Path(env) if env else Path(__file__).resolve().parent.parent / "fixtures" / "acp-schema"


@lru_cache(maxsize=None)
def _defs(path: str) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))["$defs"]


def schema_file() -> str:
    """schema.json, or schema.unstable.json when env RAT_ACP_SCHEMA_UNSTABLE is set (tests of unstable features)."""
    return str(schema_dir() / ("schema.unstable.json" if os.environ.get("RAT_ACP_SCHEMA_UNSTABLE") else "schema.json"))


def defs() -> dict[str, Any]:
    """Every `$defs` entry of schema.json (or of schema.unstable.json, see schema_file)."""
    return _defs(schema_file())


@lru_cache(maxsize=None)
def _validator(path: str, name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$defs": _defs(path), "$ref": f"#/$defs/{name}"})


def validator(name: str) -> jsonschema.Draft202012Validator:
    """A cached validator for the `$defs` entry `name` (e.g. "SessionNotification", "Error")."""
    return _validator(schema_file(), name)


def def_name(method: str, kind: str) -> str | None:
    """The `$defs` name for `method` and kind ("request" | "response" | "notification"), or None."""
    if kind not in SUFFIX:
        raise ValueError(f"kind must be one of {sorted(SUFFIX)}, not {kind!r}")
    for name, entry in defs().items():
        if entry.get("x-method") == method and name.endswith(SUFFIX[kind]):
            return name
    return None


def method_side(method: str, kind: str | None = None) -> str | None:
    """`x-side` of a method: "agent" (handled by the agent), "client", "protocol", or None if unknown.

    With `kind`, the side of that kind's definition: `mcp/message` requests go to the client, its
    notifications (request-scoped, from the MCP provider) to the agent."""
    name = def_name(method, kind) if kind is not None else None
    if name is not None:
        return defs()[name].get("x-side")
    for entry in defs().values():
        if entry.get("x-method") == method:
            return entry.get("x-side")
    return None


def _explain(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """Dig into anyOf/oneOf failures: skip the variants ruled out by their tag (a `const` mismatch)."""
    while error.context:
        tags = {e.relative_schema_path[0] for e in error.context if e.validator == "const"}
        rest = [e for e in error.context if e.relative_schema_path[0] not in tags]
        if not rest:
            break
        error = best_match(rest)
    return error


def _check(name: str, payload: Any, what: str) -> None:
    error = best_match(validator(name).iter_errors(payload))
    if error is not None:
        error = _explain(error)
        where = error.json_path  # e.g. $.update.content
        raise AssertionError(f"{what} does not match {name} at {where}: {error.message}")


def validate(method: str, kind: str, payload: Any) -> None:
    """Assert `payload` (params of a request/notification, or a response's result) fits the schema."""
    name = def_name(method, kind)
    if name is None:
        raise AssertionError(f"no schema for {method} {kind} (unknown method?)")
    _check(name, payload, f"{method} {kind}")


def validate_error(error: Any, method: str | None = None) -> None:
    """Assert a JSON-RPC `error` object fits the schema's `Error`."""
    _check("Error", error, f"error response{f' to {method}' if method else ''}")


def validate_message(
    msg: dict,
    sender: str,
    pending_methods: dict[Any, str],
    *,
    allow_unknown: bool = False,
) -> tuple[str, str | None]:
    """Validate one raw JSON-RPC message sent by `sender` ("client" or "agent").

    `pending_methods` maps the ids of requests the *other* side sent (and that are not yet answered)
    to their method, so a response can be checked against the right result type; the caller keeps it
    up to date. Returns ``(kind, method)`` with kind "request", "notification", "response" or "error".
    Extension methods (leading underscore) are accepted unchecked, other unknown methods only with
    `allow_unknown`.
    """
    if sender not in ("client", "agent"):
        raise ValueError(f"sender must be 'client' or 'agent', not {sender!r}")
    if not isinstance(msg, dict):
        raise AssertionError(f"message from {sender} is not a JSON object: {msg!r}")
    if msg.get("jsonrpc") != "2.0":
        raise AssertionError(f"message from {sender} lacks jsonrpc 2.0: {str(msg)[:200]}")
    method = msg.get("method")
    if method is not None:
        if not isinstance(method, str):
            raise AssertionError(f"method is not a string: {method!r}")
        kind = "request" if "id" in msg else "notification"
        params = msg.get("params", {})
        if def_name(method, kind) is None:
            if method.startswith("_") or allow_unknown:
                return kind, method
            raise AssertionError(f"{sender} sent unknown {kind} {method!r}")
        handler = method_side(method, kind)
        expected = "client" if sender == "agent" else "agent"
        if handler not in (expected, "protocol", "both"):
            raise AssertionError(f"{sender} sent {method} {kind}, but that method is handled by the {handler}")
        validate(method, kind, params)
        return kind, method
    if "id" not in msg:
        raise AssertionError(f"message from {sender} is neither request, notification nor response: {str(msg)[:200]}")
    id = msg["id"]
    if id not in pending_methods:
        raise AssertionError(f"{sender} answered id {id!r}, which matches no pending request")
    method = pending_methods[id]
    if ("result" in msg) == ("error" in msg):
        raise AssertionError(f"response to {method} (id {id!r}) must have exactly one of result/error")
    if "error" in msg:
        validate_error(msg["error"], method)
        return "error", method
    if def_name(method, "response") is None:
        if method.startswith("_") or allow_unknown:
            return "response", method
        raise AssertionError(f"no schema for the response to {method!r}")
    validate(method, "response", msg["result"])
    return "response", method


def validate_unstable(name: str, payload: Any) -> None:
    """Assert `payload` fits the `$defs` entry `name` of schema.unstable.json (e.g. "SessionNotification"
    for a `notice` update, which the stable schema does not have yet)."""
    error = best_match(_validator(str(schema_dir() / "schema.unstable.json"), name).iter_errors(payload))
    if error is not None:
        error = _explain(error)
        raise AssertionError(f"{name} (unstable) does not match at {error.json_path}: {error.message}")
