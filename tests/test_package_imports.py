"""Paper packages share parts through kit-level modules (parsing, workspace, cues, sampling), never through
each other's internals: a method package imports only itself, the method base and the kit's semantic
baseline from ``temporag.methods``."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

METHODS = Path(__file__).resolve().parents[1] / "lib" / "temporag" / "methods"
PACKAGES = sorted(p.name for p in METHODS.iterdir() if (p / "__init__.py").exists())
# the methods layer's own modules (the retrieval interface, the registry, book declarations, the shared KG
# workspace, the record of trained / sampled artifacts) and the baseline other methods build on
SHARED = {"base", "registry", "book_entry", "workspace", "artifacts", "semantic"}


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


KIT = METHODS.parent
# recording only in record.py: tests/test_recording_guard.py


#: the layers under the methods: they serve every method, so they import no method, no notebook harness and
#: nothing that runs notebooks (the root modules are the foundation every layer uses)
BELOW_METHODS = ("data", "timeutil", "llm", "linking", "retrieval", "question", "answer", "reported")
ABOVE = ("methods", "leaderboard", "notebook", "run", "batch", "cli", "claims")
FOUNDATION = ("config", "cache", "sampling", "progress", "__init__")


def kit_imports(path: Path) -> set[str]:
    """Every ``temporag.*`` module a file imports, anywhere in it (function bodies too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("temporag"):
            named = {f"temporag.{a.name}" for a in node.names}
            found |= {node.module} if node.module != "temporag" else named
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("temporag")}
    return found


def test_the_lower_layers_import_nothing_above_them():
    wrong = []
    for layer in (*BELOW_METHODS, *FOUNDATION):
        files = sorted((KIT / layer).rglob("*.py")) if (KIT / layer).is_dir() else [KIT / f"{layer}.py"]
        for path in files:
            up = {m for m in kit_imports(path) if m.split(".")[1:2] and m.split(".")[1] in ABOVE}
            if layer in FOUNDATION:
                up |= {m for m in kit_imports(path) if m.split(".")[1:2] and m.split(".")[1] in BELOW_METHODS}
            wrong += [f"{path.relative_to(KIT)} → {m}" for m in sorted(up)]
    assert not wrong, f"imports against the layering: {wrong}"


def test_the_harness_reaches_methods_only_through_the_registry():
    """The notebook harness, the runner, batch and the CLI find methods by name (the registry); none of
    them imports a paper's package, so a new method touches none of them."""
    papers = set(PACKAGES)
    wrong = []
    for layer in ("notebook", "run", "batch", "cli"):
        for path in sorted((KIT / layer).rglob("*.py")):
            for m in kit_imports(path):
                parts = m.split(".")
                if parts[1:2] == ["methods"] and len(parts) > 2 and parts[2] in papers:
                    wrong.append(f"{path.relative_to(KIT)} → {m}")
    assert not wrong, f"harness modules importing a method package: {wrong}"


def lazy_kit_imports(root: Path) -> list[tuple[str, int, bool]]:
    """(file, line, has a ``# lazy:`` reason) for every import of temporag inside a function body."""
    found = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        lines = source.splitlines()
        for function in ast.walk(ast.parse(source)):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom):
                    names = [node.module or ""] if node.level == 0 else ["temporag"]  # relative: the kit
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                else:
                    continue
                if any(name.split(".")[0] == "temporag" for name in names):
                    reason = any("# lazy:" in line for line in lines[node.lineno - 1 : node.end_lineno])
                    found.append((str(path.relative_to(root)), node.lineno, reason))
    return sorted(set(found))


def test_the_lazy_scan_sees_imports_in_functions_and_their_reasons(tmp_path):
    (tmp_path / "demo.py").write_text(
        "import temporag\n"
        "def f():\n    from temporag import cli\n"
        "def g():\n    def inner():\n        import temporag.run.runner  # lazy: a cycle\n"
        "async def h():\n    from temporag.config import (  # lazy: light\n        get_settings,\n    )\n"
        "def k():\n    import json\n"
    )
    assert lazy_kit_imports(tmp_path) == [("demo.py", 3, False), ("demo.py", 6, True), ("demo.py", 8, True)]


def test_every_kit_import_inside_a_function_names_why_it_is_lazy():
    """Kit imports sit at the top of their module; one stays inside a function only for a reason the
    line names (``# lazy: …``): an import cycle, a module kept light to import (the CLI, the registry
    and its entries, config, params), or a heavy third-party package on a light path."""
    unexplained = [f"{file}:{line}" for file, line, reason in lazy_kit_imports(KIT) if not reason]
    assert not unexplained, f"kit imports inside functions without a '# lazy:' reason: {unexplained}"


def test_every_kit_module_imports_first_without_a_cycle():
    """Each module imported as the first kit module of a process (third-party packages stay loaded, so
    this is one process): an import moved to a module's top must not close a cycle."""
    names = sorted(
        ".".join(p.relative_to(KIT.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in KIT.rglob("*.py")
    )
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        "for name in sys.argv[1:]:\n"
        "    for loaded in [m for m in sys.modules if m == 'temporag' or m.startswith('temporag.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{name}: {exc!r}')\n"
        "print('\\n'.join(failed))\n"
        "sys.exit(1 if failed else 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *names],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(KIT.parent)},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_notebooks_start_is_the_function_however_it_was_reached():
    """``from temporag.notebook import start`` (every notebook's first import) gives the function, also
    after the module that defines it was imported first."""
    code = (
        "import temporag.notebook.session, temporag.notebook.params\n"
        "from temporag.notebook import start\n"
        "assert callable(start) and start.__module__ == 'temporag.notebook.session', start\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(KIT.parent)})
    assert done.returncode == 0, done.stderr
