"""Provides CodeLex: a long fenced code block lexed a bounded slice at a time, and its pieces lexed from there.

A streamed code block is shown as pieces of a few lines (markdown_stream.py). To colour a piece as the
whole block would be coloured, the lexer must start it in the state it is in at the piece's first line,
and that state depends on every line before. `CodeLex` learns those states going forward, `advance()`
a slice of at most LEX_SLICE characters per call, so a 20,000-line block costs the UI thread many short
turns instead of one long one; a piece further ahead than CATCH_UP lines is drawn as plain text
meanwhile (`ready`), and drawn again once the states reach it.

Only regex lexers can be resumed this way (their whole state is a position and a stack of state names);
`resumable` says which.
"""

from __future__ import annotations

from functools import lru_cache

LEX_SLICE = 1500  # characters lexed per advance (3-10 ms of the Python lexer on a busy 2-core machine)
CATCH_UP = 24  # a piece this many lines past the known states or fewer is lexed from them at once


@lru_cache(maxsize=64)
def resumable(lexer) -> str | None:
    """'regex' when the lexer's state is (position, state stack), 'text' for the plain-text lexer, None
    when it cannot be resumed mid-text (its pieces are not cut: the block is lexed whole)."""
    import inspect

    from pygments.lexer import ExtendedRegexLexer, RegexLexer
    from pygments.lexers.special import TextLexer

    if lexer.filters:
        return None
    kind = type(lexer)
    if type(lexer) is TextLexer:
        return "text"
    if not isinstance(lexer, RegexLexer) or isinstance(lexer, ExtendedRegexLexer):
        return None
    method = kind.get_tokens_unprocessed
    if method is RegexLexer.get_tokens_unprocessed:
        return "regex"
    # A subclass that maps the tokens of the regex loop one by one (C, C++) and takes the start stack.
    if "stack" in inspect.signature(method).parameters:
        return "regex"
    return None


def _transition(statestack: list, new_state) -> list:
    """RegexLexer's state change (in place)."""
    if isinstance(new_state, tuple):
        for state in new_state:
            if state == "#pop":
                if len(statestack) > 1:
                    statestack.pop()
            elif state == "#push":
                statestack.append(statestack[-1])
            else:
                statestack.append(state)
    elif isinstance(new_state, int):
        if abs(new_state) >= len(statestack):
            del statestack[1:]
        else:
            del statestack[new_state:]
    elif new_state == "#push":
        statestack.append(statestack[-1])
    return statestack


class CodeLex:
    """The lexer states at the start of each line of one fenced code block, learnt a slice at a time.

    `add` takes the block's complete lines as they arrive (O(lines)). `resume[k]` is where lexing can
    restart to reach line k exactly as lexing the whole block would: (line, state stack), line k itself
    unless a token spans its start (a C comment), then where the line that token starts on restarts. States are
    learnt only for lines with a line after them (lexers look ahead), as the stream's pieces were cut.
    """

    def __init__(self, lexer) -> None:
        self.lexer = lexer
        self.kind = resumable(lexer)
        self.lines: list[str] = []  # tab-expanded, as Syntax lexes them
        self.starts: list[int] = [0]  # offset of each line in the joined text, then the end
        self.resume: list[tuple[int, tuple]] = [(0, ("root",))]
        self.lexed_chars = 0  # characters lexed by `advance` so far (tests count them)
        self._text = ""
        self._joined = 0  # lines in _text
        self._pos = 0  # where the forward lexing stopped, and its state
        self._stack: list = ["root"]

    @property
    def frontier(self) -> int:
        """Lines whose start state is known (line 0 always)."""
        return len(self.resume) - 1 if self.kind == "regex" else len(self.lines)

    def add(self, lines: list[str]) -> None:
        for line in lines:
            line = line.expandtabs(4)
            self.lines.append(line)
            self.starts.append(self.starts[-1] + len(line))

    def ready(self, line: int) -> bool:
        """Whether a piece starting at `line` can be lexed now at a bounded cost."""
        return self.kind != "regex" or line - self.frontier <= CATCH_UP

    @property
    def behind(self) -> bool:
        """Whether lines that have one after them still have no known state."""
        return self.kind == "regex" and self.frontier < len(self.lines) - 1

    def advance(self, budget: int = LEX_SLICE, until: int | None = None) -> None:
        """Learn the states of the next lines, lexing about `budget` characters (whole tokens), or up to
        line `until` (a piece about to be lexed: it is at most CATCH_UP lines away)."""
        if not self.behind or (until is not None and until <= self.frontier):
            return
        if self._joined < len(self.lines):
            self._text += "".join(self.lines[self._joined :])
            self._joined = len(self.lines)
        text, starts, resume = self._text, self.starts, self.resume
        last = len(self.lines) - 1  # the last line's state waits for a line after it
        if until is not None:
            last = min(last, until)
            budget = len(text)
        k = len(resume)  # the next line whose state is wanted
        nxt = starts[k]
        pos, statestack = self._pos, self._stack
        stop = pos + budget
        tokendefs = self.lexer._tokens  # noqa: SLF001 - Pygments has no public name for the compiled token table
        statetokens = tokendefs[statestack[-1]]
        start = pos
        while k <= last:
            if pos == nxt:
                resume.append((k, tuple(statestack)))
                k += 1
                nxt = starts[k]
                if k > last:
                    break
            if pos >= stop:
                break
            for rexmatch, _action, new_state in statetokens:
                m = rexmatch(text, pos)
                if m:
                    end = m.end()
                    if end > nxt:  # a token across line starts: they resume where its line does
                        state = resume[k - 1]
                        while nxt < end and k <= last:
                            resume.append(state)
                            k += 1
                            nxt = starts[k]
                    pos = end
                    if new_state is not None:
                        statestack = _transition(statestack, new_state)
                        statetokens = tokendefs[statestack[-1]]
                    break
            else:
                if pos >= len(text):
                    break
                if text[pos] == "\n":
                    statestack = ["root"]
                    statetokens = tokendefs["root"]
                pos += 1
        self._pos, self._stack = pos, statestack
        self.lexed_chars += pos - start

    def piece_tokens(self, line: int, code: str, context: str) -> list[tuple]:
        """(token type, value) of a piece starting at `line` whose (processed) text is `code`, lexed from
        the nearest known state before it with `context` (the next line) to look ahead at."""
        if self.kind == "text":
            from pygments.token import Text

            return [(Text, code)]
        first, stack = self.resume[min(line, self.frontier)]
        before = "".join(self.lines[first:line])
        text = before + code + context.expandtabs(4)
        begin, end = len(before), len(before) + len(code)
        out = []
        for pos, ttype, value in type(self.lexer).get_tokens_unprocessed(self.lexer, text, stack):
            if pos >= end:
                break
            stop = pos + len(value)
            if stop <= begin:
                continue
            out.append((ttype, value[max(begin - pos, 0) : end - pos]))
        return out
