"""The kit's one stable top-k (``temporag.retrieval.topk``), which every ranking calls: the semantic
baseline, SAR's SEARCH, TECQA's implicit anchors, TimeR4's rerank and store, relation grounding, IA-RAG.

It must equal the first k of a full ``np.lexsort`` by (−score, position) — the definition the five former
copies shared (checked against each of them, on the same arrays, before they were removed) — on ties
above all, since a tie broken the other way changes the evidence a reader is shown."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.retrieval.topk import top_k_stable


def reference(scores: np.ndarray, k: int, latest: bool = False) -> list[int]:
    """The definition: sort everything by (−score, position) (position reversed with ``latest``)."""
    pos = np.arange(len(scores))
    return np.lexsort((-pos if latest else pos, -scores))[: max(k, 0)].tolist()


def tie_heavy_arrays():
    """Few distinct values (ties straddle every cut), -inf floors (IA-RAG's masked scores), long arrays
    (SAR's sampled bound), both float widths."""
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 17, 300, 5000, 100_000):
        for levels in (1, 2, 3, 10):
            x = rng.integers(0, levels, n).astype(np.float64) / 7
            yield x.astype(np.float32)
            yield x
        floored = rng.integers(0, 4, n).astype(np.float32)
        floored[rng.random(n) < 0.2] = -np.inf
        yield floored
        yield rng.random(n)


@pytest.mark.parametrize("latest", [False, True])
def test_equals_a_full_sort_on_ties(latest):
    for scores in tie_heavy_arrays():
        for k in (1, 2, 3, 5, 15, 40, 1000, 10**6):
            assert top_k_stable(scores, k, latest=latest).tolist() == reference(scores, k, latest), (
                len(scores), k
            )


def test_ties_go_to_the_earliest_or_the_latest():
    scores = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 0.5], dtype=np.float32)
    assert top_k_stable(scores, 2).tolist() == [1, 2]
    assert top_k_stable(scores, 2, latest=True).tolist() == [4, 2]
    assert top_k_stable(scores, 10).tolist() == [1, 2, 4, 3, 0, 5]


def test_keeps_the_earliest_of_ties_that_straddle_the_cut():
    """An argpartition picks arbitrary members of the tie at the k-th place (TimeR4's former copy returned
    [5, 700, 984, 985] here)."""
    scores = np.zeros(1000, dtype=np.float32)
    scores[[5, 700]] = 1.0
    assert top_k_stable(scores, 4).tolist() == [5, 700, 0, 1]
    with_floor = np.full(6, -np.inf)
    with_floor[4] = 0.2
    assert top_k_stable(with_floor, 3).tolist() == [4, 0, 1]  # IA-RAG's masked scores


def test_the_sampled_bound_keeps_every_tie_of_a_long_array():
    rng = np.random.default_rng(1)
    for _ in range(10):
        scores = rng.integers(0, 50, size=60_000).astype(np.float32)  # many ties, sampled bound on
        for latest in (False, True):
            assert top_k_stable(scores, 15, latest=latest).tolist() == reference(scores, 15, latest)


def test_nan_ranks_last_as_lexsort_orders_it():
    """A NaN in the sample must not set the bound (np.partition sorts NaN above every number)."""
    scores = np.array([np.nan, 0.2, np.nan, 0.9, 0.2], dtype=np.float32)
    assert top_k_stable(scores, 3).tolist() == [3, 1, 4]
    assert top_k_stable(scores, 5).tolist() == [3, 1, 4, 0, 2] == reference(scores, 5)
    long = np.full(50_000, np.nan)
    long[[7, 40_000]] = 1.0
    assert top_k_stable(long, 3).tolist() == [7, 40_000, 0] == reference(long, 3)


def test_k_out_of_range():
    scores = np.arange(5, dtype=np.float32)
    assert top_k_stable(scores, 0).tolist() == [] and top_k_stable(scores, -3).tolist() == []
    assert top_k_stable(scores, 50).tolist() == [4, 3, 2, 1, 0]
    assert top_k_stable(np.empty(0), 3).tolist() == []
    assert top_k_stable(scores, 2).dtype == np.int64
