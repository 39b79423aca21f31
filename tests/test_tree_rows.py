"""The transcript's entries and their start lines (markdown_stream.TreeRows): where an entry is and which
entry covers a line, right after any entry changed height, without walking the entries after it."""

from __future__ import annotations

import random

from rat_tui.ui.widgets.markdown_stream import Rows, TreeRows


class Item:
    """An entry with a height; counts how often its height is read."""

    reads = 0

    def __init__(self, height: int) -> None:
        self._height = height
        self.index = 0

    @property
    def height(self) -> int:
        Item.reads += 1
        return self._height


def test_starts_and_lines_match_the_heights_through_appends_and_changes_anywhere() -> None:
    rng = random.Random(7)
    rows, heights = TreeRows(), []
    assert rows.find(0) is None and rows.start(0) == 0
    for step in range(3000):
        if not heights or rng.random() < 0.4:
            height = rng.choice([0, 0, 1, 2, 5, 40])  # entries may be empty (nothing drawn yet)
            rows.append(Item(height))
            heights.append(height)
        else:
            index = rng.randrange(len(heights))
            new = rng.choice([0, 1, 3, 12])
            rows.items[index]._height = new
            rows.changed(index, new - heights[index])
            heights[index] = new
        assert rows.total == sum(heights)
        if step % 50 == 0 or step > 2950:
            starts = [sum(heights[:k]) for k in range(len(heights))]
            for k in range(len(heights)):
                assert rows.start(k) == starts[k]
            for y in range(sum(heights)):
                k = rows.find(y)
                assert starts[k] <= y < starts[k] + heights[k], (y, k)
            assert rows.find(sum(heights)) is None and rows.find(-1) is None
    assert [item.index for item in rows.items] == list(range(len(heights)))


def test_a_change_early_in_a_long_transcript_costs_no_walk_to_its_end() -> None:
    """A tool call updated at the top of 20,000 entries (a session/load replay does that at every turn):
    the line at the bottom is found, and the last entry's start known, without reading a single height;
    Rows (offsets rebuilt after the change) read every height after it."""
    for kind, most in ((TreeRows, 0), (Rows, None)):
        rows = kind()
        for _ in range(20000):
            rows.append(Item(3))
        rows.find(rows.total - 1)
        Item.reads = 0
        rows.items[5]._height = 4
        rows.changed(5, 1)
        assert rows.find(rows.total - 1) == 19999 and rows.start(19999) == 3 * 19999 + 1
        if most is not None:
            assert Item.reads == most
        else:
            assert Item.reads >= 19990  # (what TreeRows replaced for the transcript)
