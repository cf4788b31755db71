"""``make lab`` saves the notebooks of notebooks/ as git keeps them (lib/temporag/run/nbstrip.py): what
JupyterLab 4.6 added to the tour when run and saved there (measured) is removed, nothing else."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from temporag.run import nbstrip

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _as_lab_saves_it(nb: dict) -> dict:
    """The tour as JupyterLab wrote it after running its first cells (the keys it changed, measured)."""
    nb = copy.deepcopy(nb)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for count, cell in enumerate(code[:3], 1):
        cell["execution_count"] = count
    code[2]["outputs"] = [{"name": "stdout", "output_type": "stream", "text": ["profile=smoke: 40 of 954\n"]}]
    figure = {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]}
    code[3]["outputs"] = [{"output_type": "display_data", "metadata": {}, "data": figure}]
    code[3]["metadata"]["scrolled"] = True  # a cell's view state
    code[3]["metadata"]["jupyter"] = {"outputs_hidden": True}
    nb["metadata"]["kernelspec"]["display_name"] = "Python 3 (ipykernel)"
    nb["metadata"]["language_info"] = {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": "3.11.7",
    }
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    return nb


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_notebook_in_git_is_already_as_lab_saves_it(path):
    text = path.read_text(encoding="utf-8")
    assert nbstrip.clean(text) == text  # so a notebook only opened and saved stays byte for byte the same
    assert nbstrip.clean(json.dumps(_as_lab_saves_it(json.loads(text)), indent=2)) == text


def test_the_pre_save_hook_strips_only_the_notebooks_folder():
    committed = json.loads((REPO / "notebooks" / "00_tour.ipynb").read_text(encoding="utf-8"))
    model = {"type": "notebook", "content": _as_lab_saves_it(committed)}
    nbstrip.lab_pre_save(model=model, path="notebooks/00_tour.ipynb", contents_manager=None)
    assert model["content"] == committed
    for elsewhere in ("runs/interactive/tour/00_tour.ipynb", "00_tour.ipynb", "notebooks/old/00_tour.ipynb"):
        model = {"type": "notebook", "content": _as_lab_saves_it(committed)}
        nbstrip.lab_pre_save(model=model, path=elsewhere, contents_manager=None)
        assert model["content"] == _as_lab_saves_it(committed), elsewhere  # a copy elsewhere keeps outputs
    edited = _as_lab_saves_it(committed)
    edited["cells"][0]["source"] = ["# my notes\n"]
    model = {"type": "notebook", "content": edited}
    nbstrip.lab_pre_save(model=model, path="/notebooks/00_tour.ipynb")
    assert model["content"]["cells"][0]["source"] == ["# my notes\n"]  # what a person wrote stays
    assert model["content"]["cells"][1:] == committed["cells"][1:]


def test_text_that_is_not_a_notebook_passes_through():
    for text in ("<<<<<<< HEAD\n{", "[]", '{"a": 1}'):
        assert nbstrip.clean(text) == text
