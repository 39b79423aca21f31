"""Bench: a 20,000-line diff shown in a headless DiffView, against `difflib.unified_diff` on the same input.

Run: .venv/bin/python bench/diff.py [LINES] [EVERY ...]   (default 20000 lines, a change every 15 and every 500)
"Show" is building the model, mounting the widget and waiting until every line of the first frame has
been drawn (render_line counted). The floor is `"".join(difflib.unified_diff(...))`, measured in the
same run; it does no drawing, but plain difflib is what a simple viewer would run first. Keystroke
latency is press -> the whole view drawn again, p50 / max over PRESSES presses.
"""

from __future__ import annotations

import asyncio
import difflib
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.app import App, ComposeResult  # noqa: E402
from textual.strip import Strip  # noqa: E402
from textual.widgets import Static  # noqa: E402

from rat_tui.diffing import FileDiff  # noqa: E402
from rat_tui.themes import THEME_VARIABLE_DEFAULTS  # noqa: E402
from rat_tui.ui.widgets.diff_view import DiffView  # noqa: E402

PRESSES = 50
SIZE = (120, 40)
SHAPES = ["", "def f{i}(x):", "    y = x + {i}", "    if y:", "        return y", "    return None",
          "", "class C{i}:", "    pass", "    # comment", "    x = [1, 2, 3]", "}}"]


def texts(lines: int, every: int, seed: int = 7) -> tuple[str, str]:
    """Python-like text (many repeated lines) and a copy with a change every `every` lines."""
    old = [SHAPES[i % len(SHAPES)].format(i=i) + "\n" for i in range(lines)]
    new: list[str] = []
    rng = random.Random(seed)
    for i, line in enumerate(old):
        if i % every:
            new.append(line)
        elif (roll := rng.random()) < 0.5:
            new.append(f"    changed = {i}\n")
        elif roll >= 0.75:
            new += [line, f"    inserted_{i}()\n"]
    return "".join(old), "".join(new)


class CountingDiffView(DiffView):
    """Counts drawn lines, so the bench knows when a frame has really been painted."""

    drawn = 0

    def render_line(self, y: int) -> Strip:
        self.drawn += 1
        return super().render_line(y)


class BenchApp(App):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield Static("waiting")


async def until_drawn(pilot, view: CountingDiffView, before: int) -> None:
    while view.drawn - before < view.scrollable_content_region.height:
        await pilot.pause(0)


async def widget_run(old: str, new: str) -> tuple[float, dict[str, list[float]], int]:
    app = BenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        start = time.perf_counter()
        view = CountingDiffView("big.py", old, new)
        await app.mount(view)
        view.focus()
        await until_drawn(pilot, view, 0)
        shown = time.perf_counter() - start
        latencies: dict[str, list[float]] = {}
        for key in ("down", "pagedown"):
            view.scroll_home(animate=False)
            await pilot.pause()
            times = latencies[key] = []
            for _ in range(PRESSES):
                before, start = view.drawn, time.perf_counter()
                await pilot.press(key)
                await until_drawn(pilot, view, before)
                times.append(time.perf_counter() - start)
        return shown, latencies, view.highlighted_lines


def floor(old: str, new: str) -> float:
    start = time.perf_counter()
    "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/big.py", "b/big.py"))
    return time.perf_counter() - start


def main() -> None:
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    densities = [int(arg) for arg in sys.argv[2:]] or [15, 500]
    for every in densities:
        old, new = texts(lines, every)
        base = floor(old, new)
        start = time.perf_counter()
        model = FileDiff("big.py", old, new)
        rows = len(model.unified)
        model_time = time.perf_counter() - start
        shown, latencies, highlighted = asyncio.run(widget_run(old, new))
        print(f"{lines} lines, a change every {every}: {len(model.hunks)} hunks, {rows} rows, "
              f"+{model.added} -{model.removed}")
        print(f"  floor difflib.unified_diff joined: {base * 1000:8.1f} ms")
        print(f"  model alone (FileDiff + rows):     {model_time * 1000:8.1f} ms")
        print(f"  show (model + mount + 1st frame):  {shown * 1000:8.1f} ms  = {shown / base:.2f}x the floor")
        for key, times in latencies.items():
            print(f"  key {key:<9} p50 {statistics.median(times) * 1000:6.2f} ms   max {max(times) * 1000:6.2f} ms"
                  f"   ({PRESSES} presses, view redrawn each time)")
        print(f"  lines highlighted and cached at the end: {highlighted}")


if __name__ == "__main__":
    main()
