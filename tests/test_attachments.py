"""Prompt attachments: listing files as git does, `@` mentions to content blocks per the agent's capabilities,
media facts for incoming images, and the real app sending them to scripted agents over pipes."""

from __future__ import annotations

import base64
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from rat_tui.session import attachments
from rat_tui.app import RatApp
from rat_tui.state.media import annotation_badge, format_size, base64_size, image_dimensions, media_placeholder

from .helpers.agents import received
from .helpers.app import scripted, send, state_word, until, view

NO_EMBED = {"promptCapabilities": {"image": False, "audio": False, "embeddedContext": False}}
EMBED = {"promptCapabilities": {"embeddedContext": True}}
EVERYTHING = {"promptCapabilities": {"image": True, "audio": True, "embeddedContext": True}}


def png(width: int, height: int) -> bytes:
    """A valid PNG of one grey pixel row repeated (small, real headers)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\0" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def jpeg_head(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\x01\x01\0\0\x01\0\x01\0\0"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\0"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "notes.txt").write_text("alpha\nbeta\n")
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "secret.env").write_text("TOKEN=1\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\0\1")
    (root / ".gitignore").write_text("*.env\nbuild/\n")
    (root / "shot.png").write_bytes(png(64, 48))
    (root / "my notes.md").write_text("# spaced\n")
    return root


# -- listing and matching ---------------------------------------------------------------------------


def test_walk_respects_gitignore(project: Path) -> None:
    files = attachments.list_files(project)
    assert sorted(files) == [".gitignore", "my notes.md", "notes.txt", "shot.png", "src/main.py"]
    (project / "src" / ".gitignore").write_text("*.py\n!keep.py\n")
    (project / "src" / "keep.py").write_text("")
    assert sorted(attachments.list_files(project)) == [".gitignore", "my notes.md", "notes.txt", "shot.png",
                                                        "src/.gitignore", "src/keep.py"]
    assert len(attachments.list_files(project, cap=2)) == 2


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_repo_lists_tracked_and_untracked_not_ignored(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "notes.txt"], cwd=project, check=True)
    files = attachments.list_files(project)
    assert "notes.txt" in files and "src/main.py" in files and "secret.env" not in files
    assert not any(f.startswith("build/") for f in files)


def test_match_paths_ranks_name_prefix_first() -> None:
    paths = ["docs/notes.md", "src/anote.py", "notes.txt", "n/o/t/e.c", "zzz"]
    assert attachments.match_paths(paths, "note") == ["notes.txt", "docs/notes.md", "src/anote.py", "n/o/t/e.c"]
    assert attachments.match_paths(paths, "") == paths
    assert attachments.match_paths(paths, "qq") == []


def test_mentions_and_pasted_paths(project: Path) -> None:
    text = 'look at @notes.txt, @"my notes.md" and @src/main.py; not a@notes.txt nor @missing.txt'
    found = attachments.mentions(text, project)
    assert [p.name for p in found] == ["notes.txt", "my notes.md", "main.py"]
    assert attachments.mention_text("my notes.md") == '@"my notes.md"'
    assert attachments.pasted_path(f"'{project / 'shot.png'}'", project) == project / "shot.png"
    assert attachments.pasted_path((project / "shot.png").as_uri(), project) == project / "shot.png"
    assert attachments.pasted_path("shot.png", project) == project / "shot.png"
    assert attachments.pasted_path("no such thing", project) is None
    assert attachments.pasted_path("two\nlines", project) is None


# -- building prompts -----------------------------------------------------------------------------


def test_text_file_is_embedded_when_the_agent_accepts_embedded_context(project: Path) -> None:
    built = attachments.build_prompt("see @notes.txt", project, EMBED)
    assert built.blocks == [
        {"type": "text", "text": "see @notes.txt"},
        {"type": "resource", "resource": {"uri": (project / "notes.txt").as_uri(), "text": "alpha\nbeta\n",
                                          "mimeType": "text/plain"}},
    ]
    assert built.chips == ["📎 notes.txt"] and built.refused is None


def test_text_file_is_a_link_otherwise_and_when_too_large(project: Path) -> None:
    built = attachments.build_prompt("see @notes.txt", project, NO_EMBED)
    assert built.blocks[1] == {"type": "resource_link", "uri": (project / "notes.txt").as_uri(), "name": "notes.txt",
                               "size": 11, "mimeType": "text/plain"}
    assert built.chips == ["🔗 notes.txt"] and not built.notices
    (project / "big.log").write_text("x" * (attachments.EMBED_LIMIT + 1))
    built = attachments.build_prompt("@big.log", project, EMBED)
    assert built.blocks[1]["type"] == "resource_link" and "larger than 1.0 MB" in built.notices[0]


def test_images_only_for_agents_that_accept_them(project: Path) -> None:
    built = attachments.build_prompt("what is in @shot.png", project, NO_EMBED, "Scripted agent")
    assert built.blocks is None
    assert built.refused == ("Not sent: Scripted agent does not accept image content in prompts "
                             "(promptCapabilities.image is off), so shot.png cannot be attached. Remove it to send.")
    built = attachments.build_prompt("what is in @shot.png", project, EVERYTHING)
    image = built.blocks[1]
    assert image["type"] == "image" and image["mimeType"] == "image/png" and image["uri"].endswith("/shot.png")
    assert base64.b64decode(image["data"]) == (project / "shot.png").read_bytes()
    assert built.chips == ["🖼 shot.png"]
    (project / "hello.wav").write_bytes(b"RIFF0000WAVE")
    assert attachments.build_prompt("@hello.wav", project, EMBED).refused is not None
    assert attachments.build_prompt("@hello.wav", project, EVERYTHING).blocks[1]["type"] == "audio"


def test_queue_time_refusal_agrees_with_the_built_prompt(project: Path) -> None:
    text = "what is in @shot.png and @notes.txt"
    refused = attachments.build_prompt(text, project, NO_EMBED, "Scripted agent").refused
    assert refused is not None and attachments.prompt_refusal(text, project, NO_EMBED, "Scripted agent") == refused
    assert attachments.prompt_refusal(text, project, EVERYTHING) is None


def test_plain_text_prompt_is_one_block(project: Path) -> None:
    assert attachments.build_prompt("hello @nobody", project, EMBED).blocks == [{"type": "text", "text": "hello @nobody"}]


# -- media facts ----------------------------------------------------------------------------------


def test_image_dimensions_from_headers() -> None:
    assert image_dimensions(png(640, 480)[:32]) == (640, 480)
    assert image_dimensions(b"GIF89a" + struct.pack("<HH", 32, 16)) == (32, 16)
    assert image_dimensions(jpeg_head(800, 600)) == (800, 600)
    assert image_dimensions(b"not an image") is None
    data = base64.b64encode(png(640, 480)).decode()
    assert base64_size(data) == len(png(640, 480))
    assert media_placeholder("image", "image/png", data) == f"[image: image/png, {format_size(len(png(640, 480)))}, 640×480]"
    jpeg = base64.b64encode(jpeg_head(1920, 1080) + b"\0" * 20000).decode()
    assert media_placeholder("image", "image/jpeg", jpeg) == "[image: image/jpeg, 20 KB, 1920×1080]"
    assert media_placeholder("audio", "audio/wav", base64.b64encode(b"x" * 3000).decode()) == "[audio: audio/wav, 3 KB]"


def test_annotation_badge() -> None:
    assert annotation_badge({"audience": ["user"], "priority": 0.8, "lastModified": "2025-01-02T03:04:05Z"}) == \
        "for user · priority 0.8 · modified 2025-01-02"
    assert annotation_badge(None) == "" and annotation_badge({}) == ""


# -- the app, over real pipes ------------------------------------------------------------------------


def sent_blocks(record: Path) -> list[list[dict]]:
    return [m["params"]["prompt"] for m in received(record) if m.get("method") == "session/prompt"]


async def attach_with_picker(pilot, app: RatApp, query: str) -> None:
    composer = view(app).composer
    await pilot.press("@", *query)
    await until(pilot, lambda: composer.file_menu.is_open, "the @ menu")
    await pilot.press("enter")


@pytest.mark.slow
@pytest.mark.parametrize("capabilities, kind", [(EMBED, "resource"), (NO_EMBED, "resource_link")])
async def test_at_file_goes_as_the_agent_accepts(project: Path, tmp_path: Path, record_file: Path,
                                                 capabilities: dict, kind: str) -> None:
    script = {"initialize_result": {"agentCapabilities": capabilities}, "turns": [[{"chunk": "read it"}]]}
    app = RatApp(scripted(script, tmp_path), project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        composer = view(app).composer
        await pilot.press(*"explain ")
        await pilot.press("@", "n", "o", "t")
        await until(pilot, lambda: composer.file_menu.is_open, "the @ menu")
        assert composer.file_menu.paths[0] == "notes.txt" and "secret.env" not in composer.file_menu.paths
        await pilot.press("enter")
        assert composer.text == "explain @notes.txt "
        await pilot.press("enter")
        await until(pilot, lambda: "read it" in view(app).transcript.plain_text, "the answer")
        chip = "📎 notes.txt" if kind == "resource" else "🔗 notes.txt"
        assert chip in view(app).transcript.plain_text
    (prompt,) = sent_blocks(record_file)
    assert prompt[0] == {"type": "text", "text": "explain @notes.txt "}
    assert [block["type"] for block in prompt] == ["text", kind]
    if kind == "resource":
        assert prompt[1]["resource"]["text"] == "alpha\nbeta\n"
    else:
        assert prompt[1]["name"] == "notes.txt" and prompt[1]["size"] == 11


@pytest.mark.slow
async def test_image_refused_without_the_capability(project: Path, tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": {"agentCapabilities": NO_EMBED}}
    app = RatApp(scripted(script, tmp_path), project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        composer = view(app).composer
        await attach_with_picker(pilot, app, "sho")
        assert composer.text == "@sho"  # not attached
        messages = [n.message for n in app._notifications]
        assert any("does not accept image content" in m and "shot.png" in m for m in messages)
        composer.clear()
        await send(pilot, "what is in @shot.png today")  # typed by hand: refused whole
        await until(pilot, lambda: any(n.message.startswith("Not sent:") for n in app._notifications), "the refusal")
        assert composer.text == "what is in @shot.png today"  # the draft is kept
        # A later prompt, sent and received, is the barrier: a prompt sent before it would be recorded first.
        composer.clear()
        await send(pilot, "later")
        await until(pilot, lambda: sent_blocks(record_file), "the later prompt to arrive")
    assert sent_blocks(record_file) == [[{"type": "text", "text": "later"}]]  # the refused prompt never went out


@pytest.mark.slow
async def test_image_sent_to_an_agent_that_accepts_it(project: Path, tmp_path: Path, record_file: Path) -> None:
    script = {"initialize_result": {"agentCapabilities": EVERYTHING}, "turns": [[{"chunk": "a grey box"}]]}
    app = RatApp(scripted(script, tmp_path), project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await attach_with_picker(pilot, app, "sho")
        assert view(app).composer.text == "@shot.png "
        await send(pilot, "what is this")
        await until(pilot, lambda: "a grey box" in view(app).transcript.plain_text, "the answer")
    (prompt,) = sent_blocks(record_file)
    assert prompt[1]["type"] == "image" and base64.b64decode(prompt[1]["data"]) == (project / "shot.png").read_bytes()


@pytest.mark.slow
async def test_pasted_image_path_becomes_an_attachment(project: Path, tmp_path: Path, record_file: Path) -> None:
    from textual import events

    script = {"initialize_result": {"agentCapabilities": EVERYTHING}}
    app = RatApp(scripted(script, tmp_path), project)
    async with app.run_test(size=(110, 36)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        composer = view(app).composer
        composer.post_message(events.Paste(str(project / "shot.png")))
        await until(pilot, lambda: composer.text == "@shot.png ", "the pasted attachment")
        composer.post_message(events.Paste("plain words"))
        await until(pilot, lambda: composer.text.endswith("plain words"), "a plain paste")


@pytest.mark.slow
async def test_incoming_image_and_annotations_render(project: Path, tmp_path: Path, record_file: Path) -> None:
    data = base64.b64encode(png(640, 480)).decode()
    image = {"type": "image", "mimeType": "image/png", "data": data,
             "annotations": {"audience": ["user"], "priority": 0.5}}
    turn = [
        {"update": {"sessionUpdate": "agent_message_chunk", "content": image}},
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "shot", "title": "Screenshot", "status": "completed",
                    "content": [{"type": "content", "content": image}]}},
    ]
    app = RatApp(scripted({"turns": [turn]}, tmp_path), project)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: state_word(app) == "ready", "ready")
        await send(pilot, "screenshot please")
        size = format_size(len(png(640, 480)))
        await until(pilot, lambda: "Screenshot" in view(app).transcript.visible_text(), "the card")
        shown = view(app).transcript.visible_text()
        assert f"[image: image/png, {size}, 640×480]" in shown
        assert shown.count("640×480") == 2 and "for user · priority 0.5" in shown
