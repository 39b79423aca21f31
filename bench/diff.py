"""Bench: a 20,000-line diff shown in a headless DiffView, against `difflib.unified_diff` on the same input.

Run: .venv/bin/python bench/diff.py [LINES] [EVERY ...]   (default 20000 lines, a change every 15 and every 500)
"Show" is building the model, mounting the widget and waiting until every line of its first frame has been
drawn (render_line counted), in a new app and then again (the very first also loads Pygments' lexer table).
The floor is `"".join(difflib.unified_diff(...))` measured in the same run: no drawing at all, but plain
difflib is what a simple viewer would run first. Keystroke latency is key event sent -> the whole view drawn
again, p50 / max over PRESSES presses, next to the same keys on a ScrollView of blank lines: most of it is
Textual's frame pacing (TEXTUAL_FPS, 60), not the diff.
"""

from __future__ import annotations

import asyncio
import difflib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.geometry import Size  # noqa: E402
from textual.scroll_view import ScrollView  # noqa: E402
from textual.strip import Strip  # noqa: E402
from textual.widgets import Static  # noqa: E402

from rat_tui.demo.scenarios import dense_code_texts  # noqa: E402
from rat_tui.state.diffing import FileDiff  # noqa: E402
from rat_tui.themes import THEME_VARIABLE_DEFAULTS  # noqa: E402
from rat_tui.ui.widgets.diff_view import DiffView  # noqa: E402

PRESSES = 50
SIZE = (120, 40)


class CountingDiffView(DiffView):
    """Counts drawn lines, so the bench knows when a frame has really been painted."""

    drawn = 0

    def render_line(self, y: int) -> Strip:
        self.drawn += 1
        return super().render_line(y)


class NullView(ScrollView, can_focus=True):
    """The latency floor: same size and keys as the diff, every line blank (Textual's own cost)."""

    drawn = 0

    def __init__(self, rows: int) -> None:
        super().__init__()
        self._rows = rows

    def on_mount(self) -> None:
        self.virtual_size = Size(1, self._rows)  # no horizontal scrollbar

    def render_line(self, y: int) -> Strip:
        self.drawn += 1
        return Strip.blank(self.size.width)

    def action_page_down(self) -> None:  # unanimated, as DiffView's
        self.scroll_to(y=self.scroll_y + self.scrollable_content_region.height - 1, animate=False)


class BenchApp(App):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield Static("waiting")


async def until_drawn(view: CountingDiffView | NullView, before: int, timeout: float = 10.0) -> None:
    """Yield to the app until the whole view has been drawn since `before` (not Pilot.pause, whose
    idle wait would dominate a millisecond keystroke)."""
    deadline = time.perf_counter() + timeout
    while view.drawn - before < view.scrollable_content_region.height:
        if time.perf_counter() > deadline:
            raise TimeoutError("the view was not redrawn")
        await asyncio.sleep(0)


async def show(app: App, pilot, old: str, new: str) -> tuple[CountingDiffView, float]:
    """Seconds from building the view (and its model) to its first frame fully drawn."""
    start = time.perf_counter()
    view = CountingDiffView("big.py", old, new)
    await app.mount(view)
    await until_drawn(view, 0)
    return view, time.perf_counter() - start


async def key_latencies(app: App, pilot, view: CountingDiffView | NullView) -> dict[str, list[float]]:
    view.focus()
    latencies: dict[str, list[float]] = {}
    for key in ("down", "pagedown"):
        view.scroll_home(animate=False)
        times = latencies[key] = []
        for _ in range(PRESSES):
            await pilot.pause()
            if view.scroll_y >= view.max_scroll_y:  # at the end a key changes nothing to draw
                view.scroll_home(animate=False)
                await pilot.pause()
            before, start = view.drawn, time.perf_counter()
            app._driver.send_message(events.Key(key, None))  # what Pilot.press sends, minus its idle waits
            await until_drawn(view, before)
            times.append(time.perf_counter() - start)
    return latencies


async def widget_run(old: str, new: str) -> tuple[float, float, dict, dict, int]:
    app = BenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        cold_view, cold = await show(app, pilot, old, new)  # includes Pygments' first lexer lookup
        await cold_view.remove()
        view, warm = await show(app, pilot, old, new)
        latencies = await key_latencies(app, pilot, view)
        highlighted = view.highlighted_lines
        await view.remove()
        null = NullView(view.virtual_size.height)
        await app.mount(null)
        await pilot.pause()
        floors = await key_latencies(app, pilot, null)
        return cold, warm, latencies, floors, highlighted


def summary(times: list[float]) -> str:
    return f"p50 {statistics.median(times) * 1000:6.2f} ms  max {max(times) * 1000:6.2f} ms"


def floor(old: str, new: str) -> float:
    start = time.perf_counter()
    "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/big.py", "b/big.py"))
    return time.perf_counter() - start


def main() -> None:
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    densities = [int(arg) for arg in sys.argv[2:]] or [15, 500]
    for every in densities:
        old, new = dense_code_texts(lines, every)
        base = floor(old, new)
        start = time.perf_counter()
        model = FileDiff("big.py", old, new)
        rows = len(model.unified)
        model_time = time.perf_counter() - start
        cold, warm, latencies, floors, highlighted = asyncio.run(widget_run(old, new))
        print(f"{lines} lines, a change every {every}: {len(model.hunks)} hunks, {rows} rows, "
              f"+{model.added} -{model.removed}")
        print(f"  floor difflib.unified_diff joined: {base * 1000:8.1f} ms")
        print(f"  model alone (FileDiff + rows):     {model_time * 1000:8.1f} ms")
        print(f"  show, in a new app:                {cold * 1000:8.1f} ms  = {cold / base:.2f}x the floor")
        print(f"  show again (model+mount+frame):    {warm * 1000:8.1f} ms  = {warm / base:.2f}x the floor")
        for key, times in latencies.items():
            ours, empty = summary(times), summary(floors[key])
            print(f"  key {key:<9} {ours}   (blank ScrollView: {empty})")
        print(f"  lines highlighted and cached at the end: {highlighted}")


if __name__ == "__main__":
    main()
