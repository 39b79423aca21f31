"""Tests the diff model (hunks, rows, revert one hunk) and the DiffView widget in a purpose-built app."""

from __future__ import annotations

import difflib
import random

import pytest
from textual.app import App, ComposeResult

from rat_tui.demo.scenarios import dense_code_texts
from rat_tui.state.diffing import Cell, FileDiff, Row, SplitRow, apply_hunk_revert, diff_opcodes, split_lines
from rat_tui.themes import THEME_VARIABLE_DEFAULTS
from rat_tui.ui.widgets.diff_view import CHUNK_LINES, MAX_CHUNKS, DiffView

OLD_PY = '''import os


def greet(name):
    """Say hello."""
    print("hello", name)
    return len(name)


class Greeter:
    def __init__(self, prefix):
        self.prefix = prefix

    def greet(self, name):
        return self.prefix + name
'''

NEW_PY = '''import os
import sys


def greet(name: str) -> int:
    """Say hello."""
    print("hello", name, file=sys.stderr)
    return len(name)


class Greeter:
    def __init__(self, prefix):
        self.prefix = prefix

    def greet(self, name):
        return f"{self.prefix}{name}"
'''


def numbered(count: int, prefix: str = "line") -> str:
    return "".join(f"{prefix} {i}\n" for i in range(1, count + 1))


def rebuild(old: str, new: str) -> list[str]:
    """The new lines put back together from the old ones and the opcodes (checks the opcodes)."""
    a, b = split_lines(old), split_lines(new)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in diff_opcodes(a, b):
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
            out += a[i1:i2]
        else:
            out += b[j1:j2]
    return out


# -- the model ------------------------------------------------------------------------------------


def test_new_file_is_one_hunk_of_added_lines() -> None:
    diff = FileDiff("/p/new.py", None, "a\nb\n")
    assert diff.is_new and (diff.added, diff.removed) == (2, 0)
    assert [h.header for h in diff.hunks] == ["@@ -0,0 +1,2 @@"]
    assert diff.unified == [Row("hunk", None, None, "@@ -0,0 +1,2 @@", 0),
                            Row("added", None, 1, "a", 0), Row("added", None, 2, "b", 0)]
    assert diff.split[1:] == [SplitRow(0, None, Cell(1, "a", "added")), SplitRow(0, None, Cell(2, "b", "added"))]


def test_emptied_file_is_all_removed() -> None:
    diff = FileDiff("gone.txt", "a\nb\nc\n", "")
    assert not diff.is_new and (diff.added, diff.removed) == (0, 3)
    assert diff.hunks[0].header == "@@ -1,3 +0,0 @@"
    assert [(r.kind, r.old_no, r.new_no) for r in diff.unified[1:]] == [("removed", n, None) for n in (1, 2, 3)]


def test_modification_has_three_lines_of_context_and_the_unified_diff_header() -> None:
    old = numbered(20)
    new = old.replace("line 10\n", "line ten\n")
    diff = FileDiff("f.txt", old, new)
    expected = list(difflib.unified_diff(old.splitlines(True), new.splitlines(True)))[2]
    assert diff.hunks[0].header == expected.strip() == "@@ -7,7 +7,7 @@"
    assert [(r.kind, r.old_no, r.new_no, r.text) for r in diff.unified[1:]] == [
        ("context", 7, 7, "line 7"), ("context", 8, 8, "line 8"), ("context", 9, 9, "line 9"),
        ("removed", 10, None, "line 10"), ("added", None, 10, "line ten"),
        ("context", 11, 11, "line 11"), ("context", 12, 12, "line 12"), ("context", 13, 13, "line 13"),
    ]


def test_far_apart_changes_are_separate_hunks_and_near_ones_merge() -> None:
    old = numbered(40)
    far = FileDiff("f", old, old.replace("line 5\n", "five\n").replace("line 30\n", "thirty\n"))
    assert len(far.hunks) == 2
    assert far.unified_starts == [0, 1 + 3 + 2 + 3]  # header, 3 context before (lines 2-4), -/+, 3 after
    assert far.unified[far.unified_starts[1]].text == "@@ -27,7 +27,7 @@"
    assert far.split_starts == [0, 1 + 3 + 1 + 3]  # the replaced line is one paired row when split
    near = FileDiff("f", old, old.replace("line 5\n", "five\n").replace("line 11\n", "eleven\n"))
    assert len(near.hunks) == 1 and near.unified_starts == [0]


