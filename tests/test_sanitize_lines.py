"""sanitize.line_is_clean and the router's vouching: a line that passes holds nothing `clean` changes, so its
update is not walked again (protocol/sanitize.py, protocol/router.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rat_tui.protocol import sanitize
from rat_tui.protocol.lines import decode_line
from rat_tui.protocol.sanitize import DATA_DEPTH_LIMIT, clean, clean_data, clean_update, line_is_clean, vouch

from .helpers.harness import finish, start_session

# Every character `clean` changes (sanitize._UNSAFE), and a few it keeps.
UNSAFE = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), *range(0xD800, 0xE000))]
SAFE = ["plain", "é ü ß", "日本語", "한국어 텍스트", "\U0001F600", "tab\there", "new\nline", 'a "quote"', "back\\slash",
        "a/b", "\u00a0\u00a9\u00ae\u00b0", "\u2028", "\ufffd"]


def lines_for(text: str) -> list[bytes]:
    """`text` as a string value and as a key, escaped (ensure_ascii) and raw, as an agent may write it."""
    found = []
    for message in ({"update": {"title": text}}, {"update": {text: 1}}):
        for ascii_only in (True, False):
            found.append(json.dumps(message, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass"))
    return found


def test_no_line_holding_a_character_clean_changes_passes() -> None:
    for char in UNSAFE:
        assert clean(char) != char
        for line in lines_for(char):
            assert not line_is_clean(line), (char, line)
    # The short escapes, and an escaped ESC in either case.
    for line in (rb'{"a":"x\by"}', rb'{"a":"x\fy"}', rb'{"a":"x\ry"}', rb'{"a":"\u001b[2J"}', rb'{"a":"\u001B"}',
                 rb'{"a":"\u009B"}', rb'{"a":"\uDFFF"}'):
        assert not line_is_clean(line), line


def test_the_usual_lines_pass() -> None:
    """Else the walk is paid for nothing: raw UTF-8, newlines, tabs, quotes, backslashes (and what they
    decode to, `clean` keeps)."""
    for text in SAFE:
        line = json.dumps({"t": text}, ensure_ascii=False).encode()
        assert line_is_clean(line), line
        value = decode_line(line)
        assert clean_data(value) is value


def test_a_line_nested_as_deep_as_the_walk_cuts_does_not_pass() -> None:
    deep: object = "x"
    for _ in range(DATA_DEPTH_LIMIT):
        deep = [deep]
    line = json.dumps({"update": {"content": deep}}).encode()
    assert not line_is_clean(line)
    assert sanitize.TOO_DEEP in json.dumps(clean_update(json.loads(line)["update"]), ensure_ascii=False)


def test_only_the_update_handed_on_is_vouched_for_and_only_while_it_is() -> None:
    update = {"title": "\x1b[2Jboom"}
    assert clean_update(update)["title"] == "␛[2Jboom"
    vouch(update, b'{"title":"\\u001b[2Jboom"}')  # its line is checked, not trusted blindly
    assert clean_update(update)["title"] == "␛[2Jboom"
    plain = {"title": "fine"}
    other = {"title": "\x07bell"}
    vouch(plain, b'{"title":"fine"}')
    assert clean_update(plain) is plain
    assert clean_update(other)["title"] == "␇bell"  # another update is walked
    vouch(None, b"")
    assert sanitize._vouched is None
    assert clean_update({"title": "\x07"})["title"] == "␇"


@pytest.mark.slow
async def test_an_agent_s_clean_tool_calls_are_not_walked_and_an_escape_is_still_cleaned(
        tmp_path: Path, monkeypatch) -> None:
    """Over the real pipe from a scripted agent: its clean tool calls are not walked, its hostile one is."""
    walked: list[object] = []
    is_clean = sanitize._is_clean

    def counted(value, depth=0):
        if depth == 0:
            walked.append(value)
        return is_clean(value, depth)

    monkeypatch.setattr(sanitize, "_is_clean", counted)
    calls = [{"update": {"sessionUpdate": "tool_call", "toolCallId": f"c{i}", "title": f"Read file_{i}.py", "kind": "read",
                         "status": "in_progress", "locations": [{"path": f"/tmp/file_{i}.py"}]}} for i in range(3)]
    hostile = {"update": {"sessionUpdate": "tool_call", "toolCallId": "evil", "title": "\x1b]52;c;aGk=\x07steal",
                          "kind": "read", "status": "completed"}}
    session, task = await start_session({"turns": [[*calls, hostile]]}, tmp_path)
    try:
        walked.clear()
        await session.start_prompt("read them")
        assert [session.state.tool_calls[f"c{i}"].title for i in range(3)] == [f"Read file_{i}.py" for i in range(3)]
        assert session.state.tool_calls["evil"].title == "␛]52;c;aGk=␇steal"
        assert [value.get("toolCallId") for value in walked if isinstance(value, dict)] == ["evil"]
    finally:
        await finish(session, task)


def test_a_big_text_is_checked_as_a_small_one_and_once() -> None:
    """A text of BIG_TEXT characters or more takes `sanitize._safe`'s path (a search per character when it
    is ASCII, the regex else; the last few found safe remembered by identity). Every character `clean`
    changes is found in it, at its start, middle or end; a safe text comes back as it is, and checked again
    it is found among those remembered; an unsafe one is never remembered."""
    ascii_text = "x = 1  # a line of code\n" * (sanitize.BIG_TEXT // 20)
    wide_text = "é ü 日本語 \U0001F600\n" * (sanitize.BIG_TEXT // 10 + 1)
    checked = [c for c in UNSAFE if not 0xD800 <= ord(c) < 0xE000] + ["\ud800", "\udbff", "\udc00", "\udfff"]
    for text in (ascii_text, wide_text):
        assert len(text) >= sanitize.BIG_TEXT
        assert clean(text) is text
        assert any(known is text for known in sanitize._safe_seen)
        assert clean_data({"old": text, "new": [text]}) == {"old": text, "new": [text]}
        for char in checked:
            for at in (0, len(text) // 2, len(text)):
                dirty = text[:at] + char + text[at:]
                assert clean(dirty) != dirty, (hex(ord(char)), at)
                assert clean_data({"t": dirty})["t"] == clean(dirty)
                assert not any(known is dirty for known in sanitize._safe_seen)
    assert len(sanitize._safe_seen) <= sanitize._SAFE_SEEN
    # What is remembered is kept alive: 8 Mi characters of it at most, a bigger text never.
    huge = "y" * (sanitize._SAFE_SEEN_CHARS + 1)
    assert clean(huge) is huge and not any(known is huge for known in sanitize._safe_seen)
    for n in range(3):
        big = str(n) * (sanitize._SAFE_SEEN_CHARS // 2)
        assert clean(big) is big and any(known is big for known in sanitize._safe_seen)
        assert sum(map(len, sanitize._safe_seen)) <= sanitize._SAFE_SEEN_CHARS
