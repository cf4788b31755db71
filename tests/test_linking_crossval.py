"""The parser's cross-validation helper: seeded folds, and a tuned number fitted on the other folds."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.linking.crossval import choose_on, cross_validate, fold_ids


def test_folds_are_deterministic_disjoint_and_cover_every_question():
    folds = fold_ids(954, 5, seed=0)
    assert np.array_equal(folds, fold_ids(954, 5, seed=0))
    assert not np.array_equal(folds, fold_ids(954, 5, seed=1))
    assert sorted(np.bincount(folds).tolist()) == [190, 191, 191, 191, 191]  # every question, once
    assert set(folds.tolist()) == {0, 1, 2, 3, 4}
    with pytest.raises(ValueError):
        fold_ids(3, 5)


def test_a_tuned_setting_is_fitted_on_the_other_folds_only():
    n = 10
    # setting "a" is right on every question but the first two, "b" only on those two
    correct = {"a": np.array([0, 0] + [1] * 8, dtype=float), "b": np.array([1, 1] + [0] * 8, dtype=float)}
    seen = []

    def score(train, test):
        assert not set(train) & set(test) and len(train) + len(test) == n
        seen.extend(test.tolist())
        p = choose_on(train, ("a", "b"), correct)
        return {"setting": p, "acc": correct[p][test]}

    table = cross_validate(n, score, k=5, seed=3)
    assert sorted(seen) == list(range(n))
    assert table["fold"].tolist() == ["1", "2", "3", "4", "5", "mean", "std", "min"]
    assert set(table["setting"][:5]) == {"a"}  # "a" wins on every training part
    assert table.loc[5, "acc"] == pytest.approx(0.8) and table.loc[7, "acc"] in (0.0, 0.5)
