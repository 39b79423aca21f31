"""The incremental markdown splitter: blocks cut once, huge lines cut into plain pieces."""

from rat_tui.ui.widgets.markdown_stream import LONG_LINE_PIECE, MarkdownSplitter


def test_blocks_are_cut_at_blank_lines_headings_and_fences() -> None:
    splitter = MarkdownSplitter()
    done = []
    for chunk in ["# Ti", "tle\npara", "graph\n\n```py", "thon\nx = 1\n", "```\n- a\n- b\n"]:
        done += splitter.feed(chunk)
    assert [b.text for b in done] == ["# Title\n", "paragraph\n", "x = 1\n"]
    assert done[2].lexer == "python"
    assert splitter.tail().text == "- a\n- b\n"


def test_a_huge_line_is_cut_into_plain_pieces_as_it_streams() -> None:
    splitter = MarkdownSplitter()
    done = splitter.feed("intro\n\n")
    done += splitter.feed("x" * (LONG_LINE_PIECE * 3 + 5))
    pieces = [b for b in done if b.plain]
    assert len(pieces) == 3 and all(len(b.text) == LONG_LINE_PIECE for b in pieces)
    assert splitter.tail().text == "xxxxx"  # the remainder stays open, markdown again
    done = splitter.feed("y" * (LONG_LINE_PIECE + 1) + "\n")
    plain = [b for b in done if b.plain]
    assert "".join(b.text for b in plain) == "xxxxx" + "y" * (LONG_LINE_PIECE + 1) + "\n"
    assert plain[-1].last and splitter.tail() is None
