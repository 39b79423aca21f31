"""The dataclass methods kept between launches (rat_tui/dataclass_cache.py): classes made from the kept code
behave as Python's own, and a file that is damaged, foreign or not trusted is ignored, never a failed launch.
(That a launch with the file compiles no method before its first frame: tests/test_startup_imports.py.)"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import marshal
import os
from dataclasses import InitVar, dataclass, field
from pathlib import Path

import pytest

from rat_tui import dataclass_cache


@pytest.fixture
def cache(tmp_path: Path):
    path = tmp_path / "cache" / dataclass_cache.FILE_NAME
    yield path
    dataclass_cache.uninstall()


def make_classes() -> dict[str, type]:
    """A class of each kind of method `dataclass` writes, made anew at each call."""

    @dataclass
    class Plain:
        name: str
        size: int = 0
        tags: list[str] = field(default_factory=list)

    @dataclass(frozen=True, order=True)
    class Frozen:
        x: int
        y: int = 2

    @dataclass(eq=False, slots=True)
    class Slotted:
        a: int
        b: str = "b"

    @dataclass(kw_only=True)
    class KeywordsOnly:
        first: int
        second: int = 5

    @dataclass
    class PostInit:
        base: int
        scale: InitVar[int] = 1
        total: int = field(init=False, default=0)

        def __post_init__(self, scale: int) -> None:
            self.total = self.base * scale

    return {"Plain": Plain, "Frozen": Frozen, "Slotted": Slotted, "KeywordsOnly": KeywordsOnly, "PostInit": PostInit}


def behaviour(classes: dict[str, type]) -> list:
    """What the classes' generated methods do, as plain values to compare."""
    plain, frozen, slotted = classes["Plain"], classes["Frozen"], classes["Slotted"]
    got = [repr(plain("a")), plain("a", 1, ["t"]) == plain("a", 1, ["t"]), plain("a") == plain("b"),
           plain("a").tags is not plain("a").tags, [f.name for f in dataclasses.fields(plain)]]
    got += [repr(frozen(1)), hash(frozen(1)) == hash(frozen(1)), frozen(1) < frozen(2), repr(sorted([frozen(3), frozen(1, 1)]))]
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen(1).x = 3  # type: ignore[misc]
    got += [repr(slotted(1)), slotted(1) == slotted(1), hasattr(slotted(1), "__dict__")]
    with pytest.raises(TypeError):
        classes["KeywordsOnly"](1)  # type: ignore[misc]
    got += [repr(classes["KeywordsOnly"](first=1)), repr(classes["PostInit"](3, 4)), classes["PostInit"](3).total]
    # What the generated methods say of themselves: their annotations (the types, not strings), the signature.
    got += [(cls.__doc__, repr(cls.__init__.__annotations__), str(inspect.signature(cls)), cls.__init__.__code__.co_flags)
            for cls in classes.values()]
    return got


def test_classes_made_from_kept_code_behave_as_pythons_own_and_a_second_run_compiles_nothing(cache: Path) -> None:
    expected = behaviour(make_classes())  # Python's own
    assert dataclass_cache.install(cache) is True
    before = dataclass_cache.compiled
    assert behaviour(make_classes()) == expected
    assert dataclass_cache.compiled > before  # compiled here, and kept
    dataclass_cache.save()
    assert cache.is_file() and cache.stat().st_mode & 0o077 == 0  # the user's alone

    dataclass_cache.uninstall()  # a new launch: the file read again
    assert dataclass_cache.install(cache) is True
    compiled, found = dataclass_cache.compiled, dataclass_cache.found
    assert behaviour(make_classes()) == expected
    assert dataclass_cache.compiled == compiled  # nothing compiled: every method came from the file
    assert dataclass_cache.found > found


def test_nothing_is_written_when_nothing_new_was_compiled(cache: Path) -> None:
    dataclass_cache.install(cache)
    make_classes()
    dataclass_cache.save()
    written = cache.stat().st_mtime_ns
    os.utime(cache, ns=(written - 10**9, written - 10**9))
    dataclass_cache.uninstall()
    dataclass_cache.install(cache)
    make_classes()
    dataclass_cache.save()
    assert cache.stat().st_mtime_ns == written - 10**9


def test_turned_off_by_the_environment(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(dataclass_cache.ENV, "0")
    assert dataclass_cache.install(cache) is False
    assert "exec" not in vars(dataclasses)
    make_classes()
    dataclass_cache.save()
    assert not cache.exists()


def _valid_file(path: Path) -> None:
    dataclass_cache.install(path)
    make_classes()
    dataclass_cache.save()
    dataclass_cache.uninstall()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "another_python", "not_code", "others_may_write",
                                    "symlink", "directory"])
def test_a_damaged_foreign_or_untrusted_file_is_ignored_and_written_anew(
        cache: Path, damage: str, caplog: pytest.LogCaptureFixture) -> None:
    _valid_file(cache)
    data = cache.read_bytes()
    if damage == "garbage":
        cache.write_bytes(b"\x00\xff" * 100)
    elif damage == "truncated":
        cache.write_bytes(data[: len(data) // 2])
    elif damage == "another_python":
        cache.write_bytes(b"\x01\x02\r\n" + data[4:])
    elif damage == "not_code":
        cache.write_bytes(dataclass_cache.HEADER + marshal.dumps({"def __create_fn__(): pass": "print('hi')"}))
    elif damage == "others_may_write":
        cache.chmod(0o666)
    elif damage == "symlink":
        target = cache.with_name("elsewhere")
        cache.rename(target)
        cache.symlink_to(target)
    else:
        cache.unlink()
        cache.mkdir()
    expected = behaviour(make_classes())
    caplog.set_level(logging.INFO, "rat.startup")
    assert dataclass_cache.install(cache) is True  # (never raises)
    compiled = dataclass_cache.compiled
    assert behaviour(make_classes()) == expected
    assert dataclass_cache.compiled > compiled  # nothing taken from the file
    assert "not read from" in caplog.text
    dataclass_cache.save()  # (a directory in its place: logged, not raised)
    if damage == "directory":
        assert "not saved" in caplog.text
        return
    dataclass_cache.uninstall()
    dataclass_cache.install(cache)  # written anew, and trusted
    compiled = dataclass_cache.compiled
    make_classes()
    assert dataclass_cache.compiled == compiled
    assert not cache.is_symlink()


def test_a_cache_directory_that_cannot_be_made_is_logged_not_raised(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    try:
        assert dataclass_cache.install(blocker / "cache" / dataclass_cache.FILE_NAME) is True
        expected_repr = repr(make_classes()["Plain"]("a"))
        dataclass_cache.save()
        assert "not saved" in caplog.text
        assert expected_repr.endswith("Plain(name='a', size=0, tags=[])")
    finally:
        dataclass_cache.uninstall()
