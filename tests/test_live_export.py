"""The live session's exports from the command palette: Markdown of the transcript as it is now, and the journal as
a file `rat replay` plays, as the history screen writes them for a past session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from textual.command import CommandPalette

from rat_tui.app import RatApp
from rat_tui.config import Config, HistoryConfig
from rat_tui.history.records import read_recording

from .helpers.app import palette_offers, until
from .helpers.history import first_view, prompt, scripted_in

pytestmark = pytest.mark.slow


async def run_from_palette(pilot, app: RatApp, words: str) -> None:
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
    await pilot.press(*words)
    await palette_offers(pilot, app, words)
    await pilot.press("enter")
    await until(pilot, lambda: not isinstance(app.screen, CommandPalette), "the palette closed")


async def test_the_live_session_exports_markdown_and_its_journal(tmp_path: Path) -> None:
    export = tmp_path / "exports"
    config = Config(history=HistoryConfig(export_dir=str(export)))
    agent = scripted_in({"turns": [[{"chunk": "Zebras have stripes."}]]}, tmp_path / "zoo", "zebra-agent")
    app = RatApp(agent, tmp_path / "zoo", config=config)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        await prompt(pilot, app, "tell me about zebras", "Zebras have stripes.")

        await run_from_palette(pilot, app, "Export the transcript as Markdown")
        await until(pilot, lambda: len(list(export.glob("*.md"))) == 1, "the Markdown file")
        [markdown] = export.glob("*.md")
        text = markdown.read_text()
        assert "## You\n\ntell me about zebras" in text and "Zebras have stripes." in text

        await run_from_palette(pilot, app, "Export the journal")
        await until(pilot, lambda: len(list(export.glob("*.jsonl"))) == 1, "the journal file")
        [journal_file] = export.glob("*.jsonl")
        recording = read_recording(journal_file)
        assert recording.session["agent"] == "zebra-agent"
        assert any(r.direction == "in" and "Zebras" in json.dumps(r.message) for r in recording.records)
        assert first_view(app).composer.text == ""  # the palette's words went nowhere else


async def test_with_history_off_the_journal_export_says_why_and_markdown_still_works(tmp_path: Path) -> None:
    export = tmp_path / "exports"
    config = Config(history=HistoryConfig(enabled=False, export_dir=str(export)))
    agent = scripted_in({"turns": [[{"chunk": "Zebras have stripes."}]]}, tmp_path / "zoo", "zebra-agent")
    app = RatApp(agent, tmp_path / "zoo", config=config)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await until(pilot, lambda: first_view(app).session.state.status == "ready", "ready")
        await prompt(pilot, app, "tell me about zebras", "Zebras have stripes.")
        await run_from_palette(pilot, app, "Export the journal")
        await until(pilot, lambda: any("no journal to export" in str(toast.render())
                                       for toast in app.screen.query("Toast")), "why not, said")
        assert not export.exists() or not list(export.glob("*.jsonl"))
        await run_from_palette(pilot, app, "Export the transcript as Markdown")
        await until(pilot, lambda: len(list(export.glob("*.md"))) == 1, "the Markdown file")
        assert "Zebras have stripes." in next(export.glob("*.md")).read_text()
