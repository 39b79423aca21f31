"""Hostile images from an agent over real pipes: only PNG, JPEG, GIF and WEBP are decoded, only as the
format announced (EPS bytes labelled image/png never reach Ghostscript), and an image's size is read from
its header and refused past the pixel budget before anything is decoded (a decompression bomb)."""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from PIL import Image

from rat_tui.app import RatApp
from rat_tui.ui import images
from rat_tui.ui.widgets.file_preview import FilePreview

from .helpers.app import scripted, until

pytestmark = pytest.mark.slow

EPS = (b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n"
       b"newpath 0 0 moveto 10 10 lineto stroke showpage\n%%EOF\n")


def image_turn(data: bytes, mime: str) -> dict:
    return {"turns": [[
        {"update": {"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "image", "mimeType": mime, "data": base64.b64encode(data).decode()}}},
        {"chunk": "\n\nDone."},
    ]]}


def png_bomb(width: int, height: int, rows: int | None = None) -> bytes:
    """A grey PNG of width×height whose pixels are all zero: a few KB per 100 MP compressed. With `rows`,
    only that many rows of data follow the header (the size is all a check before decoding reads)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    packer = zlib.compressobj(9)
    row = b"\0" * (width + 1)
    data = b"".join(packer.compress(row) for _ in range(height if rows is None else rows)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


@pytest.fixture
def fake_gs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `gs` first on PATH that only leaves a marker file: any Ghostscript run would show."""
    folder = tmp_path / "bin"
    folder.mkdir()
    marker = tmp_path / "gs-ran"
    gs = folder / "gs"
    gs.write_text(f"#!/bin/sh\necho \"$@\" > {marker}\nexit 1\n")
    gs.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    from PIL import EpsImagePlugin

    monkeypatch.setattr(EpsImagePlugin, "gs_binary", None)  # (Pillow looks gs up once per process)
    return marker


async def test_eps_bytes_labelled_png_are_refused_and_ghostscript_never_runs(tmp_path: Path, fake_gs: Path) -> None:
    images.force("halfcell")
    try:
        app = RatApp(scripted(image_turn(EPS, "image/png"), tmp_path), tmp_path)
        async with app.run_test(size=(120, 36)) as pilot:
            await until(pilot, lambda: app.session.state.status == "ready", "ready")
            await pilot.press(*"show me", "enter")
            preview = app.query_one(FilePreview)
            await until(pilot, lambda: preview.image is not None and preview.image.problem is not None, "the refusal")
            assert preview.image.problem == "refused: the bytes are not image/png (they look like PostScript)"
            assert preview.image.picture is None and preview.image.drawn is None
            caption = str(preview.image.query_one(".caption").render())
            assert caption.startswith("[image: image/png") and "refused: the bytes are not image/png" in caption
    finally:
        images.force(None)
    assert not fake_gs.exists()


def test_only_the_allowed_formats_decode_and_only_as_announced(fake_gs: Path) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 4), (1, 2, 3)).save(buffer, "GIF")
    gif = buffer.getvalue()
    assert images.decode(gif, "image/gif").size == (8, 4)
    assert images.decode(gif).size == (8, 4)  # a file from disk: any of the four
    with pytest.raises(ValueError, match=r"^refused: the bytes are not image/png \(they look like GIF\)$"):
        images.decode(gif, "image/png")
    with pytest.raises(ValueError, match=r"^refused: image/x-eps is not a format rat shows"):
        images.decode(EPS, "image/x-eps")
    with pytest.raises(ValueError, match=r"^refused: the bytes are not a PNG, JPEG, GIF or WEBP image"):
        images.decode(EPS)
    buffer = io.BytesIO()
    Image.new("RGB", (8, 4)).save(buffer, "BMP")
    with pytest.raises(ValueError, match=r"look like BMP"):
        images.decode(buffer.getvalue())
    assert not fake_gs.exists()


MEASURE = """
import resource, sys, json
from rat_tui.ui import images
data = open(sys.argv[1], "rb").read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    images.decode(data, "image/png")
    outcome = "decoded"
except ValueError as error:
    outcome = str(error)
print(json.dumps({"outcome": outcome, "before": before, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


@pytest.mark.parametrize("width, height, rows", [(60000, 60000, 64), (13000, 13000, None)])
def test_a_decompression_bomb_is_refused_from_its_header(tmp_path: Path, width: int, height: int, rows) -> None:
    """60000×60000 is past Pillow's own limit too; 13000×13000 (169 MP, whole) is just under it, where
    Pillow alone would decode all of it (about 170 MB as grey, more once converted for drawing)."""
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(png_bomb(width, height, rows))
    assert bomb.stat().st_size < 400_000
    done = subprocess.run([sys.executable, "-c", MEASURE, str(bomb)], capture_output=True, text=True, timeout=60)
    result = json.loads(done.stdout)
    assert result["outcome"] == f"refused: {width}×{height} is more than 40 megapixels", done.stderr
    grew_mb = (result["peak"] - result["before"]) / 1024
    print(f"{width}x{height} ({bomb.stat().st_size // 1024} KB): peak RSS {result['peak'] // 1024} MB, "
          f"+{grew_mb:.1f} MB while refused")
    assert grew_mb < 20
