"""One compute/draw rule in every method package and the leaderboard: ``experiments.py`` and the step
modules compute (frames, arrays, per-question data, model runs), ``report.py`` draws and formats
(figures, styled tables, text), and no module only passes on names imported from another.

Read from the source (no import), so a report that starts running a retriever, a step module that
starts drawing, or a hub that re-exports a sibling's names fails here with the file and line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parents[1] / "lib" / "temporag"
METHODS = KIT / "methods"
EXAMPLES = KIT.parents[1] / "examples"
# the kit's method packages, the leaderboard and each example method (held to the same rule)
PACKAGES = sorted(
    [p for p in METHODS.iterdir() if (p / "__init__.py").exists()]
    + [KIT / "leaderboard"]
    + [p.parent for p in EXAMPLES.glob("*/*/__init__.py")],
    key=lambda p: p.name,
)
#: what running a model looks like from a report: the LLM client, the readers, the run layer ...
MODEL_MODULES = ("temporag.llm", "temporag.answer.readers", "temporag.run")
#: ... and the method calls that retrieve, read or run a whole pipeline
MODEL_CALLS = {"pipeline", "retrieve", "read"}
#: drawing: only a package's report.py imports these
DRAWING = ("matplotlib", "networkx", "temporag.methods.plots")


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) for every import anywhere in a module, ``from a import b`` as ``a`` and ``a.b``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def model_runs(path: Path) -> list[str]:
    """Where a module imports a model entry point or calls ``.pipeline`` / ``.retrieve`` / ``.read``."""
    tree = ast.parse(path.read_text())
    found = [
        f"{path.name}:{line} imports {m}" for line, m in imported_modules(tree) if under(m, MODEL_MODULES)
    ]
    found += [
        f"{path.name}:{node.lineno} calls .{node.func.attr}()"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in MODEL_CALLS
    ]
    return sorted(set(found))


def drawing_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return sorted(
        {f"{path.name}:{line} imports {m}" for line, m in imported_modules(tree) if under(m, DRAWING)}
    )


def re_exports(path: Path) -> list[str]:
    """Module-level imported names the module never uses (kept only for others to import from it), and
    an ``__all__`` (a list of what the module passes on)."""
    tree = ast.parse(path.read_text())
    imported: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imported.update({(a.asname or a.name): node.lineno for a in node.names})
        elif isinstance(node, ast.Import):
            imported.update({(a.asname or a.name).split(".")[0]: node.lineno for a in node.names})
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    found = [
        f"{path.name}:{line} imports {name} and never uses it"
        for name, line in imported.items()
        if name not in used
    ]
    found += [
        f"{path.name}:{node.lineno} declares __all__"
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    return sorted(found)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_a_report_runs_no_model(package):
    report = package / "report.py"
    if not report.exists():
        pytest.skip(f"{package.name} has no report.py")
    found = model_runs(report)
    assert not found, f"{package.name}/report.py runs a model; move it to experiments.py: {found}"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_only_the_report_draws(package):
    found = [
        hit
        for path in sorted(package.glob("*.py"))
        if path.name != "report.py"
        for hit in drawing_imports(path)
    ]
    assert not found, f"{package.name} draws outside report.py; move the figure to report.py: {found}"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_module_re_exports_another(package):
    found = [
        hit for path in sorted(package.glob("*.py")) if path.name != "__init__.py" for hit in re_exports(path)
    ]
    assert not found, f"{package.name} passes names on; import them from where they are defined: {found}"


def test_the_scans_see_each_breach(tmp_path):
    report = tmp_path / "report.py"
    report.write_text(
        "from temporag.llm import make_llm\n"
        "def k_sweep(method, qs):\n    return method.pipeline(qs), method.retrieve(qs, 5)\n"
        "def fig(frame):\n    return frame.plot()\n"
    )
    assert model_runs(report) == [
        "report.py:1 imports temporag.llm",
        "report.py:1 imports temporag.llm.make_llm",
        "report.py:3 calls .pipeline()",
        "report.py:3 calls .retrieve()",
    ]
    step = tmp_path / "experiments.py"
    step.write_text("import matplotlib.pyplot as plt\nfrom temporag.methods import plots\n")
    assert drawing_imports(step) == [
        "experiments.py:1 imports matplotlib.pyplot",
        "experiments.py:2 imports temporag.methods.plots",
    ]
    hub = tmp_path / "hub.py"
    hub.write_text(
        "from __future__ import annotations\nfrom a import b, c\nimport numpy as np\n"
        "__all__ = ['b']\n\ndef f() -> np.ndarray:\n    return c()\n"
    )
    assert re_exports(hub) == ["hub.py:2 imports b and never uses it", "hub.py:4 declares __all__"]
