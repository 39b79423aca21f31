"""The collector's middle generation stays small while what the app builds survives (RatApp sets the
thresholds): each middle collection walks what survived the young ones since the last, and at (10_000, 20,
20) that was up to 200,000 objects in a `session/load` replay, an 80-110 ms stall each (bench/stress.py
load50000)."""

from __future__ import annotations

import gc
from pathlib import Path

from rat_tui.app import GC_MIDDLE, GC_THRESHOLD, RatApp

from .helpers.app import scripted


def test_the_middle_generation_stays_small_while_survivors_pile_up(tmp_path: Path) -> None:
    before = gc.get_threshold()
    sizes: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 1:
            sizes.append(len(gc.get_objects(generation=1)))

    try:
        RatApp(scripted({}, tmp_path), tmp_path)  # sets the thresholds
        gc.collect()
        gc.callbacks.append(seen)
        try:
            kept = [[n] for n in range(40 * GC_THRESHOLD)]  # survivors, as a replay's entries and lines are
        finally:
            gc.callbacks.remove(seen)
        assert len(kept) == 40 * GC_THRESHOLD
        assert len(sizes) >= 5, sizes
        # What survived GC_MIDDLE + 1 young collections of GC_THRESHOLD objects each, and a margin.
        assert max(sizes) <= (GC_MIDDLE + 2) * GC_THRESHOLD, sizes
    finally:
        gc.set_threshold(*before)
