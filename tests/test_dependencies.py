"""The kit's layering: paper packages and the leaderboard never import the notebook harness, and the
runner imports no batch module (batch builds on the runner, not the other way)."""

from __future__ import annotations

import ast
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib" / "temporag"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function body."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_method_or_leaderboard_module_imports_the_notebook_harness():
    files = [*(LIB / "methods").rglob("*.py"), *(LIB / "leaderboard").rglob("*.py")]
    offenders = [str(p.relative_to(LIB)) for p in files if "temporag.notebook" in imported_modules(p)]
    assert not offenders


def test_the_runner_imports_no_batch_module():
    assert not {m for m in imported_modules(LIB / "runner.py") if m.startswith("temporag.batch")}
