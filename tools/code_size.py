"""Lines per package and the largest classes of a rat_tui source tree (issue #42's before and after).

Run: python tools/code_size.py [TREE] [--top 5]   (TREE: a checkout, default this one)
Lines are physical lines of .py files; a class's size is its source lines, methods and nested code included.
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path


def measure(tree: Path) -> tuple[Counter[str], list[tuple[int, str]]]:
    root = tree / "rat_tui"
    packages: Counter[str] = Counter()
    classes: list[tuple[int, str]] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        package = "rat_tui" + "".join("/" + part for part in relative.parts[:-1])
        source = path.read_text(encoding="utf-8")
        packages[package] += source.count("\n")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                classes.append((node.end_lineno - node.lineno + 1, f"{node.name} ({relative})"))
    return packages, sorted(classes, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    packages, classes = measure(Path(args.tree))
    print(f"{'package':40} lines")
    for package, lines in sorted(packages.items()):
        print(f"{package:40} {lines:6,}")
    print(f"{'total':40} {sum(packages.values()):6,}")
    print("\nlargest classes (lines)")
    for lines, name in classes[: args.top]:
        print(f"{lines:6,}  {name}")


if __name__ == "__main__":
    main()
