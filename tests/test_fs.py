"""fs/read_text_file and fs/write_text_file on real files: scope, lines, atomic writes, modes, CRLF."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rat_tui.protocol.fs import ACCESS_DENIED, RESOURCE_NOT_FOUND, FileAccess, FileWrite
from rat_tui.protocol.router import INVALID_PARAMS, RpcError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def read(path: Path | str, **extra: object) -> dict:
    return {"sessionId": "s", "path": str(path), **extra}


def write(path: Path | str, content: str) -> dict:
    return {"sessionId": "s", "path": str(path), "content": content}


async def test_read_whole_file_and_line_window(root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\nthree\nfour\n")
    fs = FileAccess([root])
    assert await fs.read_text_file(read(root / "a.txt")) == {"content": "one\ntwo\nthree\nfour\n"}
    assert await fs.read_text_file(read(root / "a.txt", line=2, limit=2)) == {"content": "two\nthree\n"}
    assert await fs.read_text_file(read(root / "a.txt", line=3)) == {"content": "three\nfour\n"}
    assert await fs.read_text_file(read(root / "a.txt", limit=1)) == {"content": "one\n"}
    assert await fs.read_text_file(read(root / "a.txt", line=10)) == {"content": ""}
    assert (await fs.read_text_file(read(root / "a.txt", line=None, limit=None)))["content"].startswith("one")


async def test_read_keeps_crlf_and_replaces_undecodable_bytes(root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nb\xff\r\n")
    fs = FileAccess([root])
    assert (await fs.read_text_file(read(root / "w.txt")))["content"] == "a\r\nb\ufffd\r\n"


async def test_missing_file_is_not_found_unless_empty_switch(root: Path) -> None:
    with pytest.raises(RpcError) as caught:
        await FileAccess([root]).read_text_file(read(root / "nope.txt"))
    assert caught.value.code == RESOURCE_NOT_FOUND == -32002
    assert str(root / "nope.txt") in caught.value.message
    empty = FileAccess([root], missing_file_empty=True)
    assert await empty.read_text_file(read(root / "nope.txt")) == {"content": ""}


async def test_directory_and_bad_params_give_clear_errors(root: Path) -> None:
    fs = FileAccess([root])
    with pytest.raises(RpcError, match="directory") as caught:
        await fs.read_text_file(read(root))
    assert caught.value.code == INVALID_PARAMS
    with pytest.raises(RpcError) as caught:
        await fs.read_text_file(read(root / "a", line="2"))
    assert caught.value.code == INVALID_PARAMS
    with pytest.raises(RpcError, match="directory"):
        await fs.write_text_file(write(root, "x"))
    os.mkfifo(root / "pipe")  # opening a FIFO would block a worker thread until a writer came
    with pytest.raises(RpcError, match="Not a regular file"):
        await asyncio.wait_for(fs.read_text_file(read(root / "pipe")), 5)


async def test_relative_path_is_refused(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    (root / "a.txt").write_text("x")
    with pytest.raises(RpcError, match="path must be absolute: a.txt") as caught:
        await FileAccess([root]).read_text_file(read("a.txt"))
    assert caught.value.code == INVALID_PARAMS


async def test_write_outside_roots_refused_unless_user_allows(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    with pytest.raises(RpcError, match="Access denied") as caught:
        await FileAccess([root]).write_text_file(write(outside, "x"))
    assert caught.value.code == ACCESS_DENIED
    assert not outside.exists()

    asked: list[tuple[Path, str]] = []

    async def ask(path: Path, operation: str) -> bool:
        asked.append((path, operation))
        return operation == "write"

    fs = FileAccess([root], ask_outside=ask)
    await fs.write_text_file(write(outside, "allowed"))
    assert outside.read_text() == "allowed"
    with pytest.raises(RpcError, match="Access denied"):
        await fs.read_text_file(read(outside))
    assert asked == [(outside.resolve(), "write"), (outside.resolve(), "read")]


async def test_additional_roots_are_in_scope(root: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "e.txt").write_text("e")
    assert await FileAccess([root, extra]).read_text_file(read(extra / "e.txt")) == {"content": "e"}


async def test_dotdot_escape_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    with pytest.raises(RpcError) as caught:
        await FileAccess([root]).read_text_file(read(f"{root}/../secret.txt"))
    assert caught.value.code == ACCESS_DENIED
    # `..` that stays inside is fine
    (root / "sub").mkdir()
    (root / "in.txt").write_text("in")
    assert await FileAccess([root]).read_text_file(read(f"{root}/sub/../in.txt")) == {"content": "in"}


async def test_symlink_escaping_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "linkdir").symlink_to(tmp_path)
    fs = FileAccess([root])
    for path in (root / "link.txt", root / "linkdir" / "secret.txt", root / "linkdir" / "new.txt"):
        with pytest.raises(RpcError) as caught:
            await fs.write_text_file(write(path, "pwned"))
        assert caught.value.code == ACCESS_DENIED
    assert (tmp_path / "secret.txt").read_text() == "s"
    assert not (tmp_path / "new.txt").exists()


async def test_symlink_inside_root_writes_through_and_stays_a_link(root: Path) -> None:
    (root / "real.txt").write_text("old")
    (root / "alias.txt").symlink_to(root / "real.txt")
    await FileAccess([root]).write_text_file(write(root / "alias.txt", "new"))
    assert (root / "alias.txt").is_symlink()
    assert (root / "real.txt").read_text() == "new"


async def test_write_creates_parent_dirs_and_reports_new_file(root: Path) -> None:
    changes: list[FileWrite] = []
    fs = FileAccess([root], on_write=changes.append)
    target = root / "deep" / "er" / "new.txt"
    await fs.write_text_file(write(target, "hello\n"))
    assert target.read_text() == "hello\n"
    assert changes == [FileWrite(path=target, old_text=None, new_text="hello\n")]
    await fs.write_text_file(write(target, "bye\n"))
    assert changes[-1] == FileWrite(path=target, old_text="hello\n", new_text="bye\n")
    assert sorted(p.name for p in target.parent.iterdir()) == ["new.txt"], "no temp file left"


async def test_new_file_mode_follows_umask(root: Path) -> None:
    old = os.umask(0o027)
    try:
        await FileAccess([root]).write_text_file(write(root / "n.txt", "x"))
    finally:
        os.umask(old)
    assert (root / "n.txt").stat().st_mode & 0o777 == 0o640


async def test_write_keeps_mode(root: Path) -> None:
    script = root / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o755)
    await FileAccess([root]).write_text_file(write(script, "#!/bin/sh\necho new\n"))
    assert script.stat().st_mode & 0o7777 == 0o755
    assert script.read_text() == "#!/bin/sh\necho new\n"


async def test_write_keeps_crlf_line_endings(root: Path) -> None:
    target = root / "dos.txt"
    target.write_bytes(b"one\r\ntwo\r\n")
    changes: list[FileWrite] = []
    fs = FileAccess([root], on_write=changes.append)
    await fs.write_text_file(write(target, "one\ntwo\nthree\n"))
    assert target.read_bytes() == b"one\r\ntwo\r\nthree\r\n"
    # content already in CRLF is not doubled
    await fs.write_text_file(write(target, "a\r\nb\n"))
    assert target.read_bytes() == b"a\r\nb\r\n"
    assert changes[0].old_text == "one\r\ntwo\r\n"
    # LF files stay LF
    (root / "unix.txt").write_bytes(b"x\n")
    await fs.write_text_file(write(root / "unix.txt", "y\nz\n"))
    assert (root / "unix.txt").read_bytes() == b"y\nz\n"


async def test_failed_rename_leaves_original_and_no_temp(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = root / "keep.txt"
    target.write_text("original\n")
    changes: list[FileWrite] = []

    def crash(src: object, dst: object, **_: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(RpcError, match="Cannot write"):
        await FileAccess([root], on_write=changes.append).write_text_file(write(target, "clobbered\n"))
    assert target.read_text() == "original\n"
    assert [p.name for p in root.iterdir()] == ["keep.txt"]
    assert changes == []


def test_write_survives_sigkill_between_write_and_rename(root: Path, tmp_path: Path) -> None:
    """A process killed after the temp file is written but before the rename: the original stays."""
    target = root / "data.txt"
    target.write_text("original\n")
    marker = tmp_path / "ready"
    code = textwrap.dedent(
        f"""
        import asyncio, os, time
        from pathlib import Path
        from rat_tui.protocol.fs import FileAccess

        def stall(src, dst, **_):  # src is the temp file's name in the checked directory
            Path({str(marker)!r}).write_text(str(Path({str(root)!r}) / src))
            time.sleep(60)

        os.replace = stall
        asyncio.run(FileAccess([Path({str(root)!r})]).write_text_file(
            {{"sessionId": "s", "path": {str(target)!r}, "content": "new\\n" * 1000}}))
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        for _ in range(1000):
            if marker.exists() and marker.read_text():
                break
            if child.poll() is not None:
                pytest.fail(f"writer exited early with {child.returncode}")
            time.sleep(0.01)
        else:
            pytest.fail("writer never reached the rename")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    assert target.read_text() == "original\n"
    temp = Path(marker.read_text())
    leftovers = [p for p in root.iterdir() if p != target]
    assert leftovers in ([], [temp]), leftovers
    assert temp != target and temp.parent == root and temp.read_text() == "new\n" * 1000


async def test_handlers_map_the_acp_methods(root: Path) -> None:
    fs = FileAccess([root])
    assert set(fs.handlers()) == {"fs/read_text_file", "fs/write_text_file"}
