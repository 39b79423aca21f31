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


# The formats rat shows, by the mime types ACP agents send for them (an ImageContent's `mimeType`; the
# models' own image inputs are these four). No other Pillow plugin ever sees an agent's bytes: EPS would
# run Ghostscript on them, and the rarer plugins are attack surface for nothing drawn.
FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/jpg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}
ALLOWED = ("PNG", "JPEG", "GIF", "WEBP")
# Pixels an image may have to be decoded at all, read from its header before any is decoded: more than an
# 8K screen (33 MP), far below Pillow's own bomb limit (179 MP, about 700 MB as RGBA).
MAX_DECODE_PIXELS = 40_000_000


def announced_mime(caption: str) -> str | None:
    """The mime type a placeholder (`[image: image/png, 12 KB, …]`, state/media.py) announces, if any."""
    if caption.startswith("[image: "):
        mime = caption[len("[image: "):].split(",", 1)[0].split("]", 1)[0].strip().lower()
        return mime if "/" in mime else None
    return None


def decode(data: str | bytes, mime: str | None = None) -> Any:
    """A PIL image from base64 text or raw bytes, fully loaded and at most MAX_PIXELS on a side.

    Only PNG, JPEG, GIF and WEBP are decoded; with `mime` (what the agent announced), only that format.
    The size is read from the header first: an image over MAX_DECODE_PIXELS is refused before decoding.
    Runs in a thread (never on the UI's loop): decoding a screenshot takes tens of milliseconds.
    Raises ValueError with a readable reason for data that is not an image rat shows.
    """
    from PIL import Image, UnidentifiedImageError

    formats: tuple[str, ...] = ALLOWED
    if mime is not None:
        wanted = FORMATS.get(mime.lower())
        if wanted is None:
            raise ValueError(f"refused: {mime} is not a format rat shows (PNG, JPEG, GIF, WEBP)")
        formats = (wanted,)
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
        image = Image.open(io.BytesIO(raw), formats=formats)
    except UnidentifiedImageError as error:
        what = f"not {mime}" if mime is not None else "not a PNG, JPEG, GIF or WEBP image"
        raise ValueError(f"refused: the bytes are {what}{_sniffed(raw)}") from error
    except Image.DecompressionBombError as error:  # past Pillow's own limit, checked in open: the same refusal
        from ..state.media import image_dimensions

        raise ValueError(_too_big(image_dimensions(raw[:64]) or (0, 0))) from error
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot decode the image: {error}") from error
    if image.size[0] * image.size[1] > MAX_DECODE_PIXELS:
        image.close()
        raise ValueError(_too_big(image.size))
    try:
        if max(image.size) > MAX_PIXELS:
            image.draft("RGB", (MAX_PIXELS, MAX_PIXELS))  # (JPEG: decoded at a fraction of its size)
        image.load()
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
        raise ValueError(f"cannot decode the image: {error}") from error
    if max(image.size) > MAX_PIXELS:
        image.thumbnail((MAX_PIXELS, MAX_PIXELS))
    if image.mode not in ("RGB", "RGBA"):
        image = image.convert("RGBA")
    return image


def _too_big(size: tuple[int, int]) -> str:
    return f"refused: {size[0]}×{size[1]} is more than {MAX_DECODE_PIXELS // 1_000_000} megapixels"


_MAGIC = ((b"%!PS", "PostScript"), (b"\xc5\xd0\xd3\xc6", "EPS"), (b"\x89PNG", "PNG"), (b"\xff\xd8", "JPEG"),
          (b"GIF8", "GIF"), (b"BM", "BMP"), (b"%PDF", "PDF"), (b"II*\x00", "TIFF"), (b"MM\x00*", "TIFF"))


def _sniffed(raw: bytes) -> str:
    """`` (they look like EPS)`` when the first bytes name a format."""
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return " (they look like WEBP)"
    for magic, name in _MAGIC:
        if raw.startswith(magic):
            return f" (they look like {name})"
    return ""
