"""Notebooks read like the paper: no code line is wider than the library's own lines (100 characters)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
MAX_LINE = 100


def wide_lines(path: Path) -> list[str]:
    """'cell N: line' for every code line over :data:`MAX_LINE` characters."""
    nb = nbformat.read(path, as_version=4)
    return [
        f"cell {i}: {line}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for line in cell.source.splitlines()
        if len(line) > MAX_LINE
    ]


def test_wide_lines_are_found(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("x = 1\n" + "y = " + "1 + " * 30 + "1"),
        nbformat.v4.new_markdown_cell("a long markdown line is prose, not code " * 5),
        nbformat.v4.new_code_cell("z = '" + "a" * (MAX_LINE - 6) + "'"),
    ]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    assert [line.split(":")[0] for line in wide_lines(path)] == ["cell 0"]


@pytest.mark.parametrize(
    "path",
    NOTEBOOKS,
    ids=[p.stem for p in NOTEBOOKS],
)
def test_no_notebook_code_line_is_over_100_characters(path):
    assert wide_lines(path) == []
