"""Provides `parse_ahead` and `store`: the default CSS of widget classes parsed in a worker thread before they
are first mounted, and handed to the app's stylesheet on the loop.

Textual parses a widget class's DEFAULT_CSS when the first widget of that class is mounted, on the loop:
the form dialog's first opening parsed 13 new sources (its screen, Input, Select, Checkbox, …) for about
18 ms while a key typed meanwhile waited. The warm-up thread parses them ahead with the app's CSS variables
(`parse_ahead`); `store` puts the rules in the stylesheet's parse cache, keyed as Textual looks them up, so
the first mount finds them parsed. A theme changed meanwhile (other variables) leaves the cache alone.

The cache itself holds 64 parsed sources in Textual; its `parse` walks every source each time a new one is
added, so past 64 sources (a long session opens many screens) each new widget class parsed the whole CSS
again. `store` grows it to CACHE_SIZE.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from types import ModuleType, SimpleNamespace
from typing import Any

from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode

CACHE_SIZE = 512

Parsed = tuple[dict[str, str], dict[tuple, list[Any]]]


def widget_classes(modules: Iterable[ModuleType]) -> list[type[DOMNode]]:
    """The DOM node classes named in `modules`, and those of the modules that define them (a Select's
    overlay and current value live beside it), without duplicates."""
    found: dict[type[DOMNode], None] = {}
    defining: dict[str, None] = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, DOMNode):
                found[value] = None
                defining[value.__module__] = None
    for name in defining:
        module = sys.modules.get(name)
        for value in vars(module).values() if module is not None else ():
            if isinstance(value, type) and issubclass(value, DOMNode):
                found[value] = None
    return list(found)


def default_css(cls: type[DOMNode]) -> list[tuple[Any, str, int, str]]:
    """What Textual adds to the stylesheet when a `cls` is first mounted (`DOMNode._get_default_css`)."""
    return DOMNode._get_default_css(SimpleNamespace(_node_bases=DOMNode._css_bases(cls)))  # type: ignore[arg-type]


def parse_ahead(stylesheet: Stylesheet, classes: Iterable[type[DOMNode]]) -> Parsed:
    """Parse the default CSS of `classes` with `stylesheet`'s variables, in a private stylesheet (any thread).
    Sources that fail to parse or carry errors are left out: their first mount parses and reports them."""
    variables = stylesheet._variables
    sheet = Stylesheet(variables=variables)
    parsed: dict[tuple, list[Any]] = {}
    for cls in classes:
        for read_from, css, tie_breaker, scope in default_css(cls):
            key = (css, read_from, True, tie_breaker, scope)
            if key in parsed or key in stylesheet._parse_cache:
                continue
            try:
                rules = sheet._parse_rules(css, read_from, True, tie_breaker, scope)
            except Exception:
                continue
            if not any(rule.errors for rule in rules):
                parsed[key] = rules
    return variables, parsed


def store(stylesheet: Stylesheet, parsed: Parsed) -> int:
    """Put what `parse_ahead` parsed in `stylesheet`'s parse cache (on the loop); how many sources."""
    variables, rules = parsed
    stylesheet._parse_cache.grow(CACHE_SIZE)
    if stylesheet._variables is not variables:  # the theme changed meanwhile: parsed with other values
        return 0
    for key, value in rules.items():
        if key not in stylesheet._parse_cache:
            stylesheet._parse_cache[key] = value
    return len(rules)
