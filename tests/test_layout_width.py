"""The readable width ([ui] max_width): on a wide terminal the transcript's text is rendered that wide
(wrapped, not clipped), a column in the middle; 0 turns it off."""

from __future__ import annotations

from pathlib import Path

import pytest

from rat_tui.app import RatApp
from rat_tui.config import Config, UiConfig, load_config

from .helpers.app import scripted_named as scripted
from .helpers.app import send, until, view

WORDS = " ".join(f"word{n}" for n in range(120))
ANSWER = f"## Findings\n\n{WORDS}\n\n- a list item that is short\n"
LONG_LINE = " ".join(f"out{n}" for n in range(60))
TURN = [
    {"update": {"sessionUpdate": "tool_call", "toolCallId": "read-1", "title": "Read notes.txt", "kind": "read",
                "status": "completed", "content": [{"type": "content", "content": {"type": "text", "text": LONG_LINE}}]}},
    {"chunk": ANSWER},
]


async def _answered(pilot, app: RatApp) -> list[str]:
    await until(pilot, lambda: view(app).status_bar.state_word == "ready", "ready")
    await send(pilot, "look")
    await until(pilot, lambda: view(app).session.state.stop_reason == "end_turn", "the turn")
    await until(pilot, lambda: "list item" in view(app).transcript.visible_text(), "the answer drawn")
    return view(app).transcript.visible_text().splitlines()


@pytest.mark.slow
async def test_text_is_rendered_at_the_readable_width_on_a_wide_terminal(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": [TURN]}, tmp_path), tmp_path, Config(ui=UiConfig(max_width=100)))
    async with app.run_test(size=(250, 40)) as pilot:
        lines = await _answered(pilot, app)
        assert view(app).transcript.region.width > 240 and view(app).transcript.styles.padding.left > 60
        assert max(len(line.rstrip()) for line in lines) <= 100
        paragraph = [line for line in lines if line.startswith("word")]
        assert len(paragraph) >= 8  # wrapped at 100 columns, not laid out 250 wide
        assert " ".join(paragraph).split() == WORDS.split()  # every word there: wrapped, not clipped
        card = [line for line in lines if "out" in line and "Read" not in line]
        assert len(card) >= 4 and all(line.startswith("   out") for line in card)
        assert " ".join(card).split() == LONG_LINE.split()
        # A narrower terminal: the text takes the whole width again.
        await pilot.resize_terminal(80, 40)
        await until(pilot, lambda: view(app).transcript.size.width <= 80, "the resize")

        def widest_word_line() -> int:
            lines = view(app).transcript.visible_text().splitlines()
            return max((len(line) for line in lines if line.startswith("word")), default=0)

        await until(pilot, lambda: widest_word_line() > 70, "the paragraph laid out 80 wide")
        assert widest_word_line() <= 80


@pytest.mark.slow
async def test_zero_max_width_uses_the_whole_width(tmp_path: Path) -> None:
    app = RatApp(scripted({"turns": [TURN]}, tmp_path), tmp_path, Config(ui=UiConfig(max_width=0)))
    async with app.run_test(size=(250, 40)) as pilot:
        lines = await _answered(pilot, app)
        paragraph = [line for line in lines if line.startswith("word")]
        assert max(len(line) for line in paragraph) > 200


def test_max_width_is_read_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[ui]\nmax_width = 90\n")
    config, problems = load_config(path)
    assert config.ui.max_width == 90 and not problems
    path.write_text("[ui]\nmax_width = -3\n")
    config, problems = load_config(path)
    assert config.ui.max_width == 120 and any("max_width" in problem for problem in problems)
    assert Config().ui.max_width == 120
