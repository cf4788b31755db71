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
    """Cosines of one question to every triple: ``coarse`` for every triple (within ``error``) and
    :meth:`exact` for the triples asked about.  Built from a matrix product's row, every cosine is already
    exact and ``error`` is 0; :meth:`for_questions` decides which kind a retrieval gets."""

    def __init__(
        self, coarse: np.ndarray, error: float = 0.0, vectors: np.ndarray | None = None, q=None
    ) -> None:
        self.coarse, self.error, self.vectors, self.q = coarse, error, vectors, q
        self._exact = coarse if error == 0.0 else np.full(len(coarse), np.nan, dtype=np.float32)

    @classmethod
    def wrap(cls, scores: TripleScores | np.ndarray) -> TripleScores:
        """``scores`` itself, or a row of exact cosines wrapped."""
        return scores if isinstance(scores, cls) else cls(scores)

    @classmethod
    def for_questions(cls, vectors: np.ndarray, q_vecs: np.ndarray, half=None) -> list[TripleScores]:
        """One question with a float16 copy (``half``): coarse cosines, made exact on demand.  Otherwise
        one float32 matrix product for every question (its row is read once per batch, not per question)."""
        q_vecs = np.atleast_2d(q_vecs).astype(np.float32)
        if half is None or len(q_vecs) != 1:
            return [cls(row) for row in q_vecs @ vectors.T]
        import torch

        q = np.ascontiguousarray(q_vecs[0])
        coarse = torch.mv(half, torch.from_numpy(q).to(torch.float16)).float().numpy()
        return [cls(coarse, COARSE_ERROR, vectors, q)]

    def exact(self, triples: np.ndarray) -> np.ndarray:
        """Float32 cosines of the given triples (each computed once per question)."""
        values = self._exact[triples]
        if self.error == 0.0:
            return values
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
