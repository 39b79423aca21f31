"""Provides prompt attachments: the files an `@` can name, and the content blocks a prompt carries (no Textual).

A prompt's attachments are the `@path` mentions in its text (`@"a b.txt"` for paths with spaces) that
name existing files, so that a prompt edited back from the queue, typed by hand or pasted keeps its
attachments. What each becomes follows the agent's `promptCapabilities`:

- a text file: an embedded `resource` (text, mimeType, file URI) when `embeddedContext` is on and it
  is at most EMBED_LIMIT bytes, else a `resource_link` (uri, name, size, mimeType), which every
  agent must accept;
- an image or audio file: an `image` / `audio` block only when the agent accepts that kind; otherwise
  the prompt is refused whole, with the reason, and nothing is sent.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..state.media import format_size

EMBED_LIMIT = 1024 * 1024  # bytes of text embedded as a resource; larger files go as links
MEDIA_LIMIT = 20 * 1024 * 1024  # bytes of an image or audio file sent inline
FILE_CAP = 20_000  # files offered by the picker
SKIPPED_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".mypy_cache",
                ".pytest_cache", ".ruff_cache", ".tox", ".idea"}
# Types mimetypes gets wrong or does not know, for source files.
MIME_OVERRIDES = {".ts": "text/x-typescript", ".tsx": "text/x-typescript", ".md": "text/markdown",
                  ".toml": "application/toml", ".rs": "text/x-rust", ".go": "text/x-go"}
MENTION = re.compile(r'(?:(?<=\s)|^)@(?:"([^"\n]+)"|([^\s"]+))')
CAPABILITY_OF = {"image": "image", "audio": "audio"}


# -- listing files ------------------------------------------------------------------------------


def list_files(cwd: Path, cap: int = FILE_CAP) -> list[str]:
    """Files under `cwd` (relative, `/`-separated) that git would not ignore, at most `cap`."""
    files = _git_files(cwd, cap)
    return files if files is not None else _walk(cwd, cap)


def _git_files(cwd: Path, cap: int) -> list[str] | None:
    try:
        done = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=cwd, capture_output=True, timeout=10, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    names = [n for n in done.stdout.decode("utf-8", "replace").split("\0") if n]
    # A deleted but still tracked file is listed too: keep only what exists.
    return [n for n in dict.fromkeys(names) if (cwd / n).is_file()][:cap]


class IgnoreRules:
    """The patterns of the .gitignore files met on the way down (root first); the last match wins."""

    def __init__(self) -> None:
        self.rules: list[tuple[str, re.Pattern[str], bool, bool]] = []  # (base, regex, negated, dir only)

    def add_file(self, base: str, path: Path) -> None:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
        for line in lines:
            line = line.rstrip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            line = line[1:] if negated else line
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            self.rules.append((base, _glob_regex(line.lstrip("/"), anchored), negated, dir_only))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        result = False
        for base, regex, negated, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if base and not rel.startswith(base + "/"):
                continue
            if regex.match(rel[len(base) + 1:] if base else rel):
                result = not negated
        return result


def _glob_regex(pattern: str, anchored: bool) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) if c not in "[]" else c)
        i += 1
    body = "".join(out)
    return re.compile(("" if anchored else "(?:.*/)?") + body + "$")


def _walk(cwd: Path, cap: int) -> list[str]:
    rules = IgnoreRules()
    found: list[str] = []
    for root, dirs, files in os.walk(cwd):
        rel_root = os.path.relpath(root, cwd).replace(os.sep, "/")
        rel_root = "" if rel_root == "." else rel_root
        if ".gitignore" in files:
            rules.add_file(rel_root, Path(root) / ".gitignore")
        join = (lambda name, base=rel_root: f"{base}/{name}") if rel_root else (lambda name: name)
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not rules.ignored(join(d), True))
        for name in sorted(files):
            rel = join(name)
            if not rules.ignored(rel, False):
                found.append(rel)
                if len(found) >= cap:
                    return found
    return found


def match_paths(paths: list[str], query: str, limit: int = 50) -> list[str]:
    """Paths for an `@query`: name prefix, then name contains, then path contains, then in-order letters."""
    if not query:
        return paths[:limit]
    q = query.lower()
    ranked: list[tuple[int, int, str]] = []
    letters = re.compile(".*?".join(re.escape(ch) for ch in q))
    for path in paths:
        lowered = path.lower()
        name = lowered.rsplit("/", 1)[-1]
        if name.startswith(q):
            rank = 0
        elif q in name:
            rank = 1
        elif q in lowered:
            rank = 2
        elif letters.search(lowered):
            rank = 3
        else:
            continue
        ranked.append((rank, len(path), path))
    ranked.sort()
    return [path for _, _, path in ranked[:limit]]


# -- what a file is ------------------------------------------------------------------------------


def mime_type(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix in MIME_OVERRIDES:
        return MIME_OVERRIDES[suffix]
    return mimetypes.guess_type(path.name)[0]


def media_kind(path: Path) -> str | None:
    """"image" or "audio" for files sent as media blocks, else None (sent as a resource)."""
    mime = mime_type(path) or ""
    if mime.startswith("image/") and mime != "image/svg+xml":  # SVG is text: embed it
        return "image"
    if mime.startswith("audio/"):
        return "audio"
    return None


def accepts(capabilities: dict[str, Any] | None, kind: str) -> bool:
    """Whether the agent's promptCapabilities allow `kind` (image, audio, embeddedContext)."""
    prompt = (capabilities or {}).get("promptCapabilities")
    return isinstance(prompt, dict) and prompt.get(kind) is True


