"""Figures inline: ``Results.figure`` saves PNG and SVG and, inside a kernel, shows the
figure in its cell exactly once — also when the notebook switched matplotlib's inline backend on, which
would show an open figure a second time at the end of the cell."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]

SETUP = """\
from temporag.notebook.results import Results
from temporag.methods import plots
import matplotlib.pyplot as plt
plots.use_house_style()
R = Results("display_check", {{"seed": 0}}, out_dir={out!r})"""

FIGURE = """\
{magic}
fig, ax = plt.subplots()
ax.plot([0, 1, 2], [2, 0, 1])
print(fig.dpi)
R.figure("line", fig)"""


def _run(cells: list[str], tmp_path: Path, monkeypatch) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    # the kernel inherits this process's environment: this checkout's library first
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "lib"), os.environ.get("PYTHONPATH", "")]))
    where = {"metadata": {"path": str(tmp_path)}}
    NotebookClient(nb, timeout=300, kernel_name="python3", resources=where).execute()
    return nb


@pytest.mark.parametrize("magic", ["", "%matplotlib inline"], ids=["agg", "inline-backend"])
def test_a_saved_figure_shows_once_in_its_cell(tmp_path, monkeypatch, magic):
    out = tmp_path / "out"
    nb = _run([SETUP.format(out=str(out)), FIGURE.format(magic=magic)], tmp_path, monkeypatch)
    outputs = nb.cells[1].outputs
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1, outputs
    assert not [o for o in outputs if o.output_type in ("execute_result", "error")], outputs  # no path shown
    shown = base64.b64decode(images[0].data["image/png"])
    assert shown == (out / "line.png").read_bytes()  # the saved PNG itself
    width = int.from_bytes(shown[16:20], "big")
    [dpi] = [float(o.text) for o in outputs if o.output_type == "stream"]
    assert images[0].metadata["image/png"]["width"] == round(width * dpi / 150)  # the figure's screen size
    assert (out / "line.svg").stat().st_size > 1_000
    assert not [o for o in nb.cells[0].outputs if "image/png" in o.get("data", {})]


def test_outside_a_kernel_nothing_is_displayed_and_the_figure_is_closed(tmp_path, capsys):
    import matplotlib.pyplot as plt

    from temporag.methods import plots  # noqa: F401 - the house backend (Agg)
    from temporag.notebook.results import Results

    r = Results("display_check", {"seed": 0}, out_dir=tmp_path)
    fig, ax = plt.subplots()
    ax.bar([0, 1], [1, 2])
    assert r.figure("bars", fig) is None
    assert not plt.fignum_exists(fig.number)
    assert capsys.readouterr().out == ""
    assert (tmp_path / "bars.png").stat().st_size > 1_000 and r.data["figures"] == ["bars"]


def test_the_overview_lists_what_the_run_saved(tmp_path):
    import pandas as pd

    from temporag.notebook.results import Results

    r = Results("display_check", {"seed": 0}, out_dir=tmp_path)
    r.metric("a", 1.0)
    r.table("recall", pd.DataFrame({"k": [1, 5], "recall": [0.25, 0.5]}))
    r.predictions("semantic", [{"quid": 1}, {"quid": 2}])
    text = r.overview().data
    assert f"Saved in `{tmp_path}`" in text
    assert "1 numbers" in text and "semantic (2)" in text
    assert "one CSV per table: `recall`" in text and "PNG and SVG per figure: none" in text