def test_split_pairs_a_replaced_block_row_by_row() -> None:
    diff = FileDiff("f", "keep\nold 1\nold 2\nkeep 2\n", "keep\nnew 1\nnew 2\nnew 3\nkeep 2\n")
    body = [(row.left and (row.left.number, row.left.kind), row.right and (row.right.number, row.right.kind))
            for row in diff.split[1:]]
    assert body == [((1, "context"), (1, "context")), ((2, "removed"), (2, "added")),
                    ((3, "removed"), (3, "added")), (None, (4, "added")), ((4, "context"), (5, "context"))]
    unified = [row.kind for row in diff.unified[1:]]
    assert unified == ["context", "removed", "removed", "added", "added", "added", "context"]


def test_lines_are_cut_at_newlines_only_and_line_endings_are_not_shown() -> None:
    assert split_lines("a\x0cb\r\nc") == ["a\x0cb\r\n", "c"]
    diff = FileDiff("f", "x\r\ny\r\n", "x\r\nz\r\n")
    assert [r.text for r in diff.unified[1:]] == ["x", "y", "z"]


def test_identical_texts_have_no_hunks() -> None:
    diff = FileDiff("f", "same\n", "same\n")
    assert diff.hunks == [] and diff.unified == [] and diff.split == [] and diff.unified_starts == []


def test_revert_one_hunk_keeps_the_others() -> None:
    old = numbered(40)
    new = old.replace("line 5\n", "five\n").replace("line 30\n", "thirty\nthirty-one\n")
    first = apply_hunk_revert(old, new, 0)
    assert first == old.replace("line 30\n", "thirty\nthirty-one\n")
    assert apply_hunk_revert(old, new, 1) == old.replace("line 5\n", "five\n")
    assert apply_hunk_revert(old, first, 0) == old  # then the last one left
    with pytest.raises(IndexError):
        apply_hunk_revert(old, new, 2)


def test_revert_round_trips_on_random_edits() -> None:
    rng = random.Random(3)
    for _ in range(40):
        old_lines = [f"l{rng.randrange(30)}\n" for _ in range(rng.randrange(0, 60))]
        new_lines = list(old_lines)
        for _ in range(rng.randrange(1, 6)):
            at = rng.randrange(len(new_lines) + 1)
            if rng.random() < 0.5 and at < len(new_lines):
                del new_lines[at : at + rng.randrange(1, 4)]
            else:
                new_lines[at:at] = [f"new{rng.randrange(99)}\n"] * rng.randrange(1, 3)
        old, new = "".join(old_lines), "".join(new_lines)
        hunks = len(FileDiff("f", old, new).hunks)
        for index in range(hunks):  # reverting one hunk leaves the others
            assert len(FileDiff("f", old, apply_hunk_revert(old, new, index)).hunks) == hunks - 1
        text = new
        while FileDiff("f", old, text).hunks:  # and reverting them all gives the old text back
            text = apply_hunk_revert(old, text, 0)
        assert text == old


def test_revert_handles_new_files_and_missing_final_newlines() -> None:
    assert apply_hunk_revert(None, "a\nb\n", 0) == ""
    assert apply_hunk_revert("a\nb", "a\nc\n", 0) == "a\nb"


def test_a_20000_line_diff_with_many_changes_is_correct() -> None:
    """Its speed is measured in bench/diff.py (about 0.1 s, where difflib alone takes seconds)."""
    old, new = dense_code_texts()
    diff = FileDiff("big.py", old, new)
    rows = diff.unified
    assert rebuild(old, new) == split_lines(new)
    assert len(diff.hunks) > 1000 and len(rows) > 10000
    assert diff.added == sum(1 for r in rows if r.kind == "added")
    assert diff.removed == sum(1 for r in rows if r.kind == "removed")


# -- the widget -------------------------------------------------------------------------------------


