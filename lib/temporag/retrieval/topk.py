"""The kit's one top-k: the positions of the k best scores, best first, equal scores in position order.

Why one: every ranking the kit records (the semantic baseline's facts, SAR's SEARCH, TECQA's implicit
anchors, TimeR4's rerank, relation grounding, IA-RAG's units) must break ties the same way, or a method's
evidence would depend on which copy of the selection it happened to call.  Positions are the KG's file
order (chronological), so ties go to the earliest fact; SAR's RE-ORDER asks for the latest instead.

A NaN score ranks below every number, as ``np.lexsort`` orders it.
"""

from __future__ import annotations

import numpy as np


def top_k_stable(scores: np.ndarray, k: int, *, latest: bool = False) -> np.ndarray:
    """Positions of the ``k`` best scores, best first; equal scores go to the earliest positions, or the
    latest with ``latest=True``.  Exactly the first ``k`` of a full ``np.lexsort`` by (−score, position).

    The k-th best of any subset is a lower bound of the k-th best overall, so a strided sample's k-th best
    cuts a long array to a few hundred candidates before the exact selection (a full partition of 461K
    scores costs more than the rest of one SAR SEARCH)."""
    scores = np.asarray(scores)
    n = len(scores)
    k = min(int(k), n)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    stride = max(1, n // (k * 256))
    sample = scores[::stride]
    if sample.dtype.kind in "fc":
        sample = sample[~np.isnan(sample)]  # a NaN ranks last: it never sets the bound
    if len(sample) >= k:
        bound = np.partition(sample, len(sample) - k)[len(sample) - k]
        cand = np.flatnonzero(scores >= bound)  # at least the k sampled scores ≥ bound; never a NaN
        sub = scores[cand]
        if len(cand) > k:
            threshold = np.partition(sub, len(sub) - k)[len(sub) - k]
            keep = sub >= threshold
            cand, sub = cand[keep], sub[keep]
    else:  # fewer than k numbers in the sample: rank everything (NaNs fill the tail in position order)
        cand, sub = np.arange(n), scores
    tie = -cand if latest else cand
    return cand[np.lexsort((tie, -sub))[:k]].astype(np.int64, copy=False)
