"""Provides `dispatch_block_rules`: markdown-it's block rules tried only where a line's first character lets them match.

markdown-it tries every block rule, in order, at the start of every block, and every "terminator"
rule at every line of a paragraph, list item or quote; each call logs at debug level and reads the
line before it can say no. Most can only match on one character: a fence starts with ``` ` ``` or
``~``, a heading with ``#``, a quote with ``>``... So the parser's rule chains are replaced by one
function that picks, for the line at hand, the rules whose first test that character passes, in
their order, and calls those. A rule skipped is one that would have returned False without
touching the state, so the tokens are the same by construction (tests/test_markdown_dispatch.py
compares them over the CommonMark spec examples, the GFM tables and the agent answers); the block
parse of a streamed answer costs about an eighth less.
"""

from __future__ import annotations

from markdown_it import MarkdownIt

# Rule name -> the characters a line (its first non-space one) must start with for the rule to match;
# None: any. These rules, and "code" the other way round, also refuse a line indented as code.
_STARTS = {
    "fence": "`~",
    "blockquote": ">",
    "hr": "*-_",
    "list": "*-+0123456789",
    "reference": "[",
    "html_block": "<",
    "heading": "#",
    "lheading": None,
}
_SPECIAL = frozenset("".join(chars for chars in _STARTS.values() if chars))
# "table" looks at the next line first: it must start with one of these (the delimiter row).
_TABLE_ROW = frozenset("|-:")
_KNOWN = {*_STARTS, "table", "code", "paragraph"}


def dispatch_block_rules(md: MarkdownIt) -> MarkdownIt:
    """Make `md`'s block parser try only the rules a line can start (same tokens); returns `md`.

    Call it once the parser's rules are set (enable/disable/use after it would not be seen). A chain
    with a rule this module does not know (a plugin's) is left as markdown-it builds it.
    """
    ruler = md.block.ruler
    names = {rule.fn: rule.name for rule in ruler.__rules__}
    original = ruler.getRules
    chains: dict[str, list] = {}

    def get_rules(chain: str = "") -> list:
        rules = chains.get(chain)
        if rules is None:
            rules = chains[chain] = _chain(original(chain), names)
        return rules

    ruler.getRules = get_rules  # type: ignore[method-assign]  # this parser's ruler only
    return md


def _chain(rules: list, names: dict) -> list:
    if any(names.get(rule) not in _KNOWN for rule in rules):
        return rules
    table = rules[0] if rules and names.get(rules[0]) == "table" else None
    rest = rules[1:] if table is not None else rules
    if any(names.get(rule) == "table" for rule in rest):
        return rules  # a table rule moved from the front: its place matters, keep the order as it is
    picks: dict[tuple[str, bool], list] = {}

    def candidates(char: str, indented: bool) -> list:
        chosen = []
        for rule in rest:
            name = names[rule]
            if name == "code":
                if indented:
                    chosen.append(rule)
            elif name in _STARTS:
                starts = _STARTS[name]
                if not indented and (starts is None or (char and char in starts)):
                    chosen.append(rule)
            else:
                chosen.append(rule)
        picks[char, indented] = chosen
        return chosen

    def dispatch(state, line: int, end_line: int, silent: bool) -> bool:
        pos = state.bMarks[line] + state.tShift[line]
        char = state.src[pos] if pos < state.eMarks[line] else ""
        if char not in _SPECIAL:
            char = "a" if char else ""
        if table is not None and line + 2 <= end_line:
            after = state.bMarks[line + 1] + state.tShift[line + 1]
            if after < state.eMarks[line + 1] and state.src[after] in _TABLE_ROW and table(state, line, end_line, silent):
                return True
        indented = state.is_code_block(line)
        chosen = picks.get((char, indented))
        if chosen is None:
            chosen = candidates(char, indented)
        for rule in chosen:
            if rule(state, line, end_line, silent):
                return True
        return False

    return [dispatch]
