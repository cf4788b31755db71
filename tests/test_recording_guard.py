"""Recording happens in ``record.py`` only (CONTRIBUTING §3): no other library module and no notebook cell
writes into a run's :class:`~temporag.notebook.results.Results`.

A notebook cell calls steps, experiments, report and one ``record.<step>(results, ...)``; a package's other
modules compute and draw.  The scan reads every library module and every notebook's code cells and flags a
call of a Results recording method on any receiver (``results``, ``run.results``, ``R``, ...) — any call
that could bind to that method: a receiver the file imports (a module: ``claims.outcomes(...)``) cannot be
a Results, nor can a call whose arguments the method's signature cannot take (``model.save(path)``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
KIT = ROOT / "lib" / "temporag"
RESULTS_PY = KIT / "notebook" / "results.py"
EXAMPLES = ROOT / "examples"
# the kit's notebooks and each example method's (an installed method is held to the same rule)
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(EXAMPLES.glob("*/*/*.ipynb"))


def _results_class(source: str) -> ast.ClassDef:
    return next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef) and n.name == "Results")


def _self_calls(method: ast.FunctionDef) -> set[str]:
    return {
        n.func.attr
        for n in ast.walk(method)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "self"
    }


def recorder_methods(source: str) -> dict[str, ast.arguments]:
    """The Results methods that write into the run (``save`` and every public method that calls it,
    directly or through another recorder: ``compare`` records through ``metric``), with their
    signatures; read off the class, so a new recording method is guarded the day it is added.
    ``overview`` only shows what was saved: it is no recorder."""
    methods = {
        m.name: m
        for m in _results_class(source).body
        if isinstance(m, ast.FunctionDef) and not m.name.startswith("_")
    }
    found = {"save"}
    while grown := {name for name, m in methods.items() if name not in found and _self_calls(m) & found}:
        found |= grown
    return {name: methods[name].args for name in sorted(found)}


RECORDER = recorder_methods(RESULTS_PY.read_text())


def _can_bind(call: ast.Call, signature: ast.arguments) -> bool:
    """Whether ``call``'s arguments fit the method's signature (``self`` aside); a starred argument fits
    anything."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return True
    positional = [a.arg for a in (*signature.posonlyargs, *signature.args)][1:]  # without self
    if len(call.args) > len(positional) and signature.vararg is None:
        return False
    given = set(positional[: len(call.args)]) | {k.arg for k in call.keywords}
    named = set(positional) | {a.arg for a in signature.kwonlyargs}
    if signature.kwarg is None and not {k.arg for k in call.keywords} <= named:
        return False
    required = positional[: len(positional) - len(signature.defaults)]
    required += [a.arg for a, d in zip(signature.kwonlyargs, signature.kw_defaults, strict=True) if d is None]
    return set(required) <= given


def _imported_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def recorder_calls(source: str, modules: set[str] | None = None) -> list[tuple[int, str]]:
    """(line, call) for every call in ``source`` that could be a Results recording call; ``modules``: the
    names imported where it runs (by default, its own imports)."""
    tree = ast.parse(source)
    modules = _imported_names(tree) if modules is None else modules
    calls = [
        (node.lineno, ast.unparse(node.func))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in RECORDER
        and not (isinstance(node.func.value, ast.Name) and node.func.value.id in modules)
        and _can_bind(node, RECORDER[node.func.attr])
    ]
    return sorted(calls + _data_writes(tree))


def _data_writes(tree: ast.AST) -> list[tuple[int, str]]:
    """Writes straight into a Results' ``data`` (``R.data["data_checksums"] = ...``): recording too."""
    targets = [
        target
        for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AugAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
    ]
    return [
        (t.lineno, ast.unparse(t))
        for t in targets
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) and t.value.attr == "data"
    ]


def _code(cell: str) -> str:
    """A code cell as Python: IPython magics and shell lines blanked."""
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in cell.splitlines())


def notebook_recorder_calls(path: Path) -> list[str]:
    """'cell N: call' for every recording call in a notebook's code cells (the modules any cell imports
    are known in every cell, as in the kernel)."""
    cells = {i: _code(c.source) for i, c in enumerate(nbformat.read(path, as_version=4).cells)
             if c.cell_type == "code"}
    modules = set().union(*(_imported_names(ast.parse(code)) for code in cells.values()))
    return [f"cell {i}: {call}" for i, code in cells.items() for _, call in recorder_calls(code, modules)]


def test_the_recorder_methods_are_read_off_the_results_class():
    assert set(RECORDER) == {
        "save", "metric", "compare", "table", "figure", "outcomes", "skip_outcomes", "predictions"
    }


def test_the_scan_flags_recording_on_any_receiver_and_nothing_else():
    source = (
        "from temporag.methods.sar import claims, report\n"
        "def f(run, R, frame, model, declared):\n"
        "    R.table('k', frame)\n"  # 3: flagged
        "    run.results.metric('k', 1.0, n=3)\n"  # 4: flagged
        "    claims.outcomes(frame)\n"  # a module's function
        "    model.save('path')\n"  # save takes no argument: not a Results
        "    declared.table()\n"  # Results.table needs a key and a frame
        "    R.data['metrics']\n"
        "    R.overview()\n"  # shows what was saved, writes nothing
        "    return report.k_sweep(R), frame.figure(**{'key': 1})\n"  # 10: figure(**kw) may bind
        "R.data['data_checksums'] = {}\n"  # 11: a write into the recorded data
    )
    assert [line for line, _ in recorder_calls(source)] == [3, 4, 10, 11]


def test_a_planted_recorder_call_in_a_notebook_cell_is_found(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%matplotlib inline\nfrom temporag.methods.tecqa import record"),
        nbformat.v4.new_code_cell("record.subgraph(results, numbers)"),
        nbformat.v4.new_code_cell("x = 1\nrun.results.figure('sizes', fig)"),
    ]
    path = tmp_path / "planted.ipynb"
    nbformat.write(nb, path)
    assert notebook_recorder_calls(path) == ["cell 2: run.results.figure"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_notebook_cell_records(path):
    calls = notebook_recorder_calls(path)
    assert not calls, f"{path.name} records in a cell (move it into the package's record.py): {calls}"


METHODS = KIT / "methods"
PACKAGES = [
    *sorted(p for p in METHODS.iterdir() if (p / "__init__.py").exists()),
    KIT / "leaderboard",
    *sorted(p.parent for p in EXAMPLES.glob("*/*/__init__.py")),
]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_every_package_has_its_record_py(package):
    assert (package / "record.py").exists(), f"{package.name} has no record.py: its notebook records nowhere"


@pytest.mark.parametrize("package", [p for p in PACKAGES if not p.is_relative_to(KIT)], ids=lambda p: p.name)
def test_only_record_py_records_in_an_example_method(package):
    writes = {
        path.name: calls
        for path in sorted(package.glob("*.py"))
        if path.name != "record.py" and (calls := recorder_calls(path.read_text()))
    }
    assert not writes, f"{package.name} writes into a Results outside record.py: {writes}"


def test_only_record_py_records_in_the_library():
    """``record.py`` modules (each package's and the claims layer's) and the Results class itself are the
    only library code that writes into a run's results; the rest computes and draws and may read what was
    recorded (a headline table), never write."""
    writes = {
        str(path.relative_to(KIT)): calls
        for path in sorted(KIT.rglob("*.py"))
        if path.name != "record.py" and path != RESULTS_PY and (calls := recorder_calls(path.read_text()))
    }
    assert not writes, f"modules that write into a Results outside record.py: {writes}"
