"""declared_parameters: what the runner validates ``-p`` names against, read from the parameters cell."""

from __future__ import annotations

import nbformat

from temporag.notebook.outputs import declared_parameters


def _notebook(tmp_path, source: str):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), cell]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    return path


def test_single_and_paired_knobs_are_declared(tmp_path):
    path = _notebook(
        tmp_path,
        'profile = "smoke"  # a knob\nsample_size, reader_sample = None, 200  # two on a line\n'
        "ks = [1, 5]\nlimit = 10 ** 3\na, b = (1, 2), 3\n",
    )
    assert declared_parameters(path) == {
        "profile": "smoke",
        "sample_size": None,
        "reader_sample": 200,
        "ks": [1, 5],
        "limit": "10 ** 3",  # not a literal: reported as its source
        "a": (1, 2),
        "b": 3,
    }


def test_unpacking_a_non_tuple_declares_nothing(tmp_path):
    assert declared_parameters(_notebook(tmp_path, "a, b = pair\n")) == {}
