"""Interactive runs never touch published runs.

A notebook run outside the runner (JupyterLab, plain papermill) writes to runs/interactive/<paper>/ and
may not write into a folder the runner published; the runner never takes a folder changed after its stamp
for current; an open kernel holding its interactive folder does not block the runner's folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill as pm
import pytest

from temporag.batch.index import find_runs
from temporag.notebook import outputs
from temporag.run.runner import changed_since_stamp, manifest, run_notebook

# The kernel writes under the test's runs/ folder (`runs`), not the repository's: a kernel is another
# process, so the test hands it the folder as a parameter.
PARAMETERS = 'profile = "smoke"\nvalue = 1\noutput_dir = None\nruns = None'
BODY = """
import pathlib
import temporag.notebook.outputs as o
o.RUNS_DIR = pathlib.Path(runs)
from temporag.notebook.results import Results
results = Results("probe", {"profile": profile, "value": value, "output_dir": output_dir}, out_dir=output_dir)
results.metric("probe/value", value)
"""


@pytest.fixture()
def probe(tmp_path):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell(PARAMETERS)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(BODY)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, nbs / "probe.ipynb")
    runs = tmp_path / "runs"
    kw = {"notebook_dir": nbs, "figures_dir": tmp_path / "figures", "runs_dir": runs}
    return nbs / "probe.ipynb", runs, kw


def _papermill(notebook: Path, out: Path, **parameters) -> None:
    pm.execute_notebook(
        str(notebook), str(out), parameters=parameters, progress_bar=False, cwd=str(out.parent)
    )


def _value(folder: Path) -> int:
    return json.loads((folder / "results.json").read_text())["metrics"]["probe/value"]


@pytest.mark.slow
def test_plain_papermill_writes_its_own_folder_and_the_runner_publishes(probe, tmp_path):
    notebook, runs, kw = probe
    published = run_notebook("probe", {"profile": "smoke", "value": 0, "runs": str(runs)}, **kw)
    assert published.status == "ok" and published.output_dir == runs / "smoke" / "probe"
    _papermill(notebook, tmp_path / "by-hand.ipynb", value=1, runs=str(runs))
    assert _value(runs / "interactive" / "probe") == 1  # the user's run, named so they find it
    assert _value(runs / "smoke" / "probe") == 0  # the published run is untouched...
    assert changed_since_stamp(runs / "smoke" / "probe") == []  # ...and still as its stamp describes
    # pointing a run outside the runner at the published folder is refused before anything is written
    with pytest.raises(pm.PapermillExecutionError, match="published by `temporag reproduce` only"):
        _papermill(
            notebook,
            tmp_path / "over.ipynb",
            value=2,
            runs=str(runs),
            output_dir=str(runs / "smoke" / "probe"),
        )
    assert _value(runs / "smoke" / "probe") == 0
    again = run_notebook("probe", {"profile": "smoke", "value": 0, "runs": str(runs)}, **kw)
    assert again.status == "skipped"


@pytest.mark.slow
def test_a_folder_changed_after_its_stamp_is_not_current(probe):
    _, runs, kw = probe
    params = {"profile": "smoke", "value": 0, "runs": str(runs)}
    assert run_notebook("probe", params, **kw).status == "ok"
    folder = runs / "smoke" / "probe"
    stamp = json.loads((folder / outputs.STAMP).read_text())
    assert stamp["files"] == manifest(folder) and {"probe.ipynb", "results.json", "tables.md"} <= set(
        stamp["files"]
    )
    assert run_notebook("probe", params, **kw).status == "skipped"
    data = json.loads((folder / "results.json").read_text())
    data["metrics"]["probe/value"] = 1  # another run (or a hand) changed the numbers after publishing
    (folder / "results.json").write_text(json.dumps(data))
    assert changed_since_stamp(folder) == ["results.json"]
    assert [e.status for e in find_runs([runs])] == ["changed after its run"]  # the index says so too
    rerun = run_notebook("probe", params, **kw)
    assert rerun.status == "ok" and _value(folder) == 0
    (folder / "extra.png").write_bytes(b"\x89PNG")  # a file added counts too
    assert changed_since_stamp(folder) == ["extra.png"]
    assert run_notebook("probe", params, **kw).status == "ok" and not (folder / "extra.png").exists()


@pytest.mark.slow
def test_an_open_kernel_does_not_block_the_runner(probe, tmp_path):
    """A process that ran the notebook interactively keeps its folder's lock while it lives (as a Lab
    kernel does); the runner's folder is another one, so reproduce runs."""
    _, runs, kw = probe
    holder = (
        "import pathlib, sys, time\n"
        "import temporag.notebook.outputs as o\n"
        f"o.RUNS_DIR = pathlib.Path({str(runs)!r})\n"
        "from temporag.notebook.results import Results\n"
        "Results('probe', {'profile': 'smoke'})\n"
        "print('held', flush=True)\n"
        "time.sleep(120)\n"
    )
    kernel = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    try:
        assert kernel.stdout.readline().strip() == "held"
        with pytest.raises(outputs.OutputLocked):  # it does hold its own folder...
            outputs.acquire(runs / "interactive" / "probe")
        outcome = run_notebook("probe", {"profile": "smoke", "value": 3, "runs": str(runs)}, **kw)
        assert outcome.status == "ok", outcome.error  # ...and not the runner's
        assert _value(runs / "smoke" / "probe") == 3
    finally:
        kernel.kill()
        kernel.wait()


def test_outside_the_runner_figures_and_stamped_folders_are_refused(tmp_path):
    stamped = tmp_path / "runs" / "smoke" / "tour"
    stamped.mkdir(parents=True)
    (stamped / outputs.STAMP).write_text("{}")
    with pytest.raises(outputs.ParameterError, match="holds a run stamp"):
        outputs.check_unpublished(stamped, figures_dir=tmp_path / "figures")
    with pytest.raises(outputs.ParameterError, match="inside figures/"):
        outputs.check_unpublished(tmp_path / "figures" / "tour", figures_dir=tmp_path / "figures")
    outputs.check_unpublished(tmp_path / "runs" / "interactive" / "tour", figures_dir=tmp_path / "figures")
    assert (
        outputs.interactive_output_dir("00_tour", tmp_path / "runs")
        == tmp_path / "runs" / "interactive" / "tour"
    )
