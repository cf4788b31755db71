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
# the methods layer's own modules (the retrieval interface, the registry, the parameter vocabulary, book
# declarations, the house plots, the shared KG workspace, the record of trained / sampled artifacts) and the
# baseline other methods build on
SHARED = {"base", "registry", "params", "book_entry", "plots", "workspace", "artifacts", "semantic"}


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


#: the kit's rooms from the bottom up (a root module, or a package): a module imports only rooms listed
#: before its own, at its top or inside a function.  Every room is listed, so a new one has to be placed.
LAYERS = (
    "temporag",  # the package itself (its version)
    # the root modules every layer uses: redaction, settings and their caps, the signed cache, data trees
    "redact", "config", "limits", "cache_key", "datatree", "cache", "progress", "sampling",
    "timeutil", "data", "llm", "retrieval", "linking", "question", "answer", "reported",  # serve every method
    "claims",  # claims as data, the one verdict rule, the judge of one run's records
    # the declarations every method imports (the parameter vocabulary, registry entries, book entries,
    # artifacts, house plots) and the registry's lookups, the retrieval interface, the paper packages
    "methods",
    "leaderboard",  # a kit notebook that compares methods
    "notebook",  # the harness a notebook starts with: start(), the Results recorder, the output folders
    "run",  # the runner
    "batch",  # batches, grids, the book and the scorecard
    "cli",
)


def room_of(module: str, kit: Path) -> str | None:
    """The room of a ``temporag`` module name ('temporag.methods.sar.report' → 'methods'); a name the
    package itself defines ('temporag.__version__') is the room 'temporag'."""
    parts = module.split(".")
    if parts[0] != "temporag":
        return None
    if len(parts) == 1 or not ((kit / parts[1]).is_dir() or (kit / f"{parts[1]}.py").is_file()):
        return "temporag"
    return parts[1]


def imported_modules(path: Path, kit: Path) -> list[tuple[str, int]]:
    """(module, line) of every import in a file, anywhere in it (function bodies too); ``from temporag
    import x`` names ``temporag.x``, a relative import is resolved against the file's package."""
    package = ["temporag", *path.relative_to(kit).parent.parts]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                above = package[: len(package) - node.level + 1]
                base = ".".join(above + ([node.module] if node.module else []))
            found += [(f"{base}.{a.name}" if base == "temporag" else base, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
    return found


def kit_arrows(kit: Path) -> set[tuple[str, str, str]]:
    """(room, room it imports, 'file:line') for every import between two rooms of the kit."""
    arrows = set()
    for path in sorted(kit.rglob("*.py")):
        rel = path.relative_to(kit)
        own = "temporag" if rel == Path("__init__.py") else rel.parts[0].removesuffix(".py")
        for module, line in imported_modules(path, kit):
            room = room_of(module, kit)
            if room is not None and room != own:
                arrows.add((own, room, f"{rel}:{line}"))
    return arrows


def rooms(kit: Path) -> set[str]:
    return {"temporag"} | {
        p.name.removesuffix(".py")
        for p in kit.iterdir()
        if p.name != "__init__.py" and (p.suffix == ".py" or (p / "__init__.py").exists())
    }


def test_the_arrow_scan_sees_function_body_relative_and_package_imports(tmp_path):
    kit = tmp_path / "temporag"
    for room in ("data", "cli"):
        (kit / room).mkdir(parents=True)
        (kit / room / "__init__.py").write_text("")
    (kit / "__init__.py").write_text('__version__ = "0"\n')
    (kit / "config.py").write_text("")
    (kit / "data" / "tkg.py").write_text(
        "from temporag import config, __version__\n"
        "def f():\n    from temporag.cli import main\n"
        "def g():\n    from ..cli import x\n    from . import tkg\n"
    )
    assert kit_arrows(kit) == {
        ("data", "config", "data/tkg.py:1"), ("data", "temporag", "data/tkg.py:1"),
        ("data", "cli", "data/tkg.py:3"), ("data", "cli", "data/tkg.py:5"),
    }
    assert rooms(kit) == {"temporag", "config", "data", "cli"}


def test_every_room_has_its_place_in_the_layers():
    assert rooms(KIT) == set(LAYERS), f"rooms not in LAYERS: {sorted(rooms(KIT) - set(LAYERS))}"


def test_every_arrow_points_down():
    """One order over every room of the kit: no import (top-level or lazy) reaches a room above its own,
    so nothing needs a lazy import or a module ``__getattr__`` to dodge a cycle."""
    place = {room: i for i, room in enumerate(LAYERS)}
    arrows = kit_arrows(KIT)
    up = sorted(f"{where}: {low} → {high}" for low, high, where in arrows if place[high] > place[low])
    assert not up, f"imports pointing up the layers (move the imported code down, or the importer up): {up}"


def module_getattrs(kit: Path) -> list[str]:
    """Modules that define a module-level ``__getattr__`` (names served on first access)."""
    return [
        str(path.relative_to(kit))
        for path in sorted(kit.rglob("*.py"))
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
    ]


def test_no_module_serves_names_through_a_module_getattr(tmp_path):
    """A name is imported where it is defined; a module ``__getattr__`` re-export hides an arrow from the
    scan above (it imports when first asked)."""
    (tmp_path / "demo.py").write_text("def __getattr__(name):\n    return name\n")
    (tmp_path / "ok.py").write_text("class A:\n    def __getattr__(self, name): ...\n")
    assert module_getattrs(tmp_path) == ["demo.py"]
    assert module_getattrs(KIT) == []


def test_kit_packages_reach_methods_only_through_the_registry():
    """Outside ``methods/``, the kit (the leaderboard, the harness, the runner, batch, the CLI) finds
    methods by name (the registry) and imports only the methods layer's shared modules, never a paper's
    package, so a new method touches none of them."""
    papers = set(PACKAGES) - SHARED
    wrong = []
    for path in sorted(KIT.rglob("*.py")):
        if path.relative_to(KIT).parts[0] == "methods":
            continue
        for module, line in imported_modules(path, KIT):
            parts = module.split(".")
            if parts[:2] == ["temporag", "methods"] and len(parts) > 2 and parts[2] in papers:
                wrong.append(f"{path.relative_to(KIT)}:{line} → {module}")
    assert not wrong, f"kit modules importing a method package: {wrong}"


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
        "import temporag.notebook.session, temporag.methods.params\n"
        "from temporag.notebook import start\n"
        "assert callable(start) and start.__module__ == 'temporag.notebook.session', start\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(KIT.parent)})
    assert done.returncode == 0, done.stderr
