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
