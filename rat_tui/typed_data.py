"""Provides `build` (TOML data -> plain dataclasses, no pydantic) and `pydantic_model` (the same dataclass as
a pydantic model, for the messages of data that does not fit).

config.toml and the theme files are read at every launch. Their shapes were pydantic models, and
importing pydantic and building the models cost about 0.2 s before the first frame. Now they are
dataclasses: `build` checks well-formed data against the dataclass's annotations and builds it directly
(about a millisecond). Data `build` is not sure of raises `Unsure`; the caller then validates it with
`pydantic_model(cls)`, a pydantic model of the same fields, names, defaults and constraints, so a broken
file gets pydantic's messages, word for word, as before. `build` accepts only what that model accepts
unchanged (or, for an int given to a float, as that float): both ways give the same value.

Supported annotations: str, bool, int, float, Literal, `X | None`, `str | bool`, list[X], dict[K, V] and
nested dataclasses; a field's `metadata` may hold pydantic `Field` constraints ("gt", "ge", "le").
"""

from __future__ import annotations

import dataclasses
import operator
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

_hints: dict[type, dict[str, Any]] = {}


class Unsure(Exception):
    """The data is not plainly of the dataclass's shape: let the pydantic model decide (and say why)."""


def hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of dataclass `cls` (cached)."""
    found = _hints.get(cls)
    if found is None:
        module = sys.modules[cls.__module__]
        found = _hints[cls] = typing.get_type_hints(cls, vars(module))
    return found


def build(cls: type, data: Any, checked: bool = True) -> Any:
    """An instance of dataclass `cls` from `data` (a dict, as TOML gives); raises Unsure where the data is
    not plainly right. `checked=False` trusts the data (values a pydantic model has already validated)."""
    if type(data) is not dict:
        raise Unsure
    fields = {f.name: f for f in dataclasses.fields(cls)}
    annotations = hints(cls)
    values = {}
    for key, value in data.items():
        field = fields.get(key)
        if field is None:
            raise Unsure
        value = _value(annotations[key], value, checked)
        if checked and field.metadata and not _within(field.metadata, value):
            raise Unsure
        values[key] = value
    try:
        return cls(**values)
    except TypeError:  # a required field is missing
        raise Unsure from None


def _within(limits: typing.Mapping[str, Any], value: Any) -> bool:
    if value is None:
        return True
    return all(op(value, limits[name]) for name, op in (("gt", operator.gt), ("ge", operator.ge),
                                                                   ("le", operator.le)) if name in limits)


def _value(annotation: Any, value: Any, checked: bool) -> Any:
    origin = typing.get_origin(annotation)
    if dataclasses.is_dataclass(annotation):
        return build(annotation, value, checked)  # type: ignore[arg-type]
    if not checked and origin not in (list, dict, Union, types.UnionType):
        return value
    if annotation is str or annotation is bool or annotation is int:
        if type(value) is annotation:
            return value
    elif annotation is float:
        if type(value) is float:
            return value
        if type(value) is int:
            return float(value)
    elif origin is Literal:
        if any(type(value) is type(option) and value == option for option in typing.get_args(annotation)):
            return value
    elif origin is Union or origin is types.UnionType:
        options = [option for option in typing.get_args(annotation) if option is not type(None)]
        if value is None and len(options) < len(typing.get_args(annotation)):
            return None
        if len(options) == 1:
            return _value(options[0], value, checked)
        # Only unions of distinct plain types (str | bool): the value's own type is the one chosen.
        if all(option in (str, bool, int) for option in options) and type(value) in options:
            return value
        if not checked:
            return value
    elif origin is list:
        if type(value) is list:
            (item,) = typing.get_args(annotation)
            return [_value(item, entry, checked) for entry in value]
    elif origin is dict:
        if type(value) is dict:
            key_type, item = typing.get_args(annotation)
            return {_value(key_type, key, checked): _value(item, entry, checked) for key, entry in value.items()}
    raise Unsure


_models: dict[type, Any] = {}


def pydantic_model(cls: type, validators: dict[str, Callable[..., Any]] | None = None) -> Any:
    """A pydantic model of dataclass `cls` (unknown keys forbidden, nested dataclasses as models), built once.

    It has the class's name, so messages say "instance of AgentProfile" as the dataclass would be named;
    `validators` are pydantic validators (decorated) added to it."""
    model = _models.get(cls)
    if model is not None:
        return model
    from pydantic import ConfigDict, Field, create_model

    fields: dict[str, Any] = {}
    annotations = hints(cls)
    for field in dataclasses.fields(cls):
        limits = dict(field.metadata)
        if field.default_factory is not dataclasses.MISSING:
            info = Field(default_factory=field.default_factory, **limits)
        elif field.default is not dataclasses.MISSING:
            info = Field(default=field.default, **limits)
        else:
            info = Field(**limits)
        fields[field.name] = (_as_model(annotations[field.name]), info)
    model = create_model(cls.__name__, __config__=ConfigDict(extra="forbid"), __doc__=cls.__doc__,
                         __validators__=validators or {}, **fields)
    _models[cls] = model
    return model


def _as_model(annotation: Any) -> Any:
    """`annotation` with every dataclass in it replaced by its pydantic model."""
    if dataclasses.is_dataclass(annotation):
        return pydantic_model(annotation)  # type: ignore[arg-type]
    origin = typing.get_origin(annotation)
    if origin is None or origin is Literal:
        return annotation
    args = tuple(_as_model(arg) for arg in typing.get_args(annotation))
    if origin is Union or origin is types.UnionType:
        return Union[args]
    return origin[args]


def from_model(cls: type, model: Any) -> Any:
    """The dataclass `cls` from an instance of `pydantic_model(cls)` (the keys it was given, the rest default)."""
    return build(cls, model.model_dump(exclude_unset=True), checked=False)
