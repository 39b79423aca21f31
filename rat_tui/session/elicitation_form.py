"""Provides the form model of an `elicitation/create` request: fields from the requested schema, and validation.

No Textual: the screen (ui/screens/elicitation.py) draws these fields and asks `check` about what
the user typed, so the rules are tested without a UI. The schema subset is ACP's `ElicitationSchema`
(the same as MCP's): a flat object of string, number, integer, boolean, single-select enum
(`enum`, or `oneOf` of {const, title}) and multi-select (`array`) properties.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from urllib.parse import urlparse

log = logging.getLogger("rat.elicitation")

PATTERN_TIMEOUT = 0.02  # seconds a field's `pattern` may take on one value before it is left unchecked
_SLOW_PATTERNS: set[str] = set()  # patterns that once ran out of time: not tried again
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


@dataclass(frozen=True)
class EnumChoice:
    value: str
    title: str
    description: str | None = None


@dataclass
class FormField:
    """One property of the requested schema, as the form shows it."""

    name: str
    # The property types we can draw: "string", "number", "integer", "boolean", "enum", "multi"; anything
    # else is "unsupported" (listed as such, never guessed at).
    kind: str
    title: str
    description: str | None = None
    required: bool = False
    default: Any = None
    choices: list[EnumChoice] = field(default_factory=list)
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    raw_type: str = ""


@dataclass
class ElicitationForm:
    """The parsed request: its message, the schema's title/description, the fields in the agent's order."""

    message: str
    title: str | None
    description: str | None
    fields: list[FormField]

    @property
    def blocked_by(self) -> list[FormField]:
        """Required fields of a kind we cannot draw: the form cannot be accepted, only declined."""
        return [f for f in self.fields if f.kind == "unsupported" and f.required]


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parse_form(params: dict[str, Any]) -> ElicitationForm:
    """The form of a form-mode request; tolerant: a malformed property becomes an unsupported field."""
    schema = params.get("requestedSchema") if isinstance(params.get("requestedSchema"), dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    fields = [_field(str(name), prop, name in required) for name, prop in properties.items()]
    return ElicitationForm(str(params.get("message") or ""), _text(schema.get("title")), _text(schema.get("description")), fields)


def _field(name: str, prop: Any, required: bool) -> FormField:
    if not isinstance(prop, dict):
        return FormField(name, "unsupported", name, required=required, raw_type="?")
    kind = prop.get("type")
    out = FormField(name, "unsupported", _text(prop.get("title")) or name, _text(prop.get("description")),
                    required, raw_type=str(kind))
    if kind == "string":
        choices = _string_choices(prop)
        if choices:
            out.kind, out.choices = "enum", choices
            default = prop.get("default")
            out.default = default if any(c.value == default for c in choices) else None
        else:
            out.kind = "string"
            out.default = _text(prop.get("default"))
            out.min_length, out.max_length = _int(prop.get("minLength")), _int(prop.get("maxLength"))
            out.pattern = _text(prop.get("pattern"))
            out.format = _text(prop.get("format"))
    elif kind in ("number", "integer"):
        out.kind = kind
        out.minimum, out.maximum = _number(prop.get("minimum")), _number(prop.get("maximum"))
        default = _number(prop.get("default"))
        out.default = default if kind == "number" or isinstance(default, int) else None
    elif kind == "boolean":
        out.kind = "boolean"
        out.default = prop.get("default") if isinstance(prop.get("default"), bool) else None
    elif kind == "array":
        items = prop.get("items") if isinstance(prop.get("items"), dict) else {}
        choices = _multi_choices(items)
        if choices:
            out.kind, out.choices = "multi", choices
            out.min_items, out.max_items = _int(prop.get("minItems")), _int(prop.get("maxItems"))
            default = prop.get("default")
            values = {c.value for c in choices}
            out.default = [v for v in default if v in values] if isinstance(default, list) else None
    return out


def _titled(options: Any) -> list[EnumChoice]:
    """`oneOf` / `anyOf` choices: [{const, title?, description?}, ...]."""
    if not isinstance(options, list):
        return []
    return [EnumChoice(o["const"], _text(o.get("title")) or o["const"], _text(o.get("description")))
            for o in options if isinstance(o, dict) and isinstance(o.get("const"), str)]


def _string_choices(prop: dict[str, Any]) -> list[EnumChoice]:
    choices = _titled(prop.get("oneOf"))
    if choices:
        return choices
    values = prop.get("enum")
    if isinstance(values, list):
        # enumNames: the legacy (MCP 2025-06-18) way of titling plain enums.
        names = prop.get("enumNames") if isinstance(prop.get("enumNames"), list) else []
        return [EnumChoice(v, names[i] if i < len(names) and isinstance(names[i], str) else v)
                for i, v in enumerate(values) if isinstance(v, str)]
    return []


def _multi_choices(items: dict[str, Any]) -> list[EnumChoice]:
    if isinstance(items.get("anyOf"), list):
        return _titled(items["anyOf"])
    if items.get("type") == "string" and isinstance(items.get("enum"), list):
        return [EnumChoice(v, v) for v in items["enum"] if isinstance(v, str)]
    return []


# -- checking what the user entered ----------------------------------------------------------


class Missing:
    """What `check` returns for an empty optional field: leave it out of the content."""


MISSING = Missing()


def check(field: FormField, raw: Any) -> tuple[Any, str | None]:
    """(the wire value, None) when `raw` is acceptable for `field`, else (None, a message for the user).

    `raw` is what the widget holds: text for strings and numbers, bool, an enum value or None,
    a list of values. An empty optional field gives MISSING (left out of the answer).
    """
    empty = raw is None or (isinstance(raw, str) and not raw.strip()) or (field.kind == "multi" and not raw)
    if empty and field.kind != "boolean":
        return (None, "Required.") if field.required else (MISSING, None)
    if field.kind == "string":
        return _check_string(field, str(raw))
    if field.kind in ("number", "integer"):
        return _check_number(field, str(raw).strip())
    if field.kind == "boolean":
        return bool(raw), None
    if field.kind == "enum":
        if raw not in {c.value for c in field.choices}:
            return None, "Pick one of the choices."
        return raw, None
    if field.kind == "multi":
        values = [v for v in raw if v in {c.value for c in field.choices}]
        if field.min_items is not None and len(values) < field.min_items:
            return None, f"Pick at least {field.min_items}."
        if field.max_items is not None and len(values) > field.max_items:
            return None, f"Pick at most {field.max_items}."
        return values, None
    return MISSING, None  # unsupported: never sent


def _check_string(field: FormField, text: str) -> tuple[Any, str | None]:
    if field.min_length is not None and len(text) < field.min_length:
        return None, f"At least {field.min_length} characters."
    if field.max_length is not None and len(text) > field.max_length:
        return None, f"At most {field.max_length} characters."
    problem = _format_problem(field.format, text)
    if problem:
        return None, problem
    if field.pattern and field.pattern not in _SLOW_PATTERNS:
        import regex  # here: 50 ms to import, and most sessions never see a pattern

        try:
            # The `regex` engine, with a time limit: a pattern that backtracks catastrophically (`^(a+)+$`
            # on "aaaa…!") would hold the UI thread for seconds per keystroke with `re`.
            matched = regex.search(field.pattern, text, timeout=PATTERN_TIMEOUT) is not None
        except regex.error:
            log.warning("elicitation field %s has a pattern Python cannot read: %r", field.name, field.pattern)
            matched = True  # the agent checks its own pattern; do not block the user on ours
        except TimeoutError:
            log.warning("elicitation field %s: pattern %r took over %.2f s on a value; no longer checked",
                        field.name, field.pattern, PATTERN_TIMEOUT)
            _SLOW_PATTERNS.add(field.pattern)  # one stall at most, not one per keystroke
            matched = True  # the agent checks its own pattern; do not freeze the user on ours
        if not matched:
            return None, f"Must match the pattern {field.pattern}"
    return text, None


def _format_problem(fmt: str | None, text: str) -> str | None:
    if fmt == "email" and not EMAIL.match(text):
        return "Not an email address."
    if fmt == "uri":
        parts = urlparse(text)
        if not parts.scheme or not (parts.netloc or parts.path):
            return "Not a URI (e.g. https://example.com)."
    if fmt == "date":
        try:
            date.fromisoformat(text)
        except ValueError:
            return "Not a date (YYYY-MM-DD)."
    if fmt == "date-time":
        try:
            datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return "Not a date and time (e.g. 2025-01-31T12:00:00Z)."
    return None


def _check_number(field: FormField, text: str) -> tuple[Any, str | None]:
    value: int | float
    try:
        value = int(text)
    except ValueError:
        if field.kind == "integer":
            return None, "Not a whole number."
        try:
            value = float(text)
        except ValueError:
            return None, "Not a number."
        if value != value or value in (float("inf"), float("-inf")):
            return None, "Not a number."
    if field.minimum is not None and value < field.minimum:
        return None, f"At least {_show(field.minimum)}."
    if field.maximum is not None and value > field.maximum:
        return None, f"At most {_show(field.maximum)}."
    return value, None


def _show(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def constraints(field: FormField) -> str:
    """A short hint of the rules, shown under the field (e.g. "1–10", "email", "3–20 characters")."""
    hints: list[str] = []
    if field.kind in ("number", "integer"):
        low, high = field.minimum, field.maximum
        if low is not None and high is not None:
            hints.append(f"{_show(low)}–{_show(high)}")
        elif low is not None:
            hints.append(f"≥ {_show(low)}")
        elif high is not None:
            hints.append(f"≤ {_show(high)}")
        if field.kind == "integer":
            hints.append("whole number")
    if field.kind == "string":
        if field.format:
            hints.append({"date": "YYYY-MM-DD", "date-time": "ISO 8601 date and time"}.get(field.format, field.format))
        if field.min_length is not None and field.max_length is not None:
            hints.append(f"{field.min_length}–{field.max_length} characters")
        elif field.min_length:
            hints.append(f"at least {field.min_length} characters")
        elif field.max_length is not None:
            hints.append(f"at most {field.max_length} characters")
    if field.kind == "multi":
        if field.min_items:
            hints.append(f"pick at least {field.min_items}")
        if field.max_items is not None:
            hints.append(f"pick at most {field.max_items}")
    return " · ".join(hints)


def content_of(form: ElicitationForm, raws: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(the `content` of an accept answer, {field name: message} for every field that is not acceptable)."""
    content: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for f in form.fields:
        if f.kind == "unsupported":
            if f.required:
                problems[f.name] = f"rat-tui cannot show a field of type {f.raw_type!r}."
            continue
        value, problem = check(f, raws.get(f.name))
        if problem:
            problems[f.name] = problem
        elif value is not MISSING:
            content[f.name] = value
    return content, problems
