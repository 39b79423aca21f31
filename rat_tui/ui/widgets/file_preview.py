"""Provides FilePreview: the file a tool call touches, highlighted around its line (follow-along)."""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import Callable
from pathlib import Path

from rich.console import Group
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ...protocol.sanitize import clean

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")
CONTEXT_LINES = 300  # lines shown on each side of the target line: big files stay cheap
MAX_BYTES = 4 * 1024 * 1024


def read_window(path: Path, line: int | None) -> tuple[str, int, int]:
    """(text of the window, its first line number, the file's line count); raises OSError."""
    if path.stat().st_size > MAX_BYTES:
        raise OSError(f"file is larger than {MAX_BYTES // (1024 * 1024)} MB")
    return text_window(path.read_text(encoding="utf-8", errors="replace"), line)


def text_window(text: str, line: int | None) -> tuple[str, int, int]:
    """`read_window` of a file's text."""
    lines = text.splitlines()
    target = max(1, line or 1)
    start = max(1, target - CONTEXT_LINES)
    end = min(len(lines), target + CONTEXT_LINES)
    return clean("\n".join(lines[start - 1 : end])), start, len(lines)


class FilePreview(VerticalScroll):
    """Hidden until asked for; `show(path, line)` loads the file off the UI thread and scrolls to the line."""

    DEFAULT_CSS = """
    FilePreview {
        width: 45%;
        border-left: solid $panel-lighten-2;
        background: $surface;
        display: none;
    }
    FilePreview.-open { display: block; }
    FilePreview > .title { background: $panel; color: $foreground; padding: 0 1; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.path: Path | None = None
        self.line: int | None = None
        self.follow = False
        self._title = Static("", classes="title", markup=False)
        self._body = Static("", markup=False)
        self._load: asyncio.Task[None] | None = None
        self.shown_text = ""
        """The source lines on show (tests read it)."""
        self.image = None
        """The ImageView on show (an image file, or an image from the agent), else None."""
        self.remote: tuple[str, Callable[[str], str | None]] | None = None
        """A remote agent's (host, its file's text as its diffs report it): no local file is read then."""

    def compose(self):
        yield self._title
        yield self._body

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def toggle(self) -> None:
        self.toggle_class("-open")

    def show(self, path: str, line: int | None) -> None:
        self.add_class("-open")
        self.path, self.line = Path(path), line
        if self._load is not None and not self._load.done():
            self._load.cancel()
        self._load = asyncio.create_task(self._show(Path(path), line))

    def show_image(self, data: str | bytes, caption: str, title: str) -> None:
        """An image (base64 text or bytes): drawn when the terminal can, else its placeholder."""
        self.add_class("-open")
        self.path, self.line = None, None
        if self._load is not None and not self._load.done():
            self._load.cancel()
        self._title.update(clean(title))
        self._put_image(data, clean(caption))

    def _put_image(self, data: str | bytes, caption: str) -> None:
        from .. import images
        from .image_view import ImageView

        self._drop_image()
        self.shown_text = ""
        hint = "" if images.renderer() else "this terminal draws no images (see [images] in config.toml)"
        self._body.update(Text(hint, style="dim italic"))
        self.image = ImageView(data, caption)
        self.mount(self.image, before=self._body)

    def _drop_image(self) -> None:
        if self.image is not None:
            self.image.remove()
            self.image = None

    async def _show(self, path: Path, line: int | None) -> None:
        label = f"{path}" + (f":{line}" if line else "") + ("  · following" if self.follow else "")
        self._title.update(clean(label))
        mime = mimetypes.guess_type(path.name)[0]
        if mime in IMAGE_TYPES and not self.remote:
            await self._show_image_file(path, mime)
            return
        self._drop_image()
        try:
            text, start, total = self._reported(path, line) if self.remote else \
                await asyncio.to_thread(read_window, path, line)
        except OSError as error:
            self._body.update(Text(f"Cannot show {path}: {error.strerror or error}", style="italic"))
            return
        self.shown_text = text
        from rich.syntax import Syntax  # Pygments under it: not before the first frame

        theme = "monokai" if self.app.current_theme.dark else "default"
        syntax = Syntax(
            text,
            Syntax.guess_lexer(str(path), text[:2000]),
            theme=theme,
            line_numbers=True,
            start_line=start,
            highlight_lines={line} if line else set(),
            word_wrap=False,
        )
        footer = Text(f"{total} lines", style="dim")
        self._body.update(Group(syntax, footer))
        if line:
            self.call_after_refresh(self.scroll_to, 0, max(0, line - start - 5), animate=False)

    def _reported(self, path: Path, line: int | None) -> tuple[str, int, int]:
        assert self.remote is not None
        host, reported = self.remote
        text = reported(str(path))
        if text is None:
            raise OSError(f"the file is on {host}, where the agent runs; rat shows what the agent's diffs report "
                          "of it, and none has named it")
        return text_window(text, line)

    async def _show_image_file(self, path: Path, mime: str) -> None:
        from ...state.media import format_size, image_dimensions

        def read() -> bytes:
            from .. import images

            if path.stat().st_size > images.MAX_BYTES:
                raise OSError(f"image is larger than {images.MAX_BYTES // (1024 * 1024)} MB")
            return path.read_bytes()

        try:
            data = await asyncio.to_thread(read)
        except OSError as error:
            self._drop_image()
            self._body.update(Text(f"Cannot show {path}: {error.strerror or error}", style="italic"))
            return
        size = image_dimensions(data[:256 * 1024])
        facts = [mime, format_size(len(data))] + ([f"{size[0]}×{size[1]}"] if size else [])
        self._put_image(data, f"[image: {', '.join(facts)}]")
