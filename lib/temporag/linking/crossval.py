"""k-fold cross-validation of the offline parser: seeded folds, per-fold accuracy, mean and spread.

The linker's rules come from the KG and general English; the few numbers it has (the degree weight of
its grounding score) are chosen on k − 1 folds and scored on the held-out fold, so a per-fold table shows
how far an unseen question set can move the accuracy.  The gold (what "correct" means for a parse) is
the caller's: :func:`temporag.methods.tecqa.analysis.parser_crossval` wires TECQA's data-derived gold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd


def fold_ids(n: int, k: int = 5, seed: int = 0) -> np.ndarray:
    """The fold (0 … k−1) of each of ``n`` items: a seeded permutation dealt round-robin, so folds are
    disjoint, cover every item and differ in size by at most one."""
    if k < 2 or n < k:
        raise ValueError(f"k-fold needs 2 ≤ k ≤ n, got k={k}, n={n}")
    folds = np.empty(n, dtype=np.int64)
    folds[np.random.default_rng(seed).permutation(n)] = np.arange(n) % k
    return folds


def cross_validate(
    n: int,
    score: Callable[[np.ndarray, np.ndarray], Mapping[str, np.ndarray]],
    k: int = 5,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per fold, then ``mean`` and ``std`` rows: ``score(train, test)`` fits whatever it tunes
    on the ``train`` indices and returns per-question 0/1 (or float) arrays over ``test`` (metric → array);
    a non-array entry (a chosen setting) is reported as is."""
    folds = fold_ids(n, k, seed)
    rows = []
    for f in range(k):
        test, train = np.flatnonzero(folds == f), np.flatnonzero(folds != f)
        row: dict = {"fold": str(f + 1), "n": len(test)}
        for name, value in score(train, test).items():
            row[name] = float(np.mean(value)) if isinstance(value, np.ndarray) else value
        rows.append(row)
    table = pd.DataFrame(rows)
    metrics = [c for c in table.columns if c not in ("fold", "n") and pd.api.types.is_float_dtype(table[c])]
    summary = [
        {"fold": "mean", "n": n, **{m: float(table[m].mean()) for m in metrics}},
        {"fold": "std", "n": n, **{m: float(table[m].std(ddof=0)) for m in metrics}},
        {"fold": "min", "n": n, **{m: float(table[m].min()) for m in metrics}},
    ]
    return pd.concat([table, pd.DataFrame(summary)], ignore_index=True)


def choose_on(train: np.ndarray, grid: Sequence, correct: Mapping) -> object:
    """The grid setting with the highest mean of ``correct[setting]`` on ``train`` (first wins a tie)."""
    return max(grid, key=lambda p: float(np.mean(correct[p][train])))
