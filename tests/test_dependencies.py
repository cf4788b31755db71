"""The kit's layering: paper packages and the leaderboard never start a notebook run (``start()``, the
harness's entry), and nothing in run/ imports a batch module (batch builds on the runner, not the other
way)."""

from __future__ import annotations

import ast
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib" / "temporag"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function body (``from a import b`` counts as
    both ``a`` and ``a.b``: b may be a module)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_method_or_leaderboard_module_starts_a_notebook_run():
    files = [*(LIB / "methods").rglob("*.py"), *(LIB / "leaderboard").rglob("*.py")]
    harness = {"temporag.notebook.session", "temporag.notebook.start"}  # the module, the function
    offenders = [str(p.relative_to(LIB)) for p in files if harness & imported_modules(p)]
    assert not offenders


def test_the_scan_sees_a_module_imported_by_name(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n    from temporag.notebook import start\n")
    assert "temporag.notebook.start" in imported_modules(tmp_path / "m.py")


def test_nothing_in_run_imports_a_batch_module():
    imported = {m for p in (LIB / "run").rglob("*.py") for m in imported_modules(p)}
    assert (LIB / "run" / "runner.py").exists()
    assert not {m for m in imported if m.startswith("temporag.batch")}