class DiffApp(App):
    """A DiffView alone, with rat's theme variables (or without, to check the fallback colours)."""

    def __init__(self, path: str, old: str | None, new: str, mode: str = "unified", *, variables: bool = True) -> None:
        self._diff_args = (path, old, new, mode)
        self._variables = variables  # read by get_theme_variable_defaults during App.__init__
        super().__init__()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS) if self._variables else {}

    def compose(self) -> ComposeResult:
        path, old, new, mode = self._diff_args
        yield DiffView(path, old, new, mode=mode)

    def on_mount(self) -> None:
        self.theme = "textual-dark"  # not TEXTUAL_THEME: snapshots must not depend on the environment
        self.query_one(DiffView).focus()


def many_hunks() -> tuple[str, str]:
    old = numbered(300)
    new = old
    for n in range(10, 300, 25):
        new = new.replace(f"line {n}\n", f"changed {n}\n")
    return old, new


async def test_next_and_previous_hunk_scroll_the_hunk_to_the_top() -> None:
    old, new = many_hunks()
    app = DiffApp("f.txt", old, new)
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(DiffView)
        starts = view.diff.unified_starts
        assert len(starts) == 12 and view.scroll_y == 0 and view.current_hunk == 0
        await pilot.press("n")
        assert view.scroll_y == starts[1]
        await pilot.press("right_square_bracket", "n")
        assert view.scroll_y == starts[3] and view.current_hunk == 3
        assert view.visible_text().splitlines()[1].startswith(" @@ -82,7 +82,7 @@")
        await pilot.press("p")
        assert view.scroll_y == starts[2]
        await pilot.press("down", "p")  # inside a hunk: back to its own start first
        assert view.scroll_y == starts[2]
        await pilot.press("left_square_bracket")
        assert view.scroll_y == starts[1]
        for _ in range(15):  # the last hunks can't reach the top; n still walks through them
            await pilot.press("n")
        assert view.current_hunk == 11 and view.scroll_y == view.max_scroll_y


async def test_toggle_split_keeps_the_hunk_at_the_top() -> None:
    old, new = many_hunks()
    app = DiffApp("f.txt", old, new)
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(DiffView)
        await pilot.press("n", "n")
        await pilot.press("s")
        assert view.mode == "split" and view.scroll_y == view.diff.split_starts[2]
        text = view.visible_text().splitlines()
        assert "│" in text[2] and text[5].split() == ["60", "-", "line", "60", "│", "60", "+", "changed", "60"]
        assert view.virtual_size.height == len(view.diff.split) + 1
        await pilot.press("n", "s")
        assert view.mode == "unified" and view.scroll_y == view.diff.unified_starts[3]


async def test_header_page_keys_and_horizontal_scroll() -> None:
    old = numbered(100)
    new = old.replace("line 50\n", "x" * 200 + " end\n")
    app = DiffApp("/abs/dir/notes.txt", None, new)
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(DiffView)
        header = view.visible_text().splitlines()[0]
        assert header.split() == ["/abs/dir/notes.txt", "new", "file", "+100", "−0"]
        page = view.scrollable_content_region.height - 1  # all but the sticky header
        await pilot.press("pagedown")
        assert view.scroll_y == page
        await pilot.press("end", "right", "right")
        lines = view.visible_text().splitlines()
        assert lines[-1].split()[:2] == ["100", "+"] and view.scroll_x == 2
        view.scroll_to(x=0, y=45, animate=False)
        await pilot.pause()
        row = next(line for line in view.visible_text().splitlines() if line.split()[:2] == ["50", "+"])
        assert row.endswith("x→") and "line" not in row  # the long line is cut at the edge (marked), not wrapped


