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

import orjson

REPLACEMENT = "\ufffd"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Bytes that may decode to a lone surrogate: a `\uD800`-`\uDFFF` escape, or a UTF-8-encoded surrogate.
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89abcdefABCDEF]|\xed[\xa0-\xbf]")
# orjson reads a line as the stdlib does but for a number of 19 digits or more (exact to 2**64, a float
# past it, where the router's decoder clamps to 64 bits and json.loads is exact): a line with 19 digits in
# a row (each made "0", then looked for) takes the stdlib's path. The test is 0.4 us on a chunk's line.
_DIGITS_AS_ZERO = bytes(48 if 48 <= byte <= 57 else byte for byte in range(256))
_LONG_NUMBER = b"0" * 19


def decode_line(line: bytes | str, decoder: json.JSONDecoder | None = None) -> Any:
    """The JSON value of one line, with any character that is not valid Unicode text made U+FFFD.

    Raises ValueError (json's) when the line is not JSON. Lines that are valid UTF-8 with no
    surrogate escape (all but the odd one) cost one decode, one scan and a substring test or two. `decoder` (the
    router's, with its limits on numbers) is built once by its owner: `json.loads` with options built
    one per call, half the cost of a streamed chunk's decoding.
    """
    loads = json.loads if decoder is None else decoder.decode
    if isinstance(line, str):
        if decoder is not None and line.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", line, 0)
        value = loads(line)
        if "\\u" in line or _LONE_SURROGATE.search(line):
            value = mend(value)
        return value
    # orjson (C): decode_line 1.8 us for a streamed chunk's line (orjson 0.9 of it), against 3.3 below. What it refuses and the stdlib reads
    # (NaN, a BOM, UTF-16, bytes not UTF-8, a lone surrogate, a number past a double) goes on below, as does
    # what is not JSON at all: the stdlib's reading of it, and its error message, are the ones rat gives.
    if _LONG_NUMBER not in line.translate(_DIGITS_AS_ZERO):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    # As json.loads reads bytes: UTF-8 (or what the first bytes say), surrogates let through. A line that
    # opens an object is UTF-8 (no BOM, no NUL second byte: what detect_encoding checks first).
    if line[:1] == b"{" and line[1:2] != b"\x00":
        try:
            text = line.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return mend(loads(line.decode("utf-8", "replace")))
        if decoder is not None and line[-1:] == b"}":
            # Every message an agent sends: `decode` less its two whitespace checks (nothing before the `{`,
            # nothing after the `}`), a third of its cost. Anything the scan does not end exactly at the
            # line's end goes through `decode`, which says what is wrong with it.
            try:
                value, end = decoder.scan_once(text, 0)
            except StopIteration:
                end = -1
            if end != len(text):
                value = loads(text)
        else:
            value = loads(text)
        # (UTF-8-encoded surrogates are not ASCII: most lines are, and are not searched for them)
        if ("\\u" in text or (not line.isascii() and b"\xed" in line)) and _MAYBE_SURROGATE.search(line):
            value = mend(value)
        return value
    try:
        value = loads(line.decode(json.detect_encoding(line), "surrogatepass"))
    except UnicodeDecodeError:
        return mend(loads(line.decode("utf-8", "replace")))
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
