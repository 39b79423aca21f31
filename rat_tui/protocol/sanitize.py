"""Provides the one sanitiser of text that came from an agent, before it can reach the terminal.

An agent is a program rat-tui did not write, fed by text nobody vetted. A string it sends that holds
`ESC ] 52 ; …` would write the user's clipboard if it reached the terminal as is, `ESC [ 6n` would
make the terminal type a reply, `ESC [ 2J` clear the screen. So every string from an agent passes
through `clean` (or `clean_ansi` where the protocol says the text is terminal output) as it enters
the session's state, and the few paths that bypass the state (toasts, dialogs, the stderr tail,
rat-tui's own tools, the log) call the same functions.

- `clean(text)`: control characters are shown visibly (ESC as `␛`, the other C0 controls as their
  Control Pictures, DEL as `␡`); C1 controls (0x80–0x9f, which some terminals read as ESC + a
  letter: 0x9b is CSI) and lone surrogates become `�`. Newline and tab stay; CR LF becomes LF and a
  lone CR a line break (a bare CR would move the cursor to the start of the line).
- `clean_ansi(text)`: terminal output. SGR sequences (`ESC [ … m`: colours, bold) are kept, every other
  escape sequence (cursor moves, screen clears, OSC titles and clipboard, DCS, device queries) is
  dropped whole, and what is left goes through `clean`.
- `clean_data(value)`: `clean` applied to every string (keys too) in a JSON-like value, with a depth
  limit (anything deeper is replaced by a placeholder string).

No Textual, no I/O, in the lowest layer (protocol/) so that every layer can call it.
"""

from __future__ import annotations

import re
from typing import Any

# Unicode format characters (category Cf, as of Unicode 15, and the unassigned U+2065): bidi controls
# (U+202A-202E, U+2066-2069), zero-width characters (U+200B-200F, U+2060-2064, U+FEFF) and the rest. Drawn as
# they are they are invisible, and they make a terminal show other text than what is there (a command in a
# permission dialog read backwards): `clean` shows each as `⟨U+202E⟩`.
FORMAT_RANGES = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2065, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)
_FORMAT_CLASS = "".join(f"{chr(a)}-{chr(b)}" if a != b else chr(a) for a, b in FORMAT_RANGES)
# How `clean` shows a format character, and how that is found again (approvals count them).
MARKER = "⟨U+{:04X}⟩"
_MARKER = re.compile(r"⟨U\+[0-9A-F]{4,6}⟩")

# Everything `clean` must change; the fast path is one regex search that finds nothing.
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_FORMAT_CLASS}]")
# A string this long is checked by `_safe`: the regex scans 6-9 ms a MB, and a permission request for a
# 20,000-line edit (two 0.9 MB texts) was checked three times on the loop (its update, its params, the
# merged tool call): 49 ms under load, in front of the dialog.
BIG_TEXT = 1 << 15
_ASCII_UNSAFE = tuple(chr(code) for code in (*range(0x09), *range(0x0B, 0x20), 0x7F))
_SAFE_SEEN = 8  # big strings remembered as safe, by identity (the same text checked again is free) ...
_SAFE_SEEN_CHARS = 1 << 23  # ... 8 Mi characters of them at most: remembering keeps them alive
_safe_seen: list[str] = []


def _safe(text: str) -> bool:
    """`_UNSAFE.search(text) is None`; for a big text, a search per character for ASCII (0.5 ms a MB: a
    memchr each) and the last few found safe remembered by identity."""
    if len(text) < BIG_TEXT:
        return _UNSAFE.search(text) is None
    for known in _safe_seen:
        if known is text:
            return True
    if text.isascii():
        safe = not any(char in text for char in _ASCII_UNSAFE)
    else:
        safe = _UNSAFE.search(text) is None
    if safe and len(text) <= _SAFE_SEEN_CHARS:
        _safe_seen.append(text)
        del _safe_seen[:-_SAFE_SEEN]
        while sum(map(len, _safe_seen)) > _SAFE_SEEN_CHARS:
            del _safe_seen[0]
    return safe


def _table() -> dict[int, str]:
    table = {code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)}
    table[0x0D] = "\n"
    table[0x7F] = "\u2421"  # ␡
    for code in range(0x80, 0xA0):
        table[code] = "\ufffd"
    for code in range(0xD800, 0xE000):
        table[code] = "\ufffd"
    for first, last in FORMAT_RANGES:
        for code in range(first, last + 1):
            table[code] = MARKER.format(code)
    return table


_TABLE = _table()

