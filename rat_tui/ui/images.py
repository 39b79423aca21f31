"""How this terminal draws images (through `textual-image`), chosen once before the app takes the terminal.

textual-image asks the terminal what it supports (sixel in the device attributes, a kitty graphics
query) by writing to it and reading the answer from stdin: that is only possible before Textual starts
reading stdin, so `probe()` runs in `rat`'s main before the app. Where no graphics protocol answers,
images stay the `[image: …]` placeholder, as in any terminal without graphics.

Decoding (base64, PIL, downscaling) is `decode()`, which callers run in a thread.
"""

from __future__ import annotations

import base64
import binascii
import io
import logging
import os
import sys
from typing import Any

log = logging.getLogger("rat.images")

MODES = ("auto", "kitty", "sixel", "halfcell", "off")
"""`[images] mode`: auto asks the terminal; kitty (the kitty graphics protocol, also Ghostty and WezTerm),
sixel (foot, WezTerm, iTerm2 3.5+, Windows Terminal, xterm -ti vt340...), halfcell (coloured half blocks,
any truecolor terminal) force one; off always shows the placeholder."""
MAX_PIXELS = 2048  # an image is downscaled to this many pixels on its longer side before it is drawn
MAX_BYTES = 20 * 1024 * 1024

_renderer: str | None = None

# Terminals known to draw kitty graphics or sixel, by what they put in the environment. Asking the
# terminal costs up to 0.2 s (a query unanswered until its timeout), so "auto" asks only these; any other
# terminal can still be told with `[images] mode`.
GRAPHIC_TERMS = ("xterm-kitty", "xterm-ghostty", "foot", "foot-extra", "mlterm", "contour", "wezterm")
GRAPHIC_PROGRAMS = ("WezTerm", "iTerm.app", "ghostty", "kitty", "mintty", "contour", "rio")
GRAPHIC_MARKERS = ("KITTY_WINDOW_ID", "WEZTERM_EXECUTABLE", "GHOSTTY_RESOURCES_DIR", "KONSOLE_VERSION", "WT_SESSION")


def may_draw(env: dict[str, str]) -> bool:
    """Whether the terminal described by `env` is one worth asking about graphics."""
    if env.get("TERM_PROGRAM") == "textual":  # `rat serve`: xterm.js in a browser draws none
        return False
    return (env.get("TERM", "") in GRAPHIC_TERMS or env.get("TERM_PROGRAM", "") in GRAPHIC_PROGRAMS
            or any(env.get(name) for name in GRAPHIC_MARKERS))


def probe(mode: str) -> str | None:
    """Choose the renderer for `mode` (asking the terminal for "auto"); call before `App.run()`."""
    global _renderer
    _renderer = None
    if mode == "off":
        return None
    stdout = sys.__stdout__
    if mode == "auto" and (stdout is None or not stdout.isatty() or not may_draw(dict(os.environ))):
        return None
    try:
        from textual_image import renderable  # the terminal is asked here, once
        from textual_image.renderable.sixel import Image as Sixel
        from textual_image.renderable.tgp import Image as TGP
    except Exception as error:  # a terminal that answers nonsense, a missing Pillow: images stay placeholders
        log.warning("images: textual-image unavailable: %s", error)
        return None
    if mode == "auto":
        _renderer = "sixel" if renderable.Image is Sixel else "kitty" if renderable.Image is TGP else None
    else:
        _renderer = mode
    log.info("images: %s", _renderer or "placeholders (no graphics protocol answered)")
    return _renderer


def renderer() -> str | None:
    """"kitty", "sixel", "halfcell" or None (placeholders)."""
    return _renderer


def force(name: str | None) -> None:
    """Use this renderer whatever the terminal says (tests, and `[images] mode` other than auto)."""
    global _renderer
    _renderer = name


def widget_class(name: str) -> type:
    """The textual-image widget for a renderer name."""
    from textual_image.widget import HalfcellImage, SixelImage, TGPImage

    return {"kitty": TGPImage, "sixel": SixelImage, "halfcell": HalfcellImage}[name]


def cell_size() -> tuple[int, int]:
    """Pixels per terminal cell (width, height), as textual-image measured them."""
    try:
        from textual_image._terminal import get_cell_size

        size = get_cell_size()
        return size.width, size.height
    except Exception:
        return 10, 20


def decode(data: str | bytes) -> Any:
    """A PIL image from base64 text or raw bytes, fully loaded and at most MAX_PIXELS on a side.

    Runs in a thread (never on the UI's loop): decoding a screenshot takes tens of milliseconds.
    Raises ValueError with a readable reason for data that is not an image.
    """
    from PIL import Image, UnidentifiedImageError

    if isinstance(data, str):
        try:
            raw = base64.b64decode(data, validate=False)
        except (binascii.Error, ValueError) as error:
            raise ValueError(f"not base64: {error}") from error
    else:
        raw = data
    if len(raw) > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES // (1024 * 1024)} MB")
    try:
        image = Image.open(io.BytesIO(raw))
        image.load()
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as error:
        raise ValueError(f"cannot decode the image: {error}") from error
    if max(image.size) > MAX_PIXELS:
        image.thumbnail((MAX_PIXELS, MAX_PIXELS))
    if image.mode not in ("RGB", "RGBA"):
        image = image.convert("RGBA")
    return image
