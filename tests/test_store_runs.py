"""`SessionStore.apply_streamed`: plain-text chunks of one message in a row are applied joined, with the state
and the deliveries that applying them one by one gives, and in order with everything else."""

from __future__ import annotations

import asyncio
import random

from rat_tui.state import reducer
from rat_tui.state.models import MessageEntry, SessionState, TextAppended
from rat_tui.state.store import SessionStore


def chunk(kind: str, text: str, message_id: str | None = None, **extra) -> dict:
    raw = {"sessionUpdate": kind, "content": {"type": "text", "text": text}, **extra}
    if message_id is not None:
        raw["messageId"] = message_id
    return raw


def _updates(rng: random.Random, count: int) -> list:
    """A stream as agents send it: runs of chunks, ids or none, thoughts, control characters and CRLF cut
    between chunks, `_meta`, user echoes, tool calls, plans; and local actions (a notice) between."""
    out: list = []
    texts = ["", "a", "b c", "\n", "x\r", "\ny", "\x1b[31m", "é", "\ud800", "line\r\n", "  - item\n", "```\n"]
    for _ in range(count):
        roll = rng.random()
        kind = rng.choice(["agent_message_chunk"] * 4 + ["agent_thought_chunk", "user_message_chunk"])
        if roll < 0.75:
            out.append(chunk(kind, rng.choice(texts), rng.choice([None, None, "m1", "m2", "t1"])))
        elif roll < 0.8:
            out.append(chunk(kind, rng.choice(texts), _meta={"qwenDiscreteMessage": True}))
        elif roll < 0.88:
            call = f"c{rng.randint(1, 3)}"
            out.append({"sessionUpdate": "tool_call", "toolCallId": call, "title": f"run {call}", "status": "pending"})
        elif roll < 0.92:
            out.append({"sessionUpdate": "plan", "entries": [{"content": "step", "priority": "high", "status": "pending"}]})
        elif roll < 0.96:
            out.append(("notice", f"notice {len(out)}"))
        else:
            out.append(("pause", None))
    return out


def _shown(state: SessionState) -> list:
    return [(type(e).__name__, e.key, getattr(e, "role", None), getattr(e, "message_id", None),
             getattr(e, "text", None), getattr(e, "title", None)) for e in state.entries]


async def test_chunks_applied_joined_give_the_state_applied_one_by_one() -> None:
    for seed in range(40):
        updates = _updates(random.Random(seed), 300)
        one, joined = SessionStore(), SessionStore()
        texts: dict[str, str] = {}

        def delivered(batch: list, texts: dict = texts) -> None:
            for change in batch:
                if isinstance(change, TextAppended):
                    texts[change.key] = texts.get(change.key, "") + change.text

        joined.subscribe(delivered)
        for update in updates:
            if isinstance(update, tuple) and update[0] == "pause":
                await asyncio.sleep(0)  # a slice of the reader ends: the run is applied
                continue
            for store in (one, joined):
                if isinstance(update, tuple):
                    store.dispatch(reducer.add_notice, update[1], "info")
                elif store is one:
                    store.apply_update(update)
                else:
                    store.apply_streamed(update)
        await asyncio.sleep(0)
        assert _shown(joined.state) == _shown(one.state), seed
        assert (joined.state.last_chunk_kind, getattr(joined.state.open_message, "key", None)) == \
            (one.state.last_chunk_kind, getattr(one.state.open_message, "key", None)), seed
        joined.flush()
        for entry in joined.state.entries:  # what subscribers were told adds up to what the entry holds
            if isinstance(entry, MessageEntry) and entry.key in texts:
                assert entry.text.endswith(texts[entry.key]), seed


async def test_a_slice_of_chunks_is_one_reducer_pass_and_the_next_turn_applies_it() -> None:
    store = SessionStore()
    batches: list[list] = []
    store.subscribe(batches.append)
    for n in range(500):
        store.apply_streamed(chunk("agent_message_chunk", f"{n} ", "m1"))
    assert store.state.entries == []  # held until the loop turns
    await asyncio.sleep(0)
    [entry] = store.state.entries
    assert entry.text == "".join(f"{n} " for n in range(500)) and len(entry.parts) == 1
    store.apply_streamed(chunk("agent_message_chunk", "tail", "m1"))
    store.dispatch(reducer.add_notice, "after the tail", "info")  # anything else applies the run first
    assert entry.text.endswith("tail") and store.state.entries[-1].text == "after the tail"
    store.flush()
    assert store._last_batch >= 500  # a flood is still seen as one (the store delivers less often)


def test_without_a_loop_a_chunk_applies_at_once() -> None:
    store = SessionStore()
    store.apply_streamed(chunk("agent_message_chunk", "now"))
    assert store.state.entries[0].text == "now"
