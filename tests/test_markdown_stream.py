"""The incremental markdown stream: blocks cut where markdown-it cuts them, long blocks in pieces,
link definitions for the whole message, huge lines cut into plain pieces."""

from rat_tui.ui.widgets.markdown_stream import LONG_LINE_PIECE, PIECE_LINES, MarkdownStream

from .helpers.markdown_fidelity import console, reference, streamed


def feed_all(stream: MarkdownStream, chunks: list[str]) -> list:
    done = []
    for chunk in chunks:
        stream.feed(chunk)
        done += stream.sync().done
    return done


def test_top_level_blocks_before_the_last_are_final_and_the_last_is_the_tail() -> None:
    stream = MarkdownStream()
    done = feed_all(stream, ["# Ti", "tle\npara", "graph\n\n```py", "thon\nx = 1\n", "```\n- a\n- b\n"])
    assert [b.text for b in done] == ["# Title\n", "paragraph\n", "x = 1\n"]
    assert done[2].kind == "code" and done[2].lang == "python" and done[2].top and done[2].bottom
    tail = stream.tail()
    assert tail.kind == "list" and tail.text == "- a\n- b\n"


def test_a_list_item_continued_after_a_blank_line_stays_in_the_list() -> None:
    stream = MarkdownStream()
    done = feed_all(stream, ["- one\n", "\n", "  still one\n", "- two\n", "\n", "after\n", "\n", "end\n"])
    assert [b.text for b in done] == ["- one\n\n  still one\n- two\n\n", "after\n"]
    assert done[0].kind == "list" and done[1].newline_in


def test_a_setext_underline_or_a_table_delimiter_changes_only_the_tail() -> None:
    stream = MarkdownStream()
    done = feed_all(stream, ["intro\n\n", "Title\n", "=====\n", "| a |\n", "|---|\n", "| 1 |\n\nend\n"])
    assert [b.text for b in done] == ["intro\n", "Title\n=====\n", "| a |\n|---|\n| 1 |\n"]


def test_a_link_definition_reports_its_label_for_blocks_already_rendered() -> None:
    stream = MarkdownStream()
    stream.feed("See [the docs][d].\n\nMore.\n\n")
    first = stream.sync()
    assert not first.labels and first.done[0].may_use(["D"]) is True
    stream.feed("[d]: https://example.com\n\nlast\n")
    second = stream.sync()
    assert second.labels == ["D"] and stream.refs["D"]["href"] == "https://example.com"
    # An unterminated last line counts for now: the message may end there.
    stream.feed("\n[e]: https://example.com/e")
    assert stream.sync().labels == ["E"] and "E" in stream.refs


def test_a_long_list_comes_in_pieces_that_keep_the_whole_lists_numbering() -> None:
    doc = "".join(f"{i}. item {i}\n" for i in range(1, 121)) + "\nafter\n"
    stream = MarkdownStream()
    done = feed_all(stream, doc.splitlines(keepends=True))
    pieces = [b for b in done if b.kind == "list"]
    assert len(pieces) >= 120 // (PIECE_LINES + 1)
    assert all(b.lines <= PIECE_LINES + 1 for b in pieces)
    assert pieces[0].top and not any(b.top for b in pieces[1:])
    assert pieces[0].list.count == 120 and {id(b.list) for b in pieces} == {id(pieces[0].list)}
    con = console()
    assert streamed(con, doc.splitlines(keepends=True)) == reference(con, doc)


def test_the_open_region_stays_small_while_a_long_list_or_code_block_streams() -> None:
    code = "```python\n" + "".join(f"x{i} = '''a\n{i}'''\n" for i in range(300)) + "```\n"
    items = "".join(f"- item {i}\n" for i in range(600))
    for doc in (code, items):
        stream = MarkdownStream()
        biggest = 0
        for line in doc.splitlines(keepends=True):
            stream.feed(line)
            stream.sync()
            biggest = max(biggest, stream.tail_size[0])
        assert biggest <= 2 * PIECE_LINES + 2


def test_a_huge_line_is_cut_into_plain_pieces_as_it_streams() -> None:
    stream = MarkdownStream()
    stream.feed("intro\n\n")
    stream.feed("x" * (LONG_LINE_PIECE * 3 + 5))
    done = stream.sync().done
    pieces = [b for b in done if b.plain]
    assert [b.text for b in done if not b.plain] == ["intro\n\n"]  # the open region, as it stood
    assert len(pieces) == 3 and all(len(b.text) == LONG_LINE_PIECE for b in pieces)
    assert stream.tail().text == "xxxxx"  # the remainder stays open, markdown again
    stream.feed("y" * (LONG_LINE_PIECE + 1) + "\n")
    plain = [b for b in stream.sync().done if b.plain]
    assert "".join(b.text for b in plain) == "xxxxx" + "y" * (LONG_LINE_PIECE + 1) + "\n"
    assert plain[-1].last and stream.tail() is None


def text_lines(lines: list[tuple]) -> list[str]:
    return ["".join(text for text, _style in line).rstrip() for line in lines]


def test_ordered_list_numbers_keep_their_period_right_aligned_as_rich_aligns_them() -> None:
    doc = "".join(f"{n}. item {n}\n" for n in range(1, 13)) + "\ntext\n\n3) three\n4) four\n\n- a bullet\n"
    con = console()
    lines = text_lines(streamed(con, [doc[i : i + 7] for i in range(0, len(doc), 7)]))
    assert lines == text_lines(reference(con, doc))  # the whole-document render, list items alike
    assert lines[0] == "  1. item 1" and lines[8] == "  9. item 9" and lines[11] == " 12. item 12"  # pieces, one width
    assert " 3) three" in lines and " 4) four" in lines  # the delimiter the source used
    assert " • a bullet" in lines  # bullets as Rich draws them
    wrapped = text_lines(reference(console(), "1. " + "word " * 30 + "\n"))
    assert wrapped[0].startswith(" 1. word") and wrapped[1].startswith("    word")  # continuation under the text
