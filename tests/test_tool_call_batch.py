"""A tool call and its updates delivered in one batch draw one card (SessionView._on_changes): the card is
drawn from the state after the batch, so the updates' own redraws were the same card built twice (toolcalls,
20,000 calls each followed by its completion: 40,000 cards built for 20,000)."""

from __future__ import annotations

from pathlib import Path

from rat_tui.app import RatApp
from rat_tui.ui.widgets.transcript import Transcript

from .helpers.app import scripted, until, view


async def test_a_tool_call_and_its_update_in_one_batch_draw_one_card(tmp_path: Path, monkeypatch) -> None:
    app = RatApp(scripted({}, tmp_path), tmp_path)
    drawn: list[str] = []
    set_renderable = Transcript.set_renderable

    def counting(self: Transcript, key: str, renderable) -> None:
        drawn.append(key)
        set_renderable(self, key, renderable)

    monkeypatch.setattr(Transcript, "set_renderable", counting)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        store = view(app).session.store
        store.flush()
        drawn.clear()
        for n in range(3):  # as an agent sends them, in one read: the store delivers them in one batch
            store.apply_update({"sessionUpdate": "tool_call", "toolCallId": f"call-{n}", "title": f"Read f{n}.py",
                                "kind": "read", "status": "in_progress"})
            store.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": f"call-{n}", "status": "completed",
                                "content": [{"type": "content", "content": {"type": "text", "text": f"line {n}"}}]})
        store.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": "call-0", "title": "Read f0.py again"})
        store.flush()
        cards = [view(app).session.state.tool_calls[f"call-{n}"].key for n in range(3)]
        assert drawn == cards, "each card drawn once, in order"

        # A later batch's update to a card drawn before draws it again.
        store.apply_update({"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "title": "Read f1.py, done"})
        store.flush()
        assert drawn == [*cards, cards[1]]
        await until(pilot, lambda: "Read f1.py, done" in view(app).transcript.plain_text, "the later update shown")
        text = view(app).transcript.plain_text
        assert "Read f0.py again" in text and "Read f2.py" in text
