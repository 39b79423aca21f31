"""Provides decode_line: one wire line into the JSON value every part of rat sees, live and replayed.

The wire is meant to be UTF-8 JSON, but an agent may write bytes that are not UTF-8 (`\\xff`), the
UTF-8 form of a surrogate (`ED A0 80`, which Python's json reads as a lone `"\\ud800"`) or a lone
surrogate escape (`"\\ud800"`). None of those can be shown, encoded or stored as text, so each such
character becomes U+FFFD in the decoded message, which is what the UI shows. The recorders get the
line's exact bytes beside it (`raw`), and a replay decodes them with this same function, so it shows
what the live session showed.
"""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Bytes that may decode to a lone surrogate: a `\uD800`-`\uDFFF` escape, or a UTF-8-encoded surrogate.
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89abcdefABCDEF]|\xed[\xa0-\xbf]")


def decode_line(line: bytes | str, **options: Any) -> Any:
    """The JSON value of one line, with any character that is not valid Unicode text made U+FFFD.

    Raises ValueError (json's) when the line is not JSON. Lines that are valid UTF-8 with no
    surrogate escape (all but the odd one) cost one `json.loads` and two substring tests. `options`
    go to `json.loads` (the router's limits on numbers).
    """
    if isinstance(line, str):
        value = json.loads(line, **options)
        if "\\u" in line or _LONE_SURROGATE.search(line):
            value = mend(value)
        return value
    try:
        value = json.loads(line, **options)  # bytes: UTF-8, with surrogates let through ("surrogatepass")
    except UnicodeDecodeError:
        return mend(json.loads(line.decode("utf-8", "replace"), **options))
    if (b"\\u" in line or b"\xed" in line) and _MAYBE_SURROGATE.search(line):
        value = mend(value)
    return value


def clean_text(text: str) -> str:
    """`text` with every lone surrogate made U+FFFD (valid pairs are single characters already)."""
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


def has_lone_surrogate(text: str) -> bool:
    return _LONE_SURROGATE.search(text) is not None


def mend(value: Any) -> Any:
    """A copy of a JSON value whose strings (keys too) hold no lone surrogate; walks without recursion."""
    if isinstance(value, str):
        return clean_text(value)
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]  # (container, key in it, value to copy)
    while stack:
        parent, key, item = stack.pop()
        if isinstance(item, dict):
            copy: Any = {}
            for name, child in item.items():
                name = clean_text(name) if isinstance(name, str) else name
                copy[name] = child
                if isinstance(child, (dict, list, str)):
                    stack.append((copy, name, child))
        elif isinstance(item, list):
            copy = list(item)
            for index, child in enumerate(item):
                if isinstance(child, (dict, list, str)):
                    stack.append((copy, index, child))
        else:
            copy = clean_text(item)
        parent[key] = copy
    return root[0]
