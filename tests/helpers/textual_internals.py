"""What tests/textual_ext/test_internals.py checks: the private names rat_tui/ui/textual_ext/__init__.py lists, and
the Textual methods its classes override, with their signatures and the source of the ones it copies."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass
from typing import Any

import rat_tui.ui.textual_ext as textual_ext

from .fence import names_of, textual_class

LISTED = re.compile(r"^- `(textual\.[\w.]+)`((?: \*)?)((?: copied)?)$", re.MULTILINE)
MODULE_HEADING = re.compile(r"^(\w+):$", re.MULTILINE)


@dataclass(frozen=True)
class Listed:
    path: str  # textual.module.Class.name
    module: str  # the textual_ext module using it
    overridden: bool
    copied: bool


def listed() -> list[Listed]:
    """The names the package docstring lists, under the textual_ext module heading each comes after."""
    doc = textual_ext.__doc__ or ""
    found, module = [], "textual_ext"
    for line in doc.splitlines():
        if heading := MODULE_HEADING.match(line):
            module = heading.group(1)
        elif entry := LISTED.match(line):
            found.append(Listed(entry.group(1), module, bool(entry.group(2)), bool(entry.group(3))))
    return found


def resolve(path: str) -> tuple[Any, str | None]:
    """(the object at `path`, None), or (its owner, a reason it is not there)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        break
    else:
        return None, f"no module of {path}"
    for index, name in enumerate(parts[cut:], cut):
        if hasattr(target, name):
            target = getattr(target, name) if not isinstance(target, type) else inspect.getattr_static(target, name)
            continue
        if isinstance(target, type) and index == len(parts) - 1 and name in names_of(target):
            return target, None  # an instance attribute its own methods assign
        return target, f"{'.'.join(parts[:index])} has no {name}"
    return target, None


def function_of(target: Any) -> Any:
    if isinstance(target, (staticmethod, classmethod)):
        return target.__func__
    if isinstance(target, property):
        return target.fget
    return getattr(target, "__wrapped__", target)


def signature_of(target: Any) -> str:
    try:
        signature = str(inspect.signature(function_of(target)))
    except (TypeError, ValueError):
        return "(no signature)"
    return re.sub(r" object at 0x[0-9a-f]+", " object", signature)  # a default's repr, not its address


def source_hash(target: Any) -> str:
    source = inspect.getsource(function_of(target))
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def ext_classes() -> list[type]:
    """The classes textual_ext defines, and the driver classes `input_first` makes (of Textual's drivers)."""
    from textual.drivers.headless_driver import HeadlessDriver
    from textual.drivers.linux_driver import LinuxDriver

    from rat_tui.ui.textual_ext.driver import input_first

    found: list[type] = [input_first(LinuxDriver), input_first(HeadlessDriver)]
    for info in pkgutil.iter_modules(textual_ext.__path__, textual_ext.__name__ + "."):
        module = importlib.import_module(info.name)
        found += [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]
    return found


def overrides() -> dict[str, str]:
    """`textual.module.Class.method` -> its signature, for every Textual method a textual_ext class overrides
    (the Textual class nearest in the MRO that defines it; a mixin's, in the Textual class it is mixed into)."""
    found: dict[str, str] = {}
    for cls in ext_classes():
        hosts = [cls] if any(textual_class(b) for b in cls.__mro__) else hosts_of(cls)
        for host in hosts:
            for name, value in vars(cls).items():
                if not callable(function_of(value)) or name in ("__init__", "__init_subclass__"):
                    continue
                base = next((b for b in host.__mro__ if textual_class(b) and name in vars(b)), None)
                if base is not None:
                    found[f"{base.__module__}.{base.__qualname__}.{name}"] = signature_of(vars(base)[name])
    return found


def hosts_of(mixin: type) -> list[type]:
    """The Textual classes a rat mixin of textual_ext is written for: the ones rat's classes mix it into."""
    from .fence import rat_classes

    return [cls for cls in (*rat_classes(), *ext_classes())
            if mixin in cls.__mro__[1:] and any(textual_class(b) for b in cls.__mro__)]
