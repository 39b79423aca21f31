"""A long fenced code block costs the UI thread a bounded amount per batch, per frame and per turn of lexing.

Lexing is counted, not timed: every lexer call goes through a wrapper that adds up the characters
it was given. Cutting the stream into pieces lexes nothing; a piece is lexed from the nearest known
lexer state, at most CATCH_UP lines before it; `CodeLex.advance` learns states a slice at a time; a
piece whose states are not known yet is drawn as plain text (the same lines, without colours) and
drawn again, coloured as Rich colours the whole block, once they are.
"""

from __future__ import annotations

import pytest
from pygments.lexer import RegexLexer
from textual.app import App, ComposeResult

from rat_tui.ui.widgets import code_lex
from rat_tui.ui.widgets.code_lex import CATCH_UP, LEX_SLICE
from rat_tui.ui.widgets.markdown_stream import PIECE_LINES, MarkdownStream, code_waits, render_block
from rat_tui.ui.widgets.transcript import Transcript

from .helpers.markdown_fidelity import THEME, WIDTH, console, reference, streamed

LINES = 5000
CODE = "".join(f"def function_{i}(x, y):  # a comment\n    return x * {i} + y\n" for i in range(LINES // 2))
DOC = f"Some code:\n\n```python\n{CODE}```\n\nEND\n"


@pytest.fixture
def lexed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each text a regex lexer is asked to tokenize (pieces and whole blocks alike)."""
    sizes: list[int] = []
    original = RegexLexer.get_tokens_unprocessed

    def counting(self, text, stack=("root",)):
        sizes.append(len(text))
        yield from original(self, text, stack)

    monkeypatch.setattr(RegexLexer, "get_tokens_unprocessed", counting)
    return sizes


def test_cutting_a_long_code_block_into_pieces_lexes_nothing(lexed: list[int]) -> None:
    stream = MarkdownStream()
    done = []
    for start in range(0, len(DOC), 40_000):  # big batches, and the closing fence in the same batch as its code
        stream.feed(DOC[start : start + 40_000])
        done += stream.sync().done
    pieces = [b for b in done if b.kind == "code"]
    assert len(pieces) >= LINES // PIECE_LINES - 1
    assert all(b.lines <= PIECE_LINES for b in pieces)
    assert lexed == [] and pieces[0].lex.lexed_chars == 0
    # The closed fence left no long tail behind (it used to be rendered whole, every frame).
    assert stream.tail() is None or stream.tail().lines <= 2 * PIECE_LINES


def test_a_piece_far_past_the_known_states_is_plain_until_advance_reaches_it(lexed: list[int]) -> None:
    stream = MarkdownStream()
    stream.feed(DOC)
    pieces = [b for b in stream.sync().done if b.kind == "code"]
    con = console()
    last = pieces[-2]  # (the last one has the bottom padding)
    lex = last.lex
    assert code_waits(last) is lex

    plain = render_block(con, last, WIDTH, code_theme=THEME, code_background=None)
    assert lexed == []  # drawn without lexing: the source as plain text
    assert len(plain) == last.lines

    turns = 0
    while code_waits(last):
        before = lex.lexed_chars
        lex.advance()
        assert lex.lexed_chars - before <= LEX_SLICE + 60  # a slice, give or take the line it ends in
        turns += 1
    assert turns >= len(CODE) // (LEX_SLICE + 60)
    assert lexed == []  # learning states lexes through CodeLex's own loop: no tokens built

    coloured = render_block(con, last, WIDTH, code_theme=THEME, code_background=None)
    assert len(coloured) == len(plain) and coloured != plain
    assert len(lexed) == 1 and lexed[0] <= (CATCH_UP + PIECE_LINES + 1) * 40  # the piece, from a state near it


def test_pieces_rendered_in_order_are_lexed_once_and_match_the_whole_render(lexed: list[int]) -> None:
    con = console()
    doc = DOC[: DOC.index("def function_400(")] + "```\n\nEND\n"
    chunks = [doc[i : i + 700] for i in range(0, len(doc), 700)]
    want = reference(con, doc)
    assert streamed(con, chunks) == want
    assert streamed(con, [doc]) == want  # a long block that arrives whole also goes in pieces
    lexed.clear()
    assert streamed(con, chunks) == want
    code_chars = doc.count("\n") * 40
    assert sum(lexed) <= 2 * code_chars + len(lexed) * 2 * 40  # each line about once (plus a line of context)


class TranscriptApp(App):
    def compose(self) -> ComposeResult:
        yield Transcript()


async def test_the_transcript_colours_a_long_block_a_slice_per_turn(lexed: list[int],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    advances: list[int] = []
    original = code_lex.CodeLex.advance

    def counting(self, budget=LEX_SLICE, until=None):
        before = self.lexed_chars
        original(self, budget, until)
        advances.append(self.lexed_chars - before)

    monkeypatch.setattr(code_lex.CodeLex, "advance", counting)
    waited: list[int] = []
    wait = Transcript._wait_lexing

    def waiting(self, seg, block):
        waited.append(block.line)
        wait(self, seg, block)

    monkeypatch.setattr(Transcript, "_wait_lexing", waiting)
    app = TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.query_one(Transcript)
        for start in range(0, len(DOC), 20_000):
            transcript.append_text("a", DOC[start : start + 20_000])
            await pilot.pause()
        # (a flush that cost more than PACED_FLUSH waits on a timer: past any number of pauses on a loaded machine)
        for _ in range(2000):
            if not transcript.pending:
                break
            await pilot.pause(0.01)
        assert "END" in transcript.visible_text()
        assert waited  # pieces on screen were drawn plain, waiting for their colours
        for _ in range(2000):
            if not transcript._lexing:
                break
            await pilot.pause(0.01)
        assert not transcript._lexing
        assert max(advances) <= LEX_SLICE + 60 and len(advances) > len(CODE) // (LEX_SLICE + 60)
        assert max(lexed) <= (CATCH_UP + PIECE_LINES + 2) * 40  # never a whole block
        # The code on screen is coloured now (a placeholder has one colour for all its text).
        top = round(transcript.scroll_offset.y)
        colours = set()
        for y in range(top, top + 20):
            strip = transcript._strip_at(y)
            colours |= {seg.style.color for seg in strip if seg.text.strip() and seg.style and seg.style.color}
        assert len(colours) >= 3
        assert transcript.visible_text().splitlines()[-1].strip() == "END"
