"""Provides cheap facts about media content for display: byte size, image dimensions, annotation badges.

Nothing here decodes a whole image: dimensions come from the first bytes of PNG, GIF, JPEG and WebP
headers, so a placeholder for a 10 MB screenshot costs microseconds. No Textual, no I/O.
"""

from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass
from typing import Any

# Base64 characters decoded to find a JPEG's frame header (it may follow EXIF data and thumbnails).
JPEG_SCAN_CHARS = 256 * 1024


def format_size(size: int) -> str:
    """12 B, 12 KB, 1.5 MB (1024-based, as file managers show)."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def base64_size(data: str) -> int:
    """The decoded size of base64 text without decoding it."""
    data = data.strip()
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def image_dimensions(head: bytes) -> tuple[int, int] | None:
    """(width, height) from the first bytes of a PNG, GIF, JPEG or WebP file, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24 and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return struct.unpack("<HH", head[6:10])
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP" and len(head) >= 30:
        chunk = head[12:16]
        if chunk == b"VP8X":
            return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
        if chunk == b"VP8 ":
            width, height = struct.unpack("<HH", head[26:30])
            return width & 0x3FFF, height & 0x3FFF
        if chunk == b"VP8L" and len(head) >= 25:
            bits = int.from_bytes(head[21:25], "little")
            return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if head.startswith(b"\xff\xd8"):
        return _jpeg_dimensions(head)
    return None


def _jpeg_dimensions(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        # SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        i += 2 + length
    return None


def base64_head(data: str, chars: int) -> bytes:
    """Decode only the first `chars` characters (rounded down to a whole quantum) of base64 text."""
    piece = data[: chars - chars % 4]
    try:
        return base64.b64decode(piece, validate=False)
    except (binascii.Error, ValueError):
        return b""


def media_placeholder(kind: str, mime: str, data: str | None, uri: str | None = None) -> str:
    """`[image: image/png, 12 KB, 640×480]` for an image block (audio: type and size)."""
    facts = [mime or "unknown type"]
    if isinstance(data, str) and data:
        facts.append(format_size(base64_size(data)))
        if kind == "image":
            head = base64_head(data, 64)
            size = image_dimensions(head)
            if size is None and head.startswith(b"\xff\xd8"):
                size = image_dimensions(base64_head(data, JPEG_SCAN_CHARS))
            if size is not None:
                facts.append(f"{size[0]}×{size[1]}")
    if uri:
        facts.append(uri)
    return f"[{kind}: {', '.join(facts)}]"


def annotation_badge(annotations: Any) -> str:
    """`for user · priority 0.8 · modified 2025-01-01` from an Annotations object (dict), or ""."""
    if not isinstance(annotations, dict):
        return ""
    bits = []
    audience = annotations.get("audience")
    if isinstance(audience, list) and audience:
        bits.append("for " + " & ".join(str(a) for a in audience))
    priority = annotations.get("priority")
    if isinstance(priority, (int, float)) and not isinstance(priority, bool):
        bits.append(f"priority {priority:g}")
    modified = annotations.get("lastModified")
    if isinstance(modified, str) and modified:
        bits.append(f"modified {modified[:10]}")
    return " · ".join(bits)


@dataclass(frozen=True)
class ImageRef:
    """An image the agent sent, as it came (base64): decoded only when shown, off the UI thread."""

    key: str
    """The transcript entry it belongs to (a message or a tool call)."""
    mime: str
    data: str
    placeholder: str
    """`[image: image/png, 12 KB, 640×480]`: shown where the terminal cannot draw images."""


def collect_images(state: Any, key: str, blocks: list[Any]) -> None:
    """Record the image blocks of `blocks` (dicts) for entry `key` in `state.images`, once each."""
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "image":
            continue
        data = block.get("data")
        if not isinstance(data, str) or not data:
            continue
        mime = str(block.get("mimeType") or "")
        if any(image.key == key and image.data == data for image in state.images[-8:]):
            continue  # a tool call update repeating its content
        state.images.append(ImageRef(key, mime, data, media_placeholder("image", mime, data, block.get("uri"))))