async def test_a_20000_line_diff_shows_at_once_and_highlights_only_what_is_seen() -> None:
    old, new = dense_code_texts()
    app = DiffApp("big.py", old, new)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(DiffView)
        if view.pending:  # the diff is computed in a worker thread; the header says so meanwhile
            assert "computing the diff…" in view.visible_text()
        for _ in range(600):
            if not view.pending:
                break
            await pilot.pause(0.05)
        lines = view.visible_text().splitlines()
        assert lines[0].split() == ["big.py", f"+{view.diff.added}", f"−{view.diff.removed}"]
        assert lines[1].startswith(" @@ -1,4 +1,4 @@") and "def f1(x):" in view.visible_text()
        assert 0 < view.highlighted_lines <= 4 * CHUNK_LINES  # a few chunks for one screen, not 20,000
        await pilot.press("end")
        assert view.diff.unified[-1].text in view.visible_text()
        for _ in range(20):
            await pilot.press("pageup")
        assert view.highlighted_lines <= MAX_CHUNKS * CHUNK_LINES  # capped however far one scrolls


async def test_tints_come_from_theme_variables_or_fall_back_to_success_and_error() -> None:
    async def added_background(variables: bool) -> str:
        app = DiffApp("f.py", "a\n", "b\n", variables=variables)
        async with app.run_test(size=(40, 8)):
            style = app.query_one(DiffView).get_component_rich_style("diff-view--added")
            return style.bgcolor.triplet.hex

    assert await added_background(True) != await added_background(False)


async def test_a_theme_change_redraws_with_the_new_colours() -> None:
    app = DiffApp("f.py", "a = 1\n", "a = 2\n")
    async with app.run_test(size=(40, 8)) as pilot:
        view = app.query_one(DiffView)
        dark = {segment.style.bgcolor for segment in view.render_line(3)}  # the added row
        app.theme = "textual-light"
        await pilot.pause()
        assert {segment.style.bgcolor for segment in view.render_line(3)}.isdisjoint(dark)


async def test_control_characters_are_drawn_as_symbols() -> None:
    app = DiffApp("f.txt", "", "bell\x07 esc\x1b[31m tab\tend\n")
    async with app.run_test(size=(60, 8)):
        assert "bell␇ esc␛[31m tab  end" in app.query_one(DiffView).visible_text()  # tab to column 20


async def test_set_diff_replaces_the_diff_and_scrolls_home() -> None:
    old, new = many_hunks()
    app = DiffApp("f.txt", old, new)
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(DiffView)
        await pilot.press("n", "n")
        view.set_diff("g.txt", "a\n", "b\n", mode="split")
        await pilot.pause()
        assert view.scroll_y == 0 and view.mode == "split"
        assert view.visible_text().splitlines()[2].split() == ["1", "-", "a", "│", "1", "+", "b"]


# -- snapshots ------------------------------------------------------------------------------------


def test_snapshot_unified(snap_compare) -> None:
    assert snap_compare(DiffApp("src/greet.py", OLD_PY, NEW_PY), terminal_size=(100, 30))


def test_snapshot_split(snap_compare) -> None:
    assert snap_compare(DiffApp("src/greet.py", OLD_PY, NEW_PY, mode="split"), terminal_size=(100, 30))


LONG_OLD = "short = 1\nmessage = 'a line long enough to be cut in half of a split view of eighty columns'\nend = 0\n"
LONG_NEW = "short = 2\nmessage = 'a line long enough to be cut in half of a split view of eighty columns, and more'\nend = 0\n"


async def test_a_line_cut_by_its_half_of_the_split_view_ends_in_a_marker() -> None:
    from rat_tui.ui.widgets.diff_view import CUT_MARK

    app = DiffApp("long.py", LONG_OLD, LONG_NEW, mode="split")
    async with app.run_test(size=(80, 12)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        rows = {line.split("│")[0].strip()[:12]: line for line in view.visible_text().splitlines() if "│" in line}
        cut = next(line for key, line in rows.items() if "message" in key)
        left, right = cut.split("│")
        assert left.rstrip().endswith(CUT_MARK) and right.rstrip().endswith(CUT_MARK)
        whole = next(line for key, line in rows.items() if "short" in key)
        assert CUT_MARK not in whole  # a line that fits has none
        view.scroll_to(x=view.max_scroll_x, animate=False)  # scrolled right to the lines' ends: nothing cut there
        await pilot.pause()
        assert CUT_MARK not in view.visible_text()


def test_snapshot_split_with_cut_lines(snap_compare) -> None:
    assert snap_compare(DiffApp("long.py", LONG_OLD, LONG_NEW, mode="split"), terminal_size=(80, 12))
