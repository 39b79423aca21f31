"""Provides PromptHistory: the prompts sent in a project, newest last, kept on disk per project so that
↑/↓ in an empty composer walk them after a restart too.

One JSON line per prompt in `<data dir>/prompt-history/<hash of the project directory>.jsonl`; the
file is appended to, and cut back to the newest LIMIT prompts when it grows past twice that. A file
that cannot be read or written leaves the history in memory only (logged), never an error.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from ... import paths

log = logging.getLogger("rat.ui.history")
LIMIT = 500


def history_file(cwd: Path) -> Path:
    digest = hashlib.sha256(os.path.abspath(cwd).encode()).hexdigest()[:20]
    return paths.data_dir() / "prompt-history" / f"{digest}.jsonl"


class PromptHistory:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.items: list[str] = []
        if path is not None and path.exists():
            try:
                for line in path.read_text(encoding="utf-8").splitlines():
                    try:
                        text = json.loads(line).get("text")
                    except (ValueError, AttributeError):
                        continue  # a torn last line after a crash
                    if isinstance(text, str) and text.strip():
                        self.items.append(text)
            except OSError as error:
                log.warning("cannot read the prompt history %s: %s", path, error)
        self.items = self.items[-LIMIT:]

    def add(self, text: str) -> None:
        if not text.strip() or (self.items and self.items[-1] == text):
            return
        self.items.append(text)
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if len(self.items) > 2 * LIMIT:
                self.items = self.items[-LIMIT:]
                lines = "".join(json.dumps({"text": t}) + "\n" for t in self.items)
                self.path.write_text(lines, encoding="utf-8")
            else:
                with self.path.open("a", encoding="utf-8") as file:
                    file.write(json.dumps({"text": text}) + "\n")
        except OSError as error:
            log.warning("cannot write the prompt history %s: %s", self.path, error)
            self.path = None
