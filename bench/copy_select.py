"""Bench: copying a selection from the transcript, its soft wraps joined (ui/widgets/soft_wraps.py), against the
same copy with every screen line break kept (the floor, measured in the same run).

Run: .venv/bin/python bench/copy_select.py [ANSWERS ...]   (default 100 and 600 answers of about 5 wrapped lines, a code
block every tenth). Each size is the selection of the whole transcript, copied twice per mode, fresh strips each time;
printed: lines selected, milliseconds per mode (best of the two) and their ratio. Selections over
soft_wraps.JOIN_LINES lines are copied as shown: the ratio there is about 1.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.app import App, ComposeResult  # noqa: E402
from textual.geometry import Offset  # noqa: E402
from textual.selection import Selection  # noqa: E402

from rat_tui.ui.widgets import transcript as transcript_module  # noqa: E402
from rat_tui.ui.widgets.transcript import Transcript  # noqa: E402

PARAGRAPH = "word " * 60
CODE = "```py\n" + "x = 1 + 2 + 3\n" * 5 + "```\n\n"


class CopyApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()


def answer(answers: int) -> str:
    return "".join(f"{n} {PARAGRAPH}\n\n" + (CODE if n % 10 == 0 else "") for n in range(answers))


def copy_ms(transcript: Transcript, joined: bool) -> float:
    """The best of two copies of everything, each from freshly rendered strips."""
    keep = transcript_module.JOIN_LINES
    transcript_module.JOIN_LINES = keep if joined else -1  # -1: every selection copied as shown
    best = float("inf")
    try:
        for _ in range(2):
            transcript._drop_strips()
            selection = Selection(Offset(0, 0), Offset(0, transcript.rows.total - 1))
            start = time.perf_counter()
            transcript.get_selection(selection)
            best = min(best, time.perf_counter() - start)
    finally:
        transcript_module.JOIN_LINES = keep
    return best * 1000


async def run(answers: int) -> None:
    app = CopyApp()
    async with app.run_test(size=(100, 40)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("a", "agent", answer(answers))
        while transcript.pending:
            await pilot.pause(0.01)
        transcript.visible_text()  # everything cut into blocks
        floor, joined = copy_ms(transcript, False), copy_ms(transcript, True)
        print(f"{answers:>5} answers, {transcript.rows.total:>6} lines: as shown {floor:8.1f} ms, "
              f"wraps joined {joined:8.1f} ms, ratio {joined / floor:4.2f}")


def main() -> None:
    for answers in [int(arg) for arg in sys.argv[1:]] or [100, 600]:
        asyncio.run(run(answers))


if __name__ == "__main__":
    main()
