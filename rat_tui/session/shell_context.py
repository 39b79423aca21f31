"""Provides the shell cards a prompt attaches: `@!` (the last `!command`) and `@!N` (command N) (no Textual).

Nothing the user runs in the tab's shell reaches the agent unless a prompt names it this way (`a` on a
card writes the mention). Each named command goes as the card's text — the command, its output (plain,
capped to its last ATTACH_LIMIT characters) and how it ended — as an embedded text resource where the
agent's promptCapabilities allow `embeddedContext`, else as a text block.
"""

from __future__ import annotations

import re
from typing import Any

from ..protocol.sanitize import plain
from ..state import shell
from ..state.models import SessionState, TerminalState
from .attachments import BuiltPrompt, accepts

MENTION = re.compile(r"(?:(?<=\s)|^)@!(\d*)(?=\s|$|[.,;:)])")
ATTACH_LIMIT = 64 * 1024  # characters of a command's output sent to the agent (its end: the error, the summary)


def mentioned(text: str) -> list[int | None]:
    """The commands `text` names, in order, once each (None: the last one)."""
    seen: dict[int | None, None] = {}
    for match in MENTION.finditer(text):
        seen[int(match.group(1)) if match.group(1) else None] = None
    return list(seen)


def card_text(entry: shell.ShellEntry, terminals: dict[str, TerminalState], limit: int | None = ATTACH_LIMIT) -> str:
    """What a card attaches (and the viewer shows, with no `limit`): `$ command`, its output as plain text, then
    how it ended."""
    terminal = terminals.get(entry.terminal_id)
    output = plain(terminal.output if terminal is not None else "").rstrip("\n")
    cut = ""
    if limit is not None and len(output) > limit:
        output = output[-limit:]
        output = output[output.find("\n") + 1:] if "\n" in output else output
        cut = f"[… earlier output not attached: {entry.total_bytes} bytes in all, the last lines follow]\n"
    elif entry.total_bytes > len(output.encode("utf-8", "replace")) + 1024:
        cut = f"[… earlier output not kept: {entry.total_bytes} bytes in all, the last lines follow]\n"
    if entry.running:
        end = "still running"
    elif entry.interrupted:
        end = f"interrupted, exit code {entry.exit_code}"
    else:
        end = f"exit code {entry.exit_code}"
    if entry.note:
        end += f"; {entry.note}"
    where = f" in {entry.cwd}" if entry.cwd else ""
    body = f"{cut}{output}\n" if output else cut
    return f"$ {entry.command}\n{body}[{end}{where}]"


def attach(built: BuiltPrompt, text: str, state: SessionState, capabilities: dict[str, Any] | None) -> BuiltPrompt:
    """`built` with the shell cards `text` names added; refused (nothing sent) when one names no command
    of this tab or one still running."""
    numbers = mentioned(text)
    if not numbers or built.blocks is None:
        return built
    for number in numbers:
        entry = shell.find(state, number)
        name = "@!" if number is None else f"@!{number}"
        if entry is None:
            why = "no shell command has run in this tab yet" if number is None else f"this tab has no shell command {number}"
            return BuiltPrompt(None, refused=f"Not sent: {name} names a shell command, but {why}.")
        if entry.running:
            return BuiltPrompt(None, refused=f"Not sent: shell command !{entry.number} is still running "
                                             "(Esc interrupts it); send once it ended.")
        body = card_text(entry, state.terminals)
        if accepts(capabilities, "embeddedContext"):
            built.blocks.append({"type": "resource", "resource": {
                "uri": f"rat-shell:///{entry.number}", "mimeType": "text/plain", "text": body}})
        else:
            built.blocks.append({"type": "text", "text": body})
        built.chips.append(f"🐚 !{entry.number} {entry.command[:40]}")
    return built
