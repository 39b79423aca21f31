"""A turn's end is delivered to the widgets at once (`SessionStore.deliver_soon`, from AgentSession's turn), not at
the frame's pace: the end of a 2,000-chunk answer, read and routed, waited up to a frame after the delivery before
it. A real session on the scripted agent over real pipes; the store's frame made 30 s long, so only the turn's
end can deliver the answer within the test's wait."""

from __future__ import annotations

from pathlib import Path

from .helpers.harness import finish, start_session, wait_for


async def test_the_end_of_a_turn_is_delivered_at_once(tmp_path: Path) -> None:
    session, task = await start_session({"turns": [[{"chunk": "the whole answer"}]]}, tmp_path)
    try:
        session.store.frame_seconds = 30.0
        session.store.flush()  # (what the handshake left pending: the next delivery is a 30 s frame away)
        delivered: list[str] = []
        session.store.subscribe(lambda batch: delivered.extend(repr(change) for change in batch))  # (the entry added)
        turn = session.start_prompt("answer please")
        assert turn is not None
        await wait_for(lambda: turn.done(), 10, "the turn's end")
        await wait_for(lambda: "the whole answer" in "".join(delivered), 5, "the answer delivered")
        assert session.state.status == "ready"
    finally:
        await finish(session, task)


async def test_a_turn_over_ends_the_agents_burst(tmp_path: Path) -> None:
    """Once a turn is over, with nothing read since, the agent's burst is over (ReaderActivity.burst_last, the
    pacer's `activity`): its end is drawn at once, not after BURST_QUIET with no line coming. A line read
    in the next turn is a burst again."""
    from rat_tui.app import RatApp

    from .helpers.app import scripted, until, view

    release = tmp_path / "release"
    script = {"turns": [[{"chunk": "the first answer"}], [{"chunk": "more"}, {"wait_file": str(release)}]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: view(app).session.state.status == "ready", "ready")
        transcript = view(app).transcript
        view(app).composer.insert("first")
        await pilot.press("enter")
        await until(pilot, lambda: view(app).session.state.status == "ready" and view(app).session.state.turns == 1
                    and "the first answer" in transcript.visible_text(), "the first turn drawn")
        assert transcript.pacer.activity is not None and transcript.pacer.activity() == 0.0 and not transcript.pacer.bursting()
        view(app).composer.insert("second")
        await pilot.press("enter")
        await until(pilot, lambda: "more" in transcript.visible_text(), "the second turn's line")
        assert transcript.pacer.activity() > 0.0  # (the turn goes on: its lines count)
        release.write_text("")
        await until(pilot, lambda: view(app).session.state.status == "ready", "the second turn's end")
