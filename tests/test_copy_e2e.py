"""Copying with the mouse in a real terminal: a drag near the transcript's top edge selects what it covers and does
not scroll the transcript up under it (Textual scrolls while a drag is in the top rows: RatApp keeps that to the
very top row)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .helpers.tmux import drag, rat_on_script, send_prompt

pytestmark = pytest.mark.slow

ANSWER = "".join(f"Paragraph {n:02d} of the answer.\n\n" for n in range(1, 41))


def transcript_rows(screen: str) -> list[tuple[int, str]]:
    """(1-based row, text) of the screen's lines that are paragraphs of the answer."""
    return [(row, line.strip()) for row, line in enumerate(screen.splitlines(), 1) if line.strip().startswith("Paragraph")]


def test_a_drag_from_the_second_visible_row_copies_what_it_covers_without_scrolling(tmp_path: Path) -> None:
    tmux = rat_on_script(tmp_path, {"turns": [[{"chunk": ANSWER}]]})
    try:
        tmux.wait_for("ready")
        tmux.run("set-option", "-g", "set-clipboard", "on")  # OSC 52 from rat fills tmux's buffer
        send_prompt(tmux, "go")
        screen = tmux.wait_for("Paragraph 40 of the answer.")
        first_row = next(row for row, line in enumerate(screen.splitlines(), 1) if line.strip())  # the tab bar
        top = first_row + 2  # the transcript's first row, under the tab bar's two
        rows = transcript_rows(screen)
        start_row, start_text = next((row, text) for row, text in rows if row in (top + 1, top + 2))
        drag(tmux, (3, start_row), (30, start_row + 4))
        tmux.keys("C-c")
        copied = ""
        deadline = time.monotonic() + 10
        while start_text[2:] not in copied and time.monotonic() < deadline:
            copied = tmux.run("show-buffer") if tmux.run("list-buffers").strip() else ""
            time.sleep(0.1)
        end_text = dict(rows)[start_row + 4]
        assert copied.startswith(start_text[2:]), copied  # from where the drag began (its third column) ...
        assert copied.rstrip().endswith(end_text[:29 - 2]), copied  # ... to where it ended, nothing above
        assert transcript_rows(tmux.screen())[:3] == rows[:3], "the transcript scrolled under the drag"
    finally:
        tmux.kill()
