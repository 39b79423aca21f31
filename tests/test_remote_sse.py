"""The Streamable HTTP link's SSE parser (rat_tui/protocol/remote_sse.py) against httpx-sse's decoder, the
library it replaced on the hot path: the same messages and last event id for every stream below, however the
network cuts it into reads."""

from __future__ import annotations

import random
import re

import pytest
from httpx_sse._decoders import SSEDecoder

from rat_tui.protocol.remote_sse import BOM, SseParser

STREAMS = [
    b'id: 1\ndata: {"a": 1}\n\nid: 2\ndata: {"b": 2}\n\n',
    b'data: one\r\ndata: two\r\n\r\nid: 7\r\ndata: three\r\n\r\n',  # CRLF, a message on two data lines
    b'data: cr\rid: 9\rdata: only\r\r',  # CR alone ends lines too
    b': a comment\nretry: 500\nevent: ping\ndata: not a message\n\ndata:no space\n\n',
    b'event: message\ndata: typed\n\nid\ndata: id cleared\n\nid: a\0b\ndata: a NUL keeps the last id\n\n',
    b'data\n\ndata:\n\n\n\ndata:  two spaces\nunknown: field\n\n',
    b'data: unfinished at the end',
    'data: {"text": "naïve ✓"}\n\n'.encode(),
]


def reference(stream: bytes) -> tuple[list[bytes], str | None]:
    """What httpx-sse makes of the whole stream: the data of its `message` events, and the last event id."""
    decoder = SSEDecoder()
    messages = []
    for line in re.split(r"\r\n|\r|\n", stream.decode()):
        event = decoder.decode(line)
        if event is not None and event.data and event.event in ("message", ""):
            messages.append(event.data.encode())
    return messages, decoder._last_event_id or None


def parsed(stream: bytes, cuts: list[int]) -> tuple[list[bytes], str | None]:
    parser = SseParser()
    messages: list[bytes] = []
    start = 0
    for end in [*cuts, len(stream)]:
        messages += parser.feed(stream[start:end])
        start = end
    return messages, parser.last_id or None  # an empty `id:` clears it


@pytest.mark.parametrize("stream", STREAMS)
def test_same_as_httpx_sse_however_the_stream_is_cut(stream):
    expected = reference(stream)
    assert parsed(stream, []) == expected
    for cut in range(len(stream) + 1):  # every place one read can end
        assert parsed(stream, [cut]) == expected, cut
    rng = random.Random(stream)
    for _ in range(50):
        cuts = sorted(rng.sample(range(len(stream) + 1), min(4, len(stream))))
        assert parsed(stream, cuts) == expected, cuts


def test_a_read_of_many_events_comes_out_as_one_batch_in_order():
    stream = b"".join(b"id: %d\ndata: {\"n\": %d}\n\n" % (n, n) for n in range(500))
    parser = SseParser()
    assert parser.feed(stream) == [b'{"n": %d}' % n for n in range(500)]
    assert parser.last_id == "499"


def test_a_leading_bom_is_dropped_even_split():
    for cut in range(5):
        stream = BOM + b"data: x\n\n"
        assert parsed(stream, [cut]) == ([b"x"], None)
