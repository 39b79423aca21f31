"""The test suite's own layout: shared helpers live in tests/helpers/, test files never import each other."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def local_imports(path: Path) -> list[str]:
    """The modules of tests/ a file imports (relative imports, and absolute ones under `tests.`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                found += [node.module or "", *(f"{node.module or ''}.{a.name}".lstrip(".") for a in node.names)]
            elif (node.module or "").startswith("tests"):
                found.append(node.module.removeprefix("tests").lstrip("."))
        elif isinstance(node, ast.Import):
            found += [a.name.removeprefix("tests.") for a in node.names if a.name.startswith("tests.")]
    return found


def forbidden_imports(path: Path) -> list[str]:
    """What `path` imports from a test file or from conftest.py (pytest's, not a module to import)."""
    return [m for m in local_imports(path) if any(p.startswith("test_") or p == "conftest" for p in m.split("."))]


def test_no_test_file_imports_another_test_file_or_conftest() -> None:
    files = sorted([*TESTS.glob("test_*.py"), *(TESTS / "helpers").glob("*.py"), TESTS / "conftest.py"])
    offenders = {path.name: bad for path in files if (bad := forbidden_imports(path))}
    assert offenders == {}, "import shared helpers from tests/helpers/ instead"


def test_the_rule_sees_a_test_file_importing_another(tmp_path: Path) -> None:
    bad = tmp_path / "test_bad.py"
    bad.write_text("from .test_app import until\nfrom .conftest import received\nfrom .helpers.app import view\n"
                   "from . import test_tabs\nimport tests.test_workflow\n")
    assert forbidden_imports(bad) == ["test_app", "test_app.until", "conftest", "conftest.received", "test_tabs",
                                      "test_workflow"]


def stale_snapshots(tests: Path) -> list[str]:
    """Snapshot files no test takes: `__snapshots__/<module>/<test>[<params>].svg` where `<module>.py` has no
    `def <test>` taking `snap_compare`. (syrupy finds these itself only in a serial run: under pytest-xdist its
    unused-snapshot check is off, so the suite checks by name.)"""
    stale = []
    for svg in sorted((tests / "__snapshots__").glob("*/*.svg")):
        module = tests / f"{svg.parent.name}.py"
        name = svg.stem.split("[", 1)[0]
        taking = set()
        if module.exists():
            for node in ast.walk(ast.parse(module.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    if "snap_compare" in [a.arg for a in node.args.args]:
                        taking.add(node.name)
        if name not in taking:
            stale.append(f"{svg.parent.name}/{svg.name}")
    return stale


def test_every_snapshot_file_belongs_to_a_snapshot_test() -> None:
    assert stale_snapshots(TESTS) == [], "delete snapshots no test takes (or rename them with their test)"


def test_the_rule_sees_a_snapshot_without_its_test(tmp_path: Path) -> None:
    (tmp_path / "__snapshots__" / "test_a").mkdir(parents=True)
    for name in ("test_kept.svg", "test_kept[wide].svg", "test_renamed.svg", "test_plain.svg"):
        (tmp_path / "__snapshots__" / "test_a" / name).write_text("<svg/>")
    (tmp_path / "__snapshots__" / "test_gone").mkdir()
    (tmp_path / "__snapshots__" / "test_gone" / "test_kept.svg").write_text("<svg/>")
    (tmp_path / "test_a.py").write_text("def test_kept(snap_compare):\n    pass\n\n"
                                        "async def test_plain(tmp_path):\n    pass\n")
    assert stale_snapshots(tmp_path) == ["test_a/test_plain.svg", "test_a/test_renamed.svg",
                                         "test_gone/test_kept.svg"]
