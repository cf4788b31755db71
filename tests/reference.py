"""Plain reference implementations the tests check the kit's fast paths against (never used by the kit)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from temporag.methods.star_rag.ppr import Transition


def cosine_top_k(query: np.ndarray, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-k rows of a small candidate matrix by cosine (both sides normalised): (ids, scores)."""
    if len(vectors) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    scores = vectors @ query
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return top, scores[top]


def pagerank_dense(trans: Transition, gamma: np.ndarray, alpha: float = 0.2) -> np.ndarray:
    """The exact fixed point by a dense linear solve over all nodes (tests and small graphs only)."""
    gamma = np.asarray(gamma, dtype=np.float64) / np.sum(gamma)
    n = trans.n
    at = np.zeros((n, n))
    at[np.ix_(trans.active, trans.active)] = trans.at.toarray()
    at += np.outer(gamma, trans.dangling.astype(float))
    return np.linalg.solve(np.eye(n) - (1 - alpha) * at, alpha * gamma)


def pagerank_plain(
    trans: Transition, gamma: np.ndarray, alpha: float = 0.2, tol: float = 1e-5, max_iter: int = 1000
) -> tuple[np.ndarray, int]:
    """The textbook iteration over every node (no isolated-node shortcut), to check the fast path."""
    gamma = np.asarray(gamma, dtype=np.float64) / np.sum(gamma)
    n = trans.n
    coo = trans.at.tocoo()
    full = sp.csr_matrix((coo.data, (trans.active[coo.row], trans.active[coo.col])), shape=(n, n))
    dangling = trans.dangling
    pi = gamma.copy()
    for it in range(1, max_iter + 1):
        nxt = alpha * gamma + (1 - alpha) * (full @ pi + pi[dangling].sum() * gamma)
        err = np.abs(nxt - pi).sum()
        pi = nxt
        if err <= tol:
            return pi, it
    return pi, max_iter