# Where the protocol says a text is terminal output: keep SGR, drop every other escape sequence.
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_ESCAPES = re.compile(
    r"""
      \x1b\[[0-?]*[ -/]*[@-~]                         # CSI … final byte (SGR handled before)
    | \x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?        # OSC, DCS, SOS, PM, APC … BEL or ST (or cut off)
    | \x1b[ -/]*[0-~]                                 # two-character and nF escapes (ESC 7, ESC ( B, ESC c)
    | \x1b\[[0-?]*[ -/]*$                             # a CSI cut off at the end of the text
    | \x1b$                                           # a lone ESC at the end
    | \x9b[0-?]*[ -/]*[@-~]                           # 8-bit CSI
    | [\x90\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?   # 8-bit DCS, OSC, PM, APC
    """,
    re.VERBOSE,
)
# What, in a JSON line's bytes, may decode to a character `clean` changes. Raw: DEL, and C1 controls and
# surrogates as UTF-8 (a raw C0 control in a string is no JSON: the router's strict decoder refuses the
# line). Escaped: `\b`, `\f`, `\r`, `\u0000`-`\u001f`, `\u007f`-`\u009f`, `\uD800`-`\uDFFF` (each range
# taken wider). tests/test_sanitize_lines.py checks every character `clean` changes, raw and escaped.
# Format characters: their UTF-8 forms, raw; escaped, `\u00ad`, `\u06..`-`\u08..`, `\u18..`, `\u20..`, `\ufe..`,
# `\uff..` (astral ones are escaped as surrogates, found already).
_UNSAFE_BYTES = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xed[\xa0-\xbf]|" + b"|".join(
    re.escape(chr(code).encode()) for first, last in FORMAT_RANGES for code in range(first, last + 1)))
_UNSAFE_ESCAPE = re.compile(rb"\\(?:[bfr]|u(?:00[0189aA]|007|[dD][89a-fA-F]|0[6-8]|18|20|[fF][eEfF]))")
# Placeholder for what lies beyond DATA_DEPTH_LIMIT levels of nesting.
DATA_DEPTH_LIMIT = 64
TOO_DEEP = "…(nested too deep)"


def clean(text: str) -> str:
    """`text` with every control character shown visibly (see the module docstring); safe to print."""
    if not isinstance(text, str):
        text = str(text)
    if _safe(text):
        return text
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(_TABLE)


def invisible_count(text: str) -> int:
    """How many format characters `clean` made visible in `text` (its `⟨U+…⟩` markers)."""
    return len(_MARKER.findall(text)) if "⟨U+" in text else 0


_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE")
_WORD = re.compile(r"[^\W\d_]+")


def mixed_script_words(text: str) -> list[str]:
    """The words of `text` whose letters come from more than one of the scripts that look alike (Latin and
    Cyrillic, Greek, Armenian, Cherokee): `rm` with a Cyrillic `м` is another command than it looks."""
    if text.isascii():
        return []
    import unicodedata

    found: list[str] = []
    for word in _WORD.findall(text):
        if word.isascii():
            continue
        scripts = {name.split(" ", 1)[0] for name in (unicodedata.name(char, "") for char in word)}
        if len(scripts & set(_SCRIPTS)) > 1:
            found.append(word)
    return found


