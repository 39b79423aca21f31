"""The Textual fence's checker (tests/textual_ext/test_fence.py): which underscore names a Textual class defines
that code outside rat_tui/ui/textual_ext/ overrides or reads.

A name counts as Textual's when a class of the `textual` package defines it: in its class body (a method, a class
attribute, a reactive) or as an instance attribute its own methods assign (`self._name = ...`). A rat class that
derives from a Textual class may not define or touch such a name (`self._x`, `super()._x`, `cls._x`); any other
`obj._x` is checked against every underscore name any Textual class defines.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import functools
import io
import importlib
import inspect
import pkgutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

import textual

ROOT = Path(__file__).resolve().parents[2] / "rat_tui"
FENCED = ROOT / "ui" / "textual_ext"


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def textual_class(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "textual"


@functools.cache
def names_of(cls: type) -> frozenset[str]:
    """The underscore names one class itself defines (not its bases)."""
    found = {name for name in vars(cls) if private(name)}
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return frozenset(found)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and private(node.attr) \
                and isinstance(node.value, ast.Name) and node.value.id == "self":
            found.add(node.attr)
    return frozenset(found)


@functools.cache
def every_textual_private() -> frozenset[str]:
    """Every underscore name some Textual class defines, over the whole installed package."""
    found: set[str] = set()
    for info in pkgutil.walk_packages(textual.__path__, "textual."):
        if info.name.startswith(("textual.demo", "textual.__main__", "textual.cli")):
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # a few of its modules print when imported
                module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - an optional extra of Textual's that is not installed
            continue
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == info.name:
                found |= names_of(value)
    # A named tuple's own methods (`row._replace`) are Python's, whatever class they are on.
    return frozenset(found - set(vars(collections.namedtuple("Row", "a"))))


# Underscore names of other libraries that some Textual class happens to define too, read on those libraries'
# objects (not a Textual internal).
REFLECTION = ("getattr", "setattr", "hasattr", "delattr")

OTHER_LIBRARIES = {
    "_tokens": "a Pygments RegexLexer's compiled token table (widgets/code_lex.py)",
    "_value2member_map_": "an Enum's value table (signal.Signals)",
}


def inherited(cls: type) -> dict[str, type]:
    """Underscore name -> the Textual class in `cls`'s MRO that defines it."""
    found: dict[str, type] = {}
    for base in reversed(cls.__mro__):
        if textual_class(base):
            found.update(dict.fromkeys(names_of(base), base))
    return found


@functools.cache
def rat_classes() -> tuple[type, ...]:
    found: list[type] = []
    for path in outside_files():
        module = load(path)
        found += [v for v in vars(module).values() if isinstance(v, type) and v.__module__ == module.__name__]
    return tuple(found)


def mixins_among(classes: tuple[type, ...]) -> dict[type, dict[str, str]]:
    """rat's classes that are not Textual's but are mixed into one (`DismissOnce`, a transcript mixin), with the
    underscore names of the Textual classes they are mixed with: in that MRO those names are Textual's."""
    found: dict[type, dict[str, str]] = {}
    for cls in classes:
        if any(textual_class(base) for base in cls.__mro__):
            names = {name: base.__name__ for name, base in inherited(cls).items()}
            for base in cls.__mro__[1:]:
                if not textual_class(base) and base is not object:
                    found.setdefault(base, {}).update(names)
    return found


@functools.cache
def textual_mixins() -> dict[type, dict[str, str]]:
    return mixins_among(rat_classes())


def textual_names_of(cls: type, local: dict[type, dict[str, str]] | None = None) -> dict[str, str]:
    """Underscore name -> the Textual class (by name) it belongs to, for a rat class."""
    if any(textual_class(base) for base in cls.__mro__):
        return {name: base.__name__ for name, base in inherited(cls).items()}
    return {**textual_mixins().get(cls, {}), **(local or {}).get(cls, {})}


