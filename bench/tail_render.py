"""Bench: the worst per-frame cost of the growing tail while a 2,000-line list or code block streams.

Run: .venv/bin/python bench/tail_render.py [--tree PATH]   (PATH: another checkout's root, to compare)
A headless app with the real Transcript (120x40, following the end) is fed the block LINES_PER_BATCH
lines at a time; each batch is one frame: the transcript's flush (cutting blocks, rendering what
the viewport shows, the open tail included) is timed. Printed: the worst and the median frame, in ms
and as a ratio to a floor measured in the same run (Rich rendering one 24-line code block); the
95th percentile too, as a single worst frame on a shared machine is often a scheduling hiccup. The garbage
collector is set as `RatApp` sets it.
"""

from __future__ import annotations

import asyncio
import io
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if "--tree" in sys.argv:
    ROOT = Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
sys.path.insert(0, str(ROOT))

LINES = 2000
LINES_PER_BATCH = 10


def documents() -> dict[str, list[str]]:
    items = [f"{i}. Rename `module_{i}.py` to `mod_{i}.py` and update **its imports** ({i % 7} files)\n"
             for i in range(1, LINES + 1)]
    code = ["```python\n"]
    for i in range(LINES // 5):
        code += [f"def handler_{i}(request):\n", f'    """Handle request {i}.\n', "\n", '    Returns the response."""\n',
                 f"    return respond(request, code={i})  # {i}\n"]
    return {"2,000-line list": items, "2,000-line code block": code + ["```\n"]}


def floor_ms() -> float:
    from rich.console import Console
    from rich.syntax import Syntax

    code = "".join(f"def f{i}(x):\n    return x * {i}  # comment\n" for i in range(12))
    console = Console(file=io.StringIO(), width=118, color_system="truecolor")
    best = float("inf")
    for _ in range(20):
        start = time.perf_counter()
        console.render_lines(Syntax(code, "python", word_wrap=True, padding=1), console.options)
        best = min(best, time.perf_counter() - start)
    return best * 1000


async def frames(lines: list[str]) -> list[float]:
    from textual.app import App, ComposeResult

    from rat_tui.ui.widgets.transcript import Transcript

    class One(App):
        def compose(self) -> ComposeResult:
            yield Transcript()

    app = One()
    times: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        # The collector as rat runs it (RatApp: young threshold raised, startup frozen out): with
        # Python's defaults most of the worst frames here were full collections, not the transcript.
        import gc

        from rat_tui.app import GC_THRESHOLD

        gc.set_threshold(GC_THRESHOLD, 20, 20)
        gc.collect()
        gc.freeze()
        transcript = app.query_one(Transcript)
        flush = transcript._flush

        def timed() -> None:
            start = time.perf_counter()
            flush()
            times.append(time.perf_counter() - start)

        transcript._flush = timed
        transcript.add_entry("a", "agent", "Here it is:\n\n")
        await pilot.pause()
        times.clear()
        for start in range(0, len(lines), LINES_PER_BATCH):
            transcript.append_text("a", "".join(lines[start : start + LINES_PER_BATCH]))
            await pilot.pause()
    return [t * 1000 for t in times if t > 0]


def main() -> None:
    base = floor_ms()
    print(f"tree: {ROOT}")
    print(f"floor (Rich, one 24-line code block): {base:.2f} ms")
    print(f"{'document':<24} {'frames':>6} {'worst ms':>9} {'worst/floor':>11} {'p95 ms':>7} {'p95/floor':>9} "
          f"{'median ms':>9} {'median/floor':>12}")
    for name, lines in documents().items():
        got = asyncio.run(frames(lines))
        worst, median = max(got), statistics.median(got)
        p95 = sorted(got)[int(0.95 * (len(got) - 1))]
        print(f"{name:<24} {len(got):>6} {worst:>9.1f} {worst / base:>11.1f} {p95:>7.1f} {p95 / base:>9.1f} "
              f"{median:>9.1f} {median / base:>12.1f}")


if __name__ == "__main__":
    main()