def code_points(text: str) -> str:
    """`text` with every character outside printable ASCII written as its code point (`\\u0441`): what an
    approval shows as the raw command, homoglyphs and invisible characters told apart."""
    return "".join(char if " " <= char <= "~" or char == "\n" else
                   (f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}") for char in text)


def clean_ansi(text: str) -> str:
    """Terminal output: SGR colour kept, every other escape sequence dropped, other controls shown."""
    if not isinstance(text, str):
        text = str(text)
    if _UNSAFE.search(_SGR.sub("", text)) is None:
        return text  # nothing unsafe, or colour codes its only escapes (a test or build log): kept as it is
    text = text.replace("\r\n", "\n")
    parts: list[str] = []
    last = 0
    for sgr in _SGR.finditer(text):
        parts.append(clean(_ESCAPES.sub("", text[last : sgr.start()])))
        parts.append(sgr.group())
        last = sgr.end()
    parts.append(clean(_ESCAPES.sub("", text[last:])))
    return "".join(parts)


def plain(text: str) -> str:
    """Terminal output for a file (an export): no escape sequence at all, not even colour."""
    return clean(_ESCAPES.sub("", _SGR.sub("", text)))


def incomplete_escape(text: str) -> int:
    """Where an escape sequence cut off at the end of `text` starts (len(text) if none).

    Streamed terminal output may split a colour code between two chunks; the caller keeps this
    tail and puts it before the next chunk, so the code is neither dropped nor shown as `␛[3`.
    A tail longer than 256 characters is not held back (an unterminated OSC would else hold all). A
    final carriage return is held back too: with the line feed that may follow, it is one line end.
    """
    if text.endswith("\r"):
        return len(text) - 1
    start = text.rfind("\x1b", max(0, len(text) - 256))
    if start < 0:
        return len(text)
    tail = text[start:]
    if tail == "\x1b" or re.fullmatch(r"\x1b\[[0-?]*[ -/]*", tail) or re.fullmatch(r"\x1b[\]PX^_][^\x07\x1b]*\x1b?", tail):
        return start
    return len(text)


def _is_clean(value: Any, depth: int = 0) -> bool:
    """Whether `clean_data` would return `value` itself: no string to clean, nothing nested too deep.

    The usual case, so it is checked first by a walk that builds nothing (half the cost of the walk
    that copies what changes, for a tool call update).
    """
    kind = type(value)
    if kind is dict:
        if depth >= DATA_DEPTH_LIMIT:
            return False
        search = _UNSAFE.search
        for key, item in value.items():
            if type(key) is str and search(key) is not None:
                return False
            kind = type(item)
            if kind is str:
                if (search(item) is not None) if len(item) < BIG_TEXT else not _safe(item):
                    return False
            elif kind is dict or kind is list or kind is tuple:
                if not _is_clean(item, depth + 1):
                    return False
            elif isinstance(item, str) and search(item) is not None:
                return False
        return True
    if kind is list or kind is tuple:
        if depth >= DATA_DEPTH_LIMIT:
            return False
        return all(_is_clean(item, depth + 1) for item in value)
    if isinstance(value, str):
        return _safe(value)
    return True


def clean_data(value: Any, depth: int = 0) -> Any:
    """`clean` applied to every string of a JSON-like value (dict keys too); other values as they are.

    Returns `value` itself when nothing in it needs cleaning (the usual case: no copy is made).
    """
    return value if _is_clean(value, depth) else _clean_walk(value, depth)


def _clean_walk(value: Any, depth: int = 0) -> Any:
    kind = type(value)
    if kind is str:
        return value if _safe(value) else clean(value)
    if kind is dict:
        if depth >= DATA_DEPTH_LIMIT:
            return TOO_DEEP
        changed: dict[Any, Any] | None = None
        for index, (key, item) in enumerate(value.items()):
            new_key = clean(key) if type(key) is str and _UNSAFE.search(key) is not None else key
            new_item = _clean_walk(item, depth + 1) if type(item) is not str or not _safe(item) else item
            if changed is None and (new_key is not key or new_item is not item):
                changed = dict(list(value.items())[:index])
            if changed is not None:
                changed[new_key] = new_item
        return value if changed is None else changed
    if kind is list or kind is tuple:
        if depth >= DATA_DEPTH_LIMIT:
            return TOO_DEEP
        items = [_clean_walk(item, depth + 1) for item in value]
        return value if all(a is b for a, b in zip(items, value)) else items
    if isinstance(value, str):  # a str subclass
        return clean(value)
    return value


def line_is_clean(line: bytes) -> bool:
    """Whether no string decoded from this JSON line (by a strict decoder) can hold a character `clean`
    changes, nor be nested DATA_DEPTH_LIMIT deep: then `clean_data` of anything in it is that thing itself.
    About 1 µs for a tool call's line (memchr scans; the patterns only where one may match), against
    5 µs for walking its update."""
    if line.count(b"[") + line.count(b"{") >= DATA_DEPTH_LIMIT:
        return False
    if not line.isascii() and _UNSAFE_BYTES.search(line) is not None:
        return False
    if b"\x7f" in line and _UNSAFE_BYTES.search(line) is not None:
        return False
    return b"\\" not in line or _UNSAFE_ESCAPE.search(line) is None


# The `update` of the `session/update` the router is handing on, with the line it came in: if
# `clean_update` is asked for that very update while it is handed on, it checks the line
# (`line_is_clean`) instead of walking the update. An update applied later (held, or plain text joined
# with the next chunks) is walked as any other.
_vouched: tuple[Any, bytes] | None = None


def vouch(update: Any, line: bytes) -> None:
    """The router hands on `update`, decoded from `line`, until `vouch(None, b"")` (about 0.2 µs a pair)."""
    global _vouched
    _vouched = None if update is None else (update, line)


def clean_update(update: Any) -> Any:
    """A raw `session/update` `update`, every string cleaned but terminal output in `_meta`.

    Terminal output (`_meta.terminal_output.data`, pieces of a stream cut anywhere, inside an escape
    sequence too) is left for the reducer (`state/reducer.terminal_output`), which joins a sequence
    cut between two pieces before cleaning it with `clean_ansi` (colours kept), once; cleaned here piece
    by piece, such a sequence showed half as text and the rest as `␇`. The reducer keeps no copy of it.
    """
    if _vouched is not None and update is _vouched[0] and line_is_clean(_vouched[1]):
        return update  # its line holds nothing to clean: the walk would return it as it is
    meta = update.get("_meta") if isinstance(update, dict) else None
    output = meta.get("terminal_output") if isinstance(meta, dict) else None
    data = output.get("data") if isinstance(output, dict) else None
    if not isinstance(data, str):
        return clean_data(update)
    cleaned = clean_data({**update, "_meta": {**meta, "terminal_output": {**output, "data": ""}}})
    cleaned["_meta"]["terminal_output"]["data"] = data
    return cleaned
