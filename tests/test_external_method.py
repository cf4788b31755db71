"""A method from outside the kit: ``examples/bm25_baseline`` joins the registry, the contract test,
``temporag reproduce`` and the leaderboard through its entry point alone.

It is installed here as an installer records it — a ``.dist-info`` folder holding the entry points its
``pyproject.toml`` declares, on the path beside its source — so a fresh clone needs no pip step, and no
kit file names it."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import nbformat
import pytest
from test_method_contract import QUIDS, check_row, workspace  # noqa: F401 - the contract's fixture

from temporag.methods import registry
from temporag.methods.params import ParameterError
from temporag.methods.registry import check_given, declarations
from temporag.run import runner

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "bm25_baseline"


def install_entry_points(project: Path, site: Path) -> Path:
    """A dist-info for ``project`` in ``site`` with the entry points its pyproject.toml declares."""
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    dist = site / f"{meta['name'].replace('-', '_')}-{meta['version']}.dist-info"
    dist.mkdir(parents=True)
    name, version = meta["name"], meta["version"]
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for group, points in meta["entry-points"].items():
        lines += [f"[{group}]", *(f"{key} = {value}" for key, value in points.items())]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return dist


@pytest.fixture()
def installed(tmp_path, monkeypatch):
    """The example installed for this test (and for the kernels it starts), forgotten afterwards."""
    site = tmp_path / "site"
    install_entry_points(EXAMPLE, site)
    for path in (EXAMPLE, site):
        monkeypatch.syspath_prepend(str(path))
    kernel_path = [str(site), str(EXAMPLE), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(kernel_path))
    registry.refresh()
    yield registry.get("bm25_baseline")
    registry.refresh()


def test_the_example_registers_itself(installed):
    from temporag.leaderboard.roster import method_names

    assert installed.notebook_path == EXAMPLE / "bm25_baseline" / "bm25_baseline.ipynb"
    assert Path(registry.__file__).parent not in Path(installed.notebook_path).parents
    assert method_names()[-1] == "BM25 baseline"
    assert runner.available_notebooks()[-2:] == ["bm25_baseline", "leaderboard"]
    assert runner.notebook_path("bm25_baseline") == installed.notebook_path


def test_its_parameters_are_found_through_the_registry(installed):
    """The notebook's parameters cell is its package's declaration, and the runner checks the example's own
    parameter before any kernel starts, as for a kit notebook."""
    from bm25_baseline.params import PARAMETERS

    assert declarations("bm25_baseline") is PARAMETERS
    nb = nbformat.read(installed.notebook_path, as_version=4)
    [cell] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert cell.source == PARAMETERS.cell()
    with pytest.raises(ParameterError, match="parameter reader_k = 0 is not allowed"):
        check_given("bm25_baseline", {"reader_k": 0}, PARAMETERS.names)


def test_without_its_entry_point_the_kit_does_not_know_it():
    registry.refresh()
    assert "bm25_baseline" not in {e.name for e in registry.entries()}
    assert declarations("bm25_baseline") is None


@pytest.mark.notebook
@pytest.mark.slow
def test_the_example_joins_reproduce(installed, tmp_path, monkeypatch):
    monkeypatch.setenv("TEMPORAG_EMBED_BACKEND", "torch")
    where = {"runs_dir": tmp_path / "runs", "figures_dir": tmp_path / "figures"}
    (outcome,) = runner.reproduce(["bm25_baseline"], "smoke", **where)
    assert outcome.status == "ok", outcome.error
    own = json.loads((outcome.output_dir / "results.json").read_text())
    recall = [own["metrics"][f"bm25/answer_recall@{k}"]["value"] for k in (1, 5, 10, 20)]
    assert recall == sorted(recall) and recall[-1] > 0.2 and own["parameters"]["sample_size"] == 40


@pytest.mark.notebook
@pytest.mark.slow
def test_the_example_joins_the_leaderboard_smoke_run(installed, tmp_path, monkeypatch):
    """The leaderboard's smoke run with the example installed: every check of the kit's own smoke test
    (over every registered row, the example's included), and the example's row."""
    from test_notebooks import _run_smoke

    monkeypatch.setenv("TEMPORAG_EMBED_BACKEND", "torch")
    data = _run_smoke(REPO / "notebooks" / "leaderboard.ipynb", tmp_path, "torch")
    rows = {r["method"]: r for r in data["tables"]["leaderboard"]["records"]}
    assert "BM25 baseline" in rows and rows["BM25 baseline"]["facts / question"] == 20
    assert 0 < data["metrics"]["leaderboard/BM25 baseline/template Hits@1 strict"]["value"] <= 1


def test_without_a_headline_the_example_has_pages_but_no_first_page_row(installed):
    from temporag.batch import book
    from temporag.leaderboard.report import code_table

    assert installed.book is None and installed.released_code is None
    page = {p.paper: p for p in book.pages()}["bm25_baseline"]
    assert (page.title, page.headline) == ("bm25_baseline", None)
    names = ["tour", "sar", "bm25_baseline", "leaderboard"]
    html = book.front_page({}, {}, names).cells[0].outputs[0]["data"]["text/html"]
    table, listed = html.split("<h2>Pages</h2>")
    assert table.count("<tr>") == 1 + 2  # the header, the tour's row and SAR's: none for the example
    assert "bm25" not in table.lower()
    assert "<a href='bm25_baseline.html'>bm25_baseline</a>" in listed
    # a baseline that reproduces no paper has no rows in the paper vs released code table either
    assert "bm25_baseline" not in set(code_table(REPO / "figures")["method"])


def test_a_grid_runs_the_example_from_its_own_package(installed, tmp_path):
    """A grid finds the installed notebook as the runner does (no copy in notebooks/), and reads its
    parameters cell there."""
    from temporag.batch import grid

    path = tmp_path / "bm25.toml"
    path.write_text('[[run]]\nnotebooks = ["bm25_baseline"]\nreader_k = [5, 10]\n', encoding="utf-8")
    where = {"notebook_dir": registry.NOTEBOOK_DIR, "figures_dir": tmp_path / "f", "runs_dir": tmp_path / "r"}
    jobs = grid.expand(path, **where)
    assert [(j.notebook, j.parameters["reader_k"]) for j in jobs] == [("bm25_baseline", k) for k in (5, 10)]
    path.write_text('[[run]]\nnotebooks = ["bm25_baseline"]\nreader_k = 0\n', encoding="utf-8")
    with pytest.raises(Exception, match="reader_k = 0"):  # its own rule, read from its own cell
        grid.expand(path, **where)


def test_the_book_and_a_run_find_the_example_notebook_through_the_registry(installed, tmp_path):
    from temporag.batch import book

    own = installed.notebook_path
    assert registry.notebook_path("bm25_baseline") == own == runner.notebook_path("bm25_baseline")
    for name in ("a_first.ipynb", "bm25_baseline.ipynb"):  # the book shows the notebook named like its own
        (tmp_path / name).write_text("{}", encoding="utf-8")
    (tmp_path / "results.json").write_text('{"notebook": "bm25_baseline"}', encoding="utf-8")
    assert book.find_run(tmp_path, "bm25_baseline").notebook == tmp_path / "bm25_baseline.ipynb"


# last in the module: the contract's workspace fixture points TEMPORAG_CACHE at a temporary folder
# for the rest of the module, which the notebook runs above must not inherit
def test_the_example_keeps_the_retrieval_contract(installed, workspace):  # noqa: F811
    (contender,) = installed.leaderboard
    check_row(installed, contender, workspace)
    method, _ = contender.build(workspace)
    iraq = workspace.kg.entity_labels.index("Iraq")
    first = method.retrieve(workspace.questions[:1], 5, progress=False).ids[0]
    # "... who was the first to visit Iraq?": the words find visits with Iraq on one side
    assert ((workspace.kg.s[first] == iraq) | (workspace.kg.o[first] == iraq)).all()
