"""One question's cosine to each distinct triple, exact (float32) wherever a ranking needs it.

Scoring one question reads every triple vector: 166,760 × 384 float32 is 256 MB, and at a laptop's memory
bandwidth that read *is* the latency of a one-question retrieval (~11 ms of the semantic baseline's 12).  A
float16 copy halves the bytes and gives every cosine within :data:`COARSE_ERROR`; the rankings then ask for
the float32 cosine only of triples that can still reach their top k (:func:`top_events`, :func:`top_of` in
the package), computed once per triple and question so every comparison sees one value per triple.

A float32 cosine computed for a few rows may differ from the same row of a whole-matrix product in the last
bit (BLAS blocks them differently) — as a batch of 64 questions already differs from one question at a
time; rankings agree up to such float ties.
"""

from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)

# |float16 cosine − float32 cosine| for unit vectors: two roundings of each factor (2 × 2⁻¹¹ relative) and
# one of the result bound it by ~1.5e-3 when the products accumulate in float32; 3.2e-4 was the largest seen
# over 200 MultiTQ questions × 166,760 triples.  Candidates are kept within this margin, so a larger value
# only costs time.
COARSE_ERROR = 1e-2


class TripleScores:
    """Cosines of one question ``q`` to the rows of ``vectors``: ``coarse`` for every row (within
    ``error``), :meth:`exact` for the rows asked about.  ``row`` given: every cosine is already exact (a
    batch's matrix product) and ``error`` is 0."""

    def __init__(
        self,
        vectors: np.ndarray | None,
        q: np.ndarray | None,
        half=None,
        row: np.ndarray | None = None,
    ) -> None:
        self.vectors = vectors
        self.q = None if q is None else np.ascontiguousarray(q, dtype=np.float32)
        if row is None and half is None:
            row = vectors @ self.q
        if row is not None:
            self.coarse, self.error, self._exact = row, 0.0, row
        else:
            import torch

            q16 = torch.from_numpy(self.q).to(torch.float16)
            self.coarse = torch.mv(half, q16).float().numpy()
            self.error = COARSE_ERROR
            self._exact = np.full(len(vectors), np.nan, dtype=np.float32)

    @classmethod
    def of_row(cls, row: np.ndarray) -> TripleScores:
        """Wrap cosines already computed for every triple (a matrix product's row)."""
        return cls(None, None, row=row)

    def exact(self, triples: np.ndarray) -> np.ndarray:
        """Float32 cosines of the given triples (each computed once per question)."""
        if self.error == 0.0:
            return self._exact[triples]
        values = self._exact[triples]
        missing = np.isnan(values)
        if missing.any():
            todo = np.unique(np.asarray(triples)[missing])
            self._exact[todo] = self.vectors[todo] @ self.q
            values = self._exact[triples]
        return values


def half_precision_copy(vectors: np.ndarray):
    """The float16 copy of ``vectors`` as a torch tensor, or None (then every question reads the float32
    vectors) when this machine's float16 product strays beyond :data:`COARSE_ERROR` on a probe."""
    import torch

    half = torch.from_numpy(np.ascontiguousarray(vectors)).to(torch.float16)
    probe = np.random.default_rng(0).standard_normal((2, vectors.shape[1])).astype(np.float32)
    probe /= np.linalg.norm(probe, axis=1, keepdims=True)
    coarse = [torch.mv(half, torch.from_numpy(p).to(torch.float16)).float().numpy() for p in probe]
    worst = max(float(np.abs(c - vectors @ p).max()) for c, p in zip(coarse, probe))
    if not worst <= COARSE_ERROR / 4:
        log.warning("float16 cosines stray by %.2g here; scoring with the float32 vectors only", worst)
        return None
    return half
