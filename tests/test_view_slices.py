"""A big delivery of the store (a `session/load` replay's, a flood of tool calls) reaches the widgets a slice at
a time (SessionView._drain): handled at once, each of a load50000 replay's deliveries took 25-40 ms, a stall
for any key typed meanwhile. Slices end after CHANGES_SLICE changes once SLICE_SECONDS are spent (here: at
once) or a key is on its way, and the next comes at the next turn of the loop, in order."""

from __future__ import annotations

from pathlib import Path

from rat_tui.app import RatApp
from rat_tui.ui.tabs import view as view_module
from rat_tui.ui.tabs.view import SessionView

from .helpers.app import scripted, until, view


async def test_a_big_delivery_reaches_the_transcript_a_slice_at_a_time_in_order(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(view_module, "SLICE_SECONDS", 0.0)  # every slice as short as it may be
    script = {"initialize_result": {"agentCapabilities": {"loadSession": True}},
              "on_request": {"session/load": [[{"replay": 3000}]]}}
    sizes: list[int] = []  # the changes each slice handled
    apply = SessionView._apply_changes

    def counted(self: SessionView, batch) -> None:
        changes = list(batch)
        sizes.append(len(changes))
        apply(self, iter(changes))

    monkeypatch.setattr(SessionView, "_apply_changes", counted)
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        session = await app.open_session(app.launched, tmp_path, attach_session_id="old")
        await until(pilot, lambda: len(session.state.entries) > 100, "the replay under way")
        await pilot.press(*"typed")
        await until(pilot, lambda: session.state.status == "ready", "the replay over", timeout=60)
        loaded = app.tabs.active_view
        await until(pilot, lambda: not loaded._backlog and not session.store._pending, "every change handled")
        assert loaded.composer.text == "typed"
        assert max(sizes) <= view_module.CHANGES_SLICE and len(sizes) > 3000 // view_module.CHANGES_SLICE
        shown = list(loaded.transcript._by_key)
        assert shown == [entry.key for entry in session.state.entries][-len(shown):] and len(shown) >= 3000
        text = loaded.transcript.plain_text
        assert text.index("question 0") < text.index("answer 700") < text.index("question 1499")