def refusal(kind: str, agent: str, name: str) -> str:
    """Why an image or audio file cannot go to this agent."""
    return (f"{agent} does not accept {kind} content in prompts (promptCapabilities.{CAPABILITY_OF[kind]} is off), "
            f"so {name} cannot be attached.")


def mention_text(rel: str) -> str:
    """How the picker writes a path into the prompt."""
    return f'@"{rel}"' if any(ch.isspace() for ch in rel) or '"' in rel else f"@{rel}"


def display_path(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def mentions(text: str, cwd: Path) -> list[Path]:
    """The existing files that `@path` mentions in `text` name (relative to `cwd`, or absolute), once each."""
    found: dict[Path, None] = {}
    for match in MENTION.finditer(text):
        raw = (match.group(1) or match.group(2)).rstrip(".,;:!?)")
        path = Path(os.path.expanduser(raw))
        path = path if path.is_absolute() else cwd / path
        try:
            if path.is_file():
                found[Path(os.path.abspath(path))] = None
        except OSError:
            continue
    return list(found)


def pasted_path(text: str, cwd: Path) -> Path | None:
    """A paste that is just one existing file's path (quoted, `file://`, or with `\\ ` escapes), else None."""
    raw = text.strip()
    if not raw or "\n" in raw or len(raw) > 4096:
        return None
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        raw = raw[1:-1]
    if raw.startswith("file://"):
        from urllib.parse import unquote, urlparse

        raw = unquote(urlparse(raw).path)
    raw = raw.replace("\\ ", " ")
    path = Path(os.path.expanduser(raw))
    path = path if path.is_absolute() else cwd / path
    try:
        return Path(os.path.abspath(path)) if path.is_file() else None
    except OSError:
        return None


# -- building the prompt -------------------------------------------------------------------------


@dataclass
class BuiltPrompt:
    """The blocks to send (None when refused), the chips to show, notices, and why it was refused."""

    blocks: list[dict[str, Any]] | None
    chips: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    refused: str | None = None


def _media_refusal(kind: str, size: int, name: str, capabilities: dict[str, Any] | None, agent: str) -> str | None:
    """Why an image or audio attachment stops the whole prompt (not accepted, too large), or None."""
    if not accepts(capabilities, kind):
        return f"Not sent: {refusal(kind, agent, name)} Remove it to send."
    if size > MEDIA_LIMIT:
        return f"Not sent: {name} is {format_size(size)}; images and audio go up to {format_size(MEDIA_LIMIT)}."
    return None


def prompt_refusal(text: str, cwd: Path, capabilities: dict[str, Any] | None, agent: str = "The agent") -> str | None:
    """build_prompt's refusal from file types and sizes alone, reading no file (a prompt being queued)."""
    for path in mentions(text, cwd):
        kind = media_kind(path)
        if kind is None:
            continue
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if (why := _media_refusal(kind, size, display_path(path, cwd), capabilities, agent)) is not None:
            return why
    return None


def build_prompt(text: str, cwd: Path, capabilities: dict[str, Any] | None, agent: str = "The agent") -> BuiltPrompt:
    """The `session/prompt` blocks for `text` and its `@` attachments, as this agent accepts them."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    built = BuiltPrompt(blocks)
    for path in mentions(text, cwd):
        name = display_path(path, cwd)
        kind = media_kind(path)
        try:
            size = path.stat().st_size
        except OSError as error:
            built.notices.append(f"Could not attach {name}: {error.strerror or error}.")
            continue
        if kind is not None:
            if (why := _media_refusal(kind, size, name, capabilities, agent)) is not None:
                return BuiltPrompt(None, refused=why)
            try:
                data = base64.b64encode(path.read_bytes()).decode("ascii")
            except OSError as error:
                return BuiltPrompt(None, refused=f"Not sent: could not read {name}: {error.strerror or error}.")
            block = {"type": kind, "mimeType": mime_type(path) or "application/octet-stream", "data": data}
            if kind == "image":
                block["uri"] = path.as_uri()
            blocks.append(block)
            built.chips.append(f"{'🖼' if kind == 'image' else '🔊'} {name}")
            continue
        embedded = _embedded(path, size) if accepts(capabilities, "embeddedContext") else None
        if embedded is not None:
            blocks.append(embedded)
            built.chips.append(f"📎 {name}")
            continue
        if accepts(capabilities, "embeddedContext"):
            why = f"larger than {format_size(EMBED_LIMIT)}" if size > EMBED_LIMIT else "not text"
            built.notices.append(f"{name} is {why}: sent as a link the agent can read, not embedded.")
        link: dict[str, Any] = {"type": "resource_link", "uri": path.as_uri(), "name": path.name, "size": size}
        if mime := mime_type(path):
            link["mimeType"] = mime
        blocks.append(link)
        built.chips.append(f"🔗 {name}")
    return built


def _embedded(path: Path, size: int) -> dict[str, Any] | None:
    """An embedded text resource, or None when the file is too large or not UTF-8 text."""
    if size > EMBED_LIMIT:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    resource: dict[str, Any] = {"uri": path.as_uri(), "text": text}
    resource["mimeType"] = mime_type(path) or "text/plain"
    return {"type": "resource", "resource": resource}
