"""Images from the agent and image files in the preview: drawn through textual-image where the terminal can
(a renderer is forced here, as `[images] mode` does), the `[image: …]` placeholder elsewhere; decoded off the loop."""

from __future__ import annotations

import base64
import io
import threading
from pathlib import Path

import pytest
from PIL import Image

from rat_tui.agents.spec import AgentSpec
from rat_tui.app import RatApp
from rat_tui.config import Config, ImagesConfig
from rat_tui.ui import images
from rat_tui.ui.widgets.file_preview import FilePreview
from rat_tui.ui.widgets.image_view import ImageView

from .helpers.agents import scripted_argv
from .helpers.app import until

pytestmark = pytest.mark.slow


def png(width: int, height: int, colour=(200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, "PNG")
    return buffer.getvalue()


def image_turn(data: bytes) -> dict:
    encoded = base64.b64encode(data).decode()
    return {"turns": [[
        {"chunk": "Here is the screenshot:\n\n"},
        {"update": {"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "image", "mimeType": "image/png", "data": encoded}}},
        {"chunk": "\n\nDone."},
    ]]}


def scripted(script: dict, tmp_path: Path) -> AgentSpec:
    return AgentSpec(name="pictures", argv=scripted_argv(script, tmp_path), env={}, is_demo=False)


@pytest.fixture
def renderer():
    """Force a renderer for one test (as `[images] mode = "kitty"` does); back to none afterwards."""
    yield images.force
    images.force(None)


@pytest.fixture
def decode_threads(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """The threads `images.decode` ran in (the real decode runs; this only notes where)."""
    seen: list[threading.Thread] = []
    real = images.decode

    def noting(data, mime=None):
        seen.append(threading.current_thread())
        return real(data, mime)

    monkeypatch.setattr(images, "decode", noting)
    return seen


@pytest.mark.parametrize("name", ["kitty", "sixel", "halfcell"])
async def test_an_image_from_the_agent_is_drawn_sized_to_fit_and_decoded_off_the_loop(
        tmp_path: Path, renderer, decode_threads, name: str) -> None:
    renderer(name)
    app = RatApp(scripted(image_turn(png(1200, 600)), tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press(*"show me", "enter")
        preview = app.query_one(FilePreview)
        await until(pilot, lambda: preview.image is not None and preview.image.drawn is not None, "the image drawn")
        view = preview.image
        assert type(view.drawn) is images.widget_class(name)
        assert view.caption.startswith("[image: image/png, ") and view.caption.endswith(" KB, 1200×600]")
        # 1200 px at textual-image's default 10 px cells is 120 cells: shrunk to the pane, shape kept
        width, height = view.drawn.styles.width.value, view.drawn.styles.height.value
        assert width <= preview.content_size.width and abs(width / height - 1200 / 10 / (600 / 20)) < 0.2
        assert decode_threads and all(t is not threading.main_thread() for t in decode_threads)
        transcript_text = "".join(e.text for e in app.session.state.entries if hasattr(e, "parts"))
        assert f"*{view.caption}*" in transcript_text  # the transcript keeps its line


async def test_without_graphics_the_placeholder_stays_and_nothing_is_decoded(tmp_path: Path, decode_threads) -> None:
    images.force(None)
    app = RatApp(scripted(image_turn(png(64, 32)), tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press(*"show me", "enter")
        await until(pilot, lambda: "Done." in app.session.state.entries[-1].text, "the answer")
        await until(pilot, lambda: app.session.state.status == "ready", "the turn's end")
        transcript = app.query_one("Transcript")
        await until(pilot, lambda: "[image: image/png" in transcript.plain_text, "the placeholder")
        assert not app.query(ImageView) and decode_threads == []
        # `i` on the transcript still shows what there is: the placeholder, with the reason
        app.query_one("Transcript").focus()
        await pilot.press("i")
        preview = app.query_one(FilePreview)
        await until(pilot, lambda: preview.image is not None, "the preview")
        assert preview.image.drawn is None and "draws no images" in str(preview._body.render())


async def test_an_image_file_in_the_preview_is_drawn(tmp_path: Path, renderer, decode_threads) -> None:
    renderer("halfcell")
    (tmp_path / "shot.png").write_bytes(png(300, 200))
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    app = RatApp(scripted({}, tmp_path), tmp_path, config=Config(images=ImagesConfig(mode="halfcell")))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        preview = app.query_one(FilePreview)
        preview.show(str(tmp_path / "shot.png"), None)
        await until(pilot, lambda: preview.image is not None and preview.image.drawn is not None, "the image file")
        assert preview.image.caption.startswith("[image: image/png, ") and preview.image.caption.endswith("300×200]")
        preview.show(str(tmp_path / "broken.png"), None)
        await until(pilot, lambda: preview.image is not None and preview.image.problem is not None, "the refusal")
        assert "cannot decode the image" in preview.image.problem and preview.image.drawn is None
        preview.show(str(Path(__file__)), 3)  # back to text: the image goes
        await until(pilot, lambda: "Images from the agent" in preview.shown_text, "the source")
        assert preview.image is None


def test_auto_asks_only_terminals_that_draw_images() -> None:
    assert images.may_draw({"TERM": "xterm-kitty"}) and images.may_draw({"TERM_PROGRAM": "WezTerm"})
    assert images.may_draw({"TERM": "foot"}) and images.may_draw({"TERM": "xterm-256color", "WT_SESSION": "x"})
    assert not images.may_draw({"TERM": "xterm-256color"}) and not images.may_draw({"TERM": "tmux-256color"})
    assert not images.may_draw({"TERM": "xterm-kitty", "TERM_PROGRAM": "textual"})  # rat serve's browser
    assert images.probe("off") is None and images.renderer() is None
    assert images.probe("halfcell") == "halfcell" and images.renderer() == "halfcell"
    images.force(None)


def test_decode_refuses_what_is_not_an_image() -> None:
    with pytest.raises(ValueError, match="refused: the bytes are not a PNG, JPEG, GIF or WEBP image"):
        images.decode(base64.b64encode(b"hello").decode())
    big = images.decode(png(5000, 100))
    assert big.size == (images.MAX_PIXELS, 41)


async def test_an_image_in_a_tool_result_is_drawn_once(tmp_path: Path, renderer, decode_threads) -> None:
    renderer("sixel")
    encoded = base64.b64encode(png(80, 40)).decode()
    content = [{"type": "content", "content": {"type": "image", "mimeType": "image/png", "data": encoded}}]
    script = {"turns": [[
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Screenshot", "status": "in_progress"}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "content": content}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
                    "content": content}},
        {"chunk": "Took it."},
    ]]}
    app = RatApp(scripted(script, tmp_path), tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.session.state.status == "ready", "ready")
        await pilot.press(*"screenshot", "enter")
        preview = app.query_one(FilePreview)
        await until(pilot, lambda: preview.image is not None and preview.image.drawn is not None, "the image drawn")
        await until(pilot, lambda: app.session.state.status == "ready", "the turn's end")
        assert len(app.session.state.images) == 1 and preview.image.caption.endswith("80×40]")
        assert type(preview.image.drawn) is images.widget_class("sixel")
