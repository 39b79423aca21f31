"""Provides ImageView: one image drawn by the terminal (kitty graphics, sixel) sized to fit, or its placeholder.

The bytes are decoded in a thread (rat_tui/ui/images.py `decode`); until then, and wherever the terminal
cannot draw images, the caption line (`[image: image/png, 12 KB, 640×480]`) is all there is.
"""

from __future__ import annotations

import logging
from typing import Any

from textual import work
from textual.containers import Vertical
from textual.widgets import Static

from .. import images

log = logging.getLogger("rat.images")

MAX_ROWS = 40  # an image is never taller than this many rows


class ImageView(Vertical):
    DEFAULT_CSS = """
    ImageView { height: auto; width: 1fr; }
    ImageView > .caption { color: $text-muted; text-style: italic; height: auto; }
    ImageView > .image { margin: 0 0 1 0; }
    """

    def __init__(self, data: str | bytes, caption: str, *, mime: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data = data
        self.caption = caption
        # What the agent announced (its placeholder says it): only that format is decoded.
        self.mime = mime if mime is not None else images.announced_mime(caption)
        self.picture: Any = None
        """The decoded PIL image once ready (None until then, or when it cannot be drawn)."""
        self.drawn: Any = None
        """The textual-image widget, once mounted."""
        self.problem: str | None = None

    def compose(self):
        yield Static(self.caption, classes="caption", markup=False)

    def on_mount(self) -> None:
        if images.renderer() is not None:
            self.decode()

    @work(thread=True, exclusive=True, group="image-decode")
    def decode(self) -> None:
        try:
            picture = images.decode(self.data, self.mime)
        except ValueError as error:
            log.warning("image not shown: %s", error)
            self.app.call_from_thread(self._failed, str(error))
            return
        self.app.call_from_thread(self._draw, picture)

    def _failed(self, problem: str) -> None:
        self.problem = problem
        self.query_one(".caption", Static).update(f"{self.caption}  ({problem})")

    def _draw(self, picture: Any) -> None:
        name = images.renderer()
        if name is None or not self.is_mounted:
            return
        self.picture = picture
        widget = images.widget_class(name)(picture, classes="image")
        self.drawn = widget
        self._size_drawn()
        self.mount(widget)

    def on_resize(self) -> None:
        self._size_drawn()  # the pane opened or was resized: fit again

    def _size_drawn(self) -> None:
        if self.drawn is None or self.picture is None:
            return
        width, height = self._fit(self.picture.size)
        if (self.drawn.styles.width, self.drawn.styles.height) != (width, height):
            self.drawn.styles.width = width
            self.drawn.styles.height = height

    def _fit(self, pixels: tuple[int, int]) -> tuple[int, int]:
        """Cells for the image: its natural size, shrunk (keeping its shape) to the width here and MAX_ROWS."""
        cell_width, cell_height = images.cell_size()
        natural_w = max(1, round(pixels[0] / cell_width))
        natural_h = max(1, round(pixels[1] / cell_height))
        parent = self.parent
        room = self.content_size.width or (parent.content_size.width if parent is not None else 0)
        room = max(1, (room or self.app.size.width) - 1)
        scale = min(1.0, room / natural_w, MAX_ROWS / natural_h)
        return max(1, int(natural_w * scale)), max(1, int(natural_h * scale))


def show_new_image(preview: Any, refs: list[Any], seen: int) -> int:
    """The agent sent images since `seen`: the last one opens in the preview pane when the terminal can draw
    it (elsewhere the transcript's placeholder is all, as before). Returns the new count."""
    if refs[seen:] and images.renderer() is not None:
        ref = refs[-1]
        preview.show_image(ref.data, ref.placeholder, "Image from the agent")
    return len(refs)


def show_nearest_image(preview: Any, transcript: Any, refs: list[Any]) -> None:
    """`i`: the image of the transcript entry nearest the view (the last image of that entry)."""
    by_key = {ref.key: ref for ref in refs}
    key = transcript.nearest_key(by_key) if by_key else None
    if key is None:
        preview.notify("No image to show.", timeout=2)
        return
    ref = by_key[key]
    preview.show_image(ref.data, ref.placeholder, "Image from the agent")
