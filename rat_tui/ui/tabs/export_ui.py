"""Provides the live session's exports (command palette): the transcript as Markdown, and its journal as the JSONL
file `rat replay FILE` plays, as the history screen writes them for a past session (screens/history.py).

The Markdown comes from the session's state as it is now; the journal from the history journal's records of it,
committed first (none when history is off: then only the Markdown can be written).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.widget import Widget

from ...history.journal import SessionJournal

if TYPE_CHECKING:
    from .view import SessionView

log = logging.getLogger("rat.history")


def write_export(widget: Widget, name: str, text: str) -> Path | None:
    """`text` into the export folder as `name`: its path, or None (and why, told) when it cannot be written."""
    from ..screens.history import export_dir

    folder = export_dir(widget.app)
    path = folder / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        log.exception("export failed")
        widget.notify(f"Could not write {path}: {error}", severity="error")
        return None
    return path


def _journal(view: SessionView) -> SessionJournal | None:
    return next((r for r in view.session.recorders if isinstance(r, SessionJournal)), None)


def _facts_and_name(view: SessionView, suffix: str) -> tuple[dict, str]:
    """The export's header facts and file name: the journal's when the session has one."""
    from ..screens.history import export_name

    journal = _journal(view)
    if journal is not None:
        journal.journal.flush(wait=True)  # what the session said up to now, on disk
        info = journal.journal.session(journal.id)
        if info is not None:
            return info.header(), export_name(info, suffix)
    session = view.session
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return ({"agent": session.state.agent_name, "cwd": str(session.cwd), "created": time.time()},
            f"rat-{stamp}-live{suffix}")


def export_markdown(view: SessionView) -> None:
    from ...history.markdown import to_markdown

    facts, name = _facts_and_name(view, ".md")
    path = write_export(view, name, to_markdown(view.session.state, facts))
    if path is not None:
        view.notify(f"Markdown written to {path}", title="Exported", timeout=10)


def export_journal(view: SessionView) -> None:
    from ...history.records import dump_recording

    journal = _journal(view)
    if journal is None:
        view.notify("History is off for this session, so there is no journal to export; the Markdown export "
                    "still works.", severity="warning", timeout=8)
        return
    facts, name = _facts_and_name(view, ".jsonl")
    path = write_export(view, name, dump_recording(journal.journal.records(journal.id), facts))
    if path is not None:
        view.notify(f"Journal written to {path}; play it with: rat replay {path}", title="Exported", timeout=10)


def palette_commands(view: SessionView) -> Iterator[SystemCommand]:
    yield SystemCommand("Export the transcript as Markdown", "Write this session's transcript as a Markdown file",
                        lambda: export_markdown(view))
    yield SystemCommand("Export the journal", "Write this session's raw messages as a JSONL file that "
                        "`rat replay FILE` plays", lambda: export_journal(view))
