"""The house-style charts drawn with seaborn: what they show, checked on the figure objects."""

from __future__ import annotations

import numpy as np
import pandas as pd

from temporag.methods import plots


def test_heatmap_writes_every_cell_with_the_first_row_at_the_bottom(tmp_path):
    grid = np.array([[0.61, 0.64], [0.70, np.nan]])
    fig = plots.heatmap(grid, [5, 40], [10, 20], title="K1 × K2", xlabel="K2", ylabel="K1")
    ax = fig.axes[0]
    cells = {(round(t.get_position()[0], 1), round(t.get_position()[1], 1)): t.get_text() for t in ax.texts}
    # seaborn puts cell (i, j) at (j + 0.5, i + 0.5); the inverted y axis puts row 0 at the bottom
    assert cells == {(0.5, 0.5): "0.61", (1.5, 0.5): "0.64", (0.5, 1.5): "0.70"}  # a missing cell stays blank
    assert ax.get_ylim()[0] < ax.get_ylim()[1]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["5", "40"]
    assert ax.get_xlabel() == "K2" and ax.get_ylabel() == "K1" and ax.get_title() == "K1 × K2"
    fig.savefig(tmp_path / "h.png")


def test_category_bars_one_bar_per_row_labelled_with_its_value():
    frame = pd.DataFrame(
        {
            "recall": ["Answer", "Anchor", "Answer", "Anchor"],
            "value": [0.9, 0.5, 0.3, 1234.0],
            "method": list("aabb"),
        }
    )
    fig = plots.category_bars(frame, "recall", "value", "method", ylim=None, title="t")
    ax = fig.axes[0]
    heights = sorted(round(p.get_height(), 3) for p in ax.patches if p.get_height() > 0)
    assert heights == [0.3, 0.5, 0.9, 1234.0]
    assert sorted(t.get_text() for t in ax.texts) == ["0.3", "0.5", "0.9", "1,234"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]


def test_grouped_bars_and_distribution_marks():
    fig = plots.grouped_bars(["equal", "first_last"], {"semantic": [0.5, 0.25], "TECQA": [1.0, 0.75]})
    assert sorted(round(p.get_height(), 2) for p in fig.axes[0].patches if p.get_height() > 0) == [
        0.25,
        0.5,
        0.75,
        1.0,
    ]
    fig = plots.distribution([1, 10, 100, 1000, 0], marks={"paper: 1,065 facts": 1065}, log10=True)
    ax = fig.axes[0]
    assert sum(p.get_height() for p in ax.patches) == 5  # the empty subgraph counts as 10^0
    (line,) = [ln for ln in ax.lines if ln.get_linestyle() == ":"]
    assert line.get_xdata()[0] == np.log10(1065)
    assert any(t.get_text().startswith("paper: 1,065") for t in ax.texts)
