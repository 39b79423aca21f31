"""The block rules tried by a line's first character (`markdown_dispatch`) give markdown-it's own tokens.

Corpora: the CommonMark spec examples, the GFM table cases and the agent answers the fidelity test
uses (tests/fixtures/markdown/), and documents made of their lines shuffled (a fixed seed), where
lines meet that no example puts side by side: lazy lines, markers inside quotes and items.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from rat_tui.ui.widgets.markdown_dispatch import dispatch_block_rules
from rat_tui.ui.widgets.markdown_stream import _block_parser, _parser

FIXTURES = Path(__file__).parent / "fixtures" / "markdown"


def _corpus() -> list[str]:
    docs = [example["markdown"] for example in json.loads((FIXTURES / "commonmark.json").read_text())]
    docs += (FIXTURES / "tables.md").read_text().split("\n\n\n")
    docs += [path.read_text() for path in sorted((FIXTURES / "answers").iterdir())]
    lines = [line for doc in docs for line in doc.splitlines(keepends=True)]
    rng = random.Random(1616)
    docs += ["".join(rng.choice(lines) for _ in range(rng.randint(2, 40))) for _ in range(1500)]
    return docs


CORPUS = _corpus()


def _signature(tokens: list) -> list:
    out = []
    for token in tokens:
        out.append((token.type, token.tag, token.nesting, token.level, token.map, token.markup, token.info,
                    token.content, token.attrs, token.hidden, token.block, token.meta))
        if token.children:
            out.append(_signature(token.children))
    return out


@pytest.mark.parametrize(
    ("stock", "fast"),
    [
        (lambda: MarkdownIt().enable("strikethrough").enable("table"), _parser),
        (lambda: MarkdownIt().enable("strikethrough").enable("table").disable(["inline", "text_join"]), _block_parser),
    ],
    ids=["with inline", "block only"],
)
def test_dispatch_gives_markdown_its_tokens(stock, fast) -> None:
    stock, fast = stock(), fast()
    differ = []
    for doc in CORPUS:
        env_a, env_b = {"references": {}}, {"references": {}}
        if _signature(stock.parse(doc, env_a)) != _signature(fast.parse(doc, env_b)) or env_a != env_b:
            differ.append(doc)
    assert not differ, f"{len(differ)} of {len(CORPUS)} documents parse differently, first: {differ[0]!r}"


def test_a_chain_with_an_unknown_rule_is_left_as_it_is() -> None:
    def plugin(state, line, end_line, silent):  # a plugin's rule: nothing known about where it can match
        return False

    md = MarkdownIt()
    md.block.ruler.before("paragraph", "plugin", plugin, {"alt": ["paragraph"]})
    original = {chain: list(md.block.ruler.getRules(chain)) for chain in ("", "paragraph")}
    dispatch_block_rules(md)
    assert {chain: md.block.ruler.getRules(chain) for chain in ("", "paragraph")} == original
    assert len(dispatch_block_rules(MarkdownIt()).block.ruler.getRules("")) == 1  # known rules: one dispatcher
