"""Bench: 20,000 markdown chunks into a headless Transcript in batches, against plain string concatenation.

Run: .venv/bin/python bench/transcript_only.py [N] [BATCH]   (default N = 20000, BATCH = 200)
The floor is appending the same chunks to a list and joining it; the widget run awaits
`pilot.pause()` after every batch so each batch is laid out and painted, as in the app.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from textual.app import App, ComposeResult  # noqa: E402

import stream_agent  # noqa: E402
from stream_agent import END_MARKER  # noqa: E402

from rat_tui.ui.widgets.transcript import Transcript  # noqa: E402



def chunks(n: int) -> list[str]:
    """The same answer bench/stream.py's agent streams."""
    return list(stream_agent.chunks(n))


class TranscriptApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()


async def widget_run(parts: list[str], batch: int, *, feed: bool = True) -> tuple[float, float, int, int]:
    """Time from the first chunk until the last one is on screen; feed=False times the pauses alone."""
    app = TranscriptApp()
    async with app.run_test(size=(120, 40)) as pilot:
        transcript = app.query_one(Transcript)
        transcript.add_entry("u", "user", "go")
        transcript.add_entry("a", "agent")
        await pilot.pause()
        start, cpu = time.perf_counter(), time.process_time()
        for i in range(0, len(parts), batch):
            if feed:
                for text in parts[i : i + batch]:
                    transcript.append_text("a", text)
            await pilot.pause()
        while feed and END_MARKER not in transcript.visible_text():
            await pilot.pause()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        return elapsed, cpu, transcript.render_count, transcript.virtual_size.height


def floor(parts: list[str]) -> float:
    start = time.perf_counter()
    acc: list[str] = []
    for text in parts:
        acc.append(text)
    "".join(acc)
    return time.perf_counter() - start


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    parts = chunks(n)
    base = floor(parts)
    idle, idle_cpu, _, _ = asyncio.run(widget_run(parts, batch, feed=False))
    elapsed, cpu, renders, lines = asyncio.run(widget_run(parts, batch))
    batches = -(-n // batch)
    net = cpu - idle_cpu
    print(f"chunks {n}  batch {batch}  batches {batches}")
    print(f"floor (list append + join):   {base * 1000:9.1f} ms")
    print(f"pilot.pause() x{batches}, no chunks: {idle * 1000:9.1f} ms wall, {idle_cpu * 1000:7.1f} ms CPU"
          "  (Textual's idle wait)")
    print(f"transcript widget, total:     {elapsed * 1000:9.1f} ms wall, {cpu * 1000:7.1f} ms CPU")
    print(f"transcript widget, net CPU:   {net * 1000:9.1f} ms  ({net / batches * 1000:.2f} ms/batch incl. paint, "
          f"{net / n * 1e6:.1f} µs/chunk, {net / base:.0f}x the floor)")
    print(f"blocks rendered: {renders}  transcript lines: {lines}")


if __name__ == "__main__":
    main()
