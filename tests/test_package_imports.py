"""Paper packages share parts through kit-level modules (parsing, workspace, cues, sampling), never through
each other's internals: a method package imports only itself, the method base and the kit's semantic
baseline from ``temporag.methods``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

METHODS = Path(__file__).resolve().parents[1] / "lib" / "temporag" / "methods"
PACKAGES = sorted(p.name for p in METHODS.iterdir() if (p / "__init__.py").exists())
SHARED = {"base", "semantic"}  # the retrieval interface, and the baseline other methods build on


def method_imports(package: str) -> set[tuple[str, str]]:
    """(file, imported temporag.methods.<name>) for every import anywhere in a package's modules."""
    found = set()
    for path in (METHODS / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[:2] == ["temporag", "methods"] and len(parts) > 2:
                    found.add((path.name, parts[2]))
    return found


def test_the_scan_sees_function_body_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("def f():\n    from temporag.methods import tecqa\n")
    monkeypatch.setattr(f"{__name__}.METHODS", tmp_path)
    assert method_imports("demo") == {("__init__.py", "tecqa")}


@pytest.mark.parametrize("package", PACKAGES)
def test_a_method_package_imports_no_other_paper_package(package):
    foreign = {(f, name) for f, name in method_imports(package) if name not in {package, *SHARED}}
    assert not foreign, f"{package} imports other packages' internals: {sorted(foreign)}"