@dataclass(frozen=True)
class Breach:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_self(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def breaches_in(path: Path, allowed: frozenset[str] = frozenset(), module: object | None = None) -> list[Breach]:
    """What `path` (a module of rat_tui, or any file with its imported module given) does with Textual's
    underscore names. `allowed`: the Textual hooks ("TextArea._on_key") a class may override and call."""
    tree = ast.parse(path.read_text())
    if module is None:
        module = load(path)
    shown = str(path.relative_to(ROOT.parent)) if path.is_relative_to(ROOT.parent) else path.name
    everything = every_textual_private() - set(OTHER_LIBRARIES)
    modules = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names if alias.name.split(".")[0] != "textual"}
    found: list[Breach] = []
    in_class: set[int] = set()
    local = mixins_among(tuple(v for v in vars(module).values() if isinstance(v, type)))

    # getattr(app, "_driver"): by its name, in a module of the UI or one that imports Textual (the engine
    # reading asyncio's `_transport` by its name is not reading Textual's).
    touches_textual = ui_module(path) or any(
        isinstance(node, (ast.Import, ast.ImportFrom)) and any(name.split(".")[0] == "textual" for name in
                                                              imported_modules(node)) for node in ast.walk(tree))

    def on_module(item: ast.Attribute) -> bool:  # os._exit, sys._current_frames: not Textual's
        return isinstance(item.value, ast.Name) and item.value.id in modules

    def visit_class(node: ast.ClassDef, owner: object) -> None:
        cls = getattr(owner, node.name, None)
        if not isinstance(cls, type):
            return
        textual_names = textual_names_of(cls, local)
        for item in ast.walk(node):
            in_class.add(id(item))
        for item in node.body:
            if isinstance(item, ast.ClassDef):
                visit_class(item, cls)
            names = []
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [item.name]
            elif isinstance(item, ast.Assign):
                names = [t.id for t in item.targets if isinstance(t, ast.Name)]
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                names = [item.target.id]
            for name in names:
                if name in textual_names and f"{textual_names[name]}.{name}" not in allowed:
                    found.append(Breach(shown, item.lineno, f"{node.name} overrides {textual_names[name]}"
                                                            f".{name}"))
        for item in ast.walk(node):
            if isinstance(item, ast.Attribute) and private(item.attr):
                if is_self(item.value) and item.attr in textual_names \
                        and f"{textual_names[item.attr]}.{item.attr}" not in allowed:
                    found.append(Breach(shown, item.lineno, f"{node.name} uses {textual_names[item.attr]}"
                                                            f".{item.attr}"))
                elif not is_self(item.value) and item.attr in everything and not on_module(item):
                    found.append(Breach(shown, item.lineno, f"{node.name} reads Textual's {item.attr}"))

    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            visit_class(node, module)
    for item in ast.walk(tree):
        if isinstance(item, ast.Call) and isinstance(item.func, ast.Name) and item.func.id in REFLECTION \
                and len(item.args) > 1 and isinstance(item.args[1], ast.Constant) and touches_textual:
            name = item.args[1].value
            if isinstance(name, str) and private(name) and name in everything:
                found.append(Breach(shown, item.lineno, f"{item.func.id}() of Textual's {name} by its name"))
        if id(item) in in_class:
            continue
        if isinstance(item, ast.Attribute) and private(item.attr) and item.attr in everything and not on_module(item):
            found.append(Breach(shown, item.lineno, f"reads Textual's {item.attr}"))
        if isinstance(item, (ast.Import, ast.ImportFrom)):
            names = [item.module or ""] if isinstance(item, ast.ImportFrom) else [a.name for a in item.names]
            imported = [a.name for a in item.names] if isinstance(item, ast.ImportFrom) else []
            for name in names:
                parts = name.split(".")
                if parts[0] == "textual" and (any(private(p) for p in parts)
                                              or any(private(n) for n in imported)):
                    found.append(Breach(shown, item.lineno, f"imports Textual internals ({name})"))
    return sorted(set(found), key=lambda b: (b.path, b.line, b.what))


def ui_module(path: Path) -> bool:
    return path.is_relative_to(ROOT / "ui")


def imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [] if node.level else [node.module or ""]
    return [alias.name for alias in node.names]


def load(path: Path) -> object:
    """The module of `path`; a `__main__` (it runs as it is imported: the demo agent reads stdin) is read only."""
    if path.name == "__main__.py":
        return type("NotImported", (), {"__name__": module_name(path)})
    return importlib.import_module(module_name(path))


def outside_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if not p.is_relative_to(FENCED))
