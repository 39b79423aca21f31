"""The demo agent's session store: what session/load replays and session/list lists.

One append-only JSONL file per session id in a folder (env ``RAT_DEMO_STORE``, else
``demo-sessions`` in rat-tui's data dir), so a restarted demo agent can load the sessions of an
earlier process. Lines are ``{"meta": {...}}`` (the last one wins: cwd, title, updatedAt, config
values, usage) or ``{"update": {...}}`` (a session/update payload, in the order it was sent). A
line that does not parse is skipped. When the folder cannot be written the store keeps going in
memory only, and says so on stderr once.
"""

from __future__ import annotations

import json
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

KEEP = 200  # session files kept; the oldest beyond that are deleted when a new session starts
SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def default_folder() -> Path:
    env = os.environ.get("RAT_DEMO_STORE")
    if env:
        return Path(env).expanduser()
    from rat_tui import paths  # platformdirs: imported only here, the demo otherwise needs the stdlib alone

    return paths.data_dir() / "demo-sessions"


class DemoStore:
    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or default_folder()
        self.memory: dict[str, list[dict]] = {}  # session id -> lines, when the disk failed
        self.failed = False
        self.files: dict[str, Any] = {}  # open append handles, one per session written to

    def _path(self, session_id: str) -> Path | None:
        return self.folder / f"{session_id}.jsonl" if SAFE_ID.match(session_id) else None

    def _append(self, session_id: str, line: dict) -> None:
        path = self._path(session_id)
        if path is None:
            return
        if not self.failed:
            try:
                f = self.files.get(session_id)
                if f is None:
                    self.folder.mkdir(parents=True, exist_ok=True)
                    f = self.files[session_id] = path.open("a", encoding="utf-8")
                f.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")
                f.flush()  # a demo killed mid-turn still leaves a loadable session
                return
            except OSError as exc:
                self.failed = True
                print(f"rat-demo: cannot write sessions to {self.folder} ({exc}); keeping them in memory",
                      file=sys.stderr, flush=True)
        self.memory.setdefault(session_id, []).append(line)

    def _lines(self, session_id: str, meta_only: bool = False) -> list[dict] | None:
        """The session's lines: those on disk, then any kept in memory after the disk failed.

        `meta_only` skips parsing the update lines on disk (session/list needs the meta alone)."""
        path = self._path(session_id)
        lines: list[dict] = []
        try:
            text = path.read_text(encoding="utf-8", errors="replace") if path and path.is_file() else ""
        except OSError:
            text = ""
        for raw in text.splitlines():
            if meta_only and not raw.startswith('{"meta"'):
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if isinstance(line, dict):
                lines.append(line)
        lines += self.memory.get(session_id, [])
        return lines or None

    def create(self, session_id: str, meta: dict) -> None:
        self._append(session_id, {"meta": meta})
        self._prune()

    def set_meta(self, session_id: str, meta: dict) -> None:
        self._append(session_id, {"meta": meta})

    def append(self, session_id: str, update: dict) -> None:
        self._append(session_id, {"update": update})

    def load(self, session_id: str, meta_only: bool = False) -> tuple[dict, list[dict]] | None:
        """The session's last meta and every update recorded (none with `meta_only`), or None if it is unknown."""
        lines = self._lines(session_id, meta_only)
        if not lines:
            return None
        meta: dict = {}
        updates = []
        for line in lines:
            if isinstance(line.get("meta"), dict):
                meta = {**meta, **line["meta"]}
            elif isinstance(line.get("update"), dict):
                updates.append(line["update"])
        return (meta, updates) if meta.get("cwd") else None

    def sessions(self) -> list[dict]:
        """Every stored session's meta (sessionId, cwd, title, updatedAt, ...), the latest first."""
        ids = set(self.memory)
        if self.folder.is_dir():
            ids |= {p.stem for p in self.folder.glob("*.jsonl")}
        found = []
        for session_id in ids:
            loaded = self.load(session_id, meta_only=True)
            if loaded:
                found.append({**loaded[0], "sessionId": session_id})
        return sorted(found, key=lambda meta: str(meta.get("updatedAt") or ""), reverse=True)

    def _prune(self) -> None:
        if self.failed or not self.folder.is_dir():
            return
        try:
            files = sorted(self.folder.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
            for path in files[:-KEEP]:
                path.unlink()
        except OSError:
            pass
