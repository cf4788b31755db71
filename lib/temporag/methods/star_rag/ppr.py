"""Personalised PageRank by sparse power iteration (scipy.sparse), one query or a batch of queries.

STAR-RAG runs one PPR per question on a rule graph of ~50K nodes; networkx.pagerank rebuilds Python
dicts per call and is far slower here, so the transition matrix is built once as CSR (transposed, so
that π Ã is one sparse product) and reused across questions.  Dangling nodes (no out-edges) send their
mass back to the personalisation vector, so π stays a probability distribution.

Two exact speed-ups, both giving the same iterates as the plain iteration over all nodes:

* isolated nodes (no edge at all; ~3/4 of STAR-RAG's rule nodes) are not iterated: each keeps
  π_u = s_k · γ_u with one shared scalar s_k, because all they ever receive is restart and dangling mass;
* several questions iterate together as the columns of one dense block (sparse × dense reuses each
  matrix entry across the block); a column stops changing as soon as it has converged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


@dataclass
class Transition:
    """Ã (row-stochastic) stored transposed and restricted to the nodes that have an edge."""

    n: int
    active: np.ndarray  # node ids with at least one in- or out-edge
    at: sp.csr_matrix  # (Ã restricted to active nodes)ᵀ, so that at @ π_active = (π Ã)_active
    dangling_active: np.ndarray  # bool over active nodes: no out-edge
    isolated: np.ndarray  # bool over all nodes
    _cast: dict = field(default_factory=dict, repr=False)

    def at_as(self, dtype) -> sp.csr_matrix:
        """``at`` in another float type (float32 halves the memory traffic of each iteration)."""
        dtype = np.dtype(dtype)
        if dtype == self.at.dtype:
            return self.at
        if dtype not in self._cast:
            self._cast[dtype] = self.at.astype(dtype)
        return self._cast[dtype]

    @property
    def dangling(self) -> np.ndarray:
        """Bool over all nodes: no out-edge (isolated nodes included)."""
        out = self.isolated.copy()
        out[self.active[self.dangling_active]] = True
        return out


def transition_matrix(
    n: int, u: np.ndarray, v: np.ndarray, weights: np.ndarray | None = None, symmetric: bool = True
) -> Transition:
    """Row-normalised Ã of a weighted graph on n nodes (edges u→v, and v→u when ``symmetric``)."""
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    w = np.ones(len(u)) if weights is None else np.asarray(weights, dtype=np.float64)
    if symmetric:
        u, v, w = np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([w, w])
    touched = np.zeros(n, dtype=bool)
    touched[u] = True
    touched[v] = True
    active = np.flatnonzero(touched)
    pos = np.full(n, -1, dtype=np.int64)
    pos[active] = np.arange(len(active))
    m = len(active)
    a = sp.csr_matrix((w, (pos[u], pos[v])), shape=(m, m))
    a.sum_duplicates()
    out = np.asarray(a.sum(axis=1)).ravel()
    scale = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    a = sp.diags(scale) @ a
    return Transition(n=n, active=active, at=sp.csr_matrix(a.T), dangling_active=out == 0, isolated=~touched)


def personalized_pagerank_many(
    trans: Transition,
    gammas: np.ndarray,
    alpha: float = 0.2,
    tol: float = 1e-5,
    max_iter: int = 1000,
    dtype=np.float64,
) -> tuple[np.ndarray, np.ndarray]:
    """PPR for each column of ``gammas`` (n × B): π = α γ + (1 − α) π Ã until ‖π_{k+1} − π_k‖₁ ≤ tol.

    ``alpha`` is the restart probability (STAR-RAG: 0.2).  Each column keeps the iterate at which it
    converged (the block goes on until the slowest column has).  Returns (π as n × B, iterations)."""
    gammas = np.asarray(gammas, dtype=np.float64)
    if gammas.ndim != 2 or gammas.shape[0] != trans.n:
        raise ValueError(f"gammas must be (n={trans.n}) × B, got {gammas.shape}")
    mass = gammas.sum(axis=0)
    if (mass <= 0).any():
        raise ValueError("every personalisation vector must have positive mass")
    g = gammas / mass
    at = trans.at_as(dtype)
    ga = np.ascontiguousarray(g[trans.active], dtype=dtype)  # m × B
    g_iso = g[trans.isolated].sum(axis=0)  # B
    p = ga.copy()
    s = np.ones(g.shape[1])  # π_isolated = s · γ_isolated
    final_p = np.empty_like(p)
    final_s = np.ones(g.shape[1])
    iters = np.full(g.shape[1], max_iter)
    done = np.zeros(g.shape[1], dtype=bool)
    dang = trans.dangling_active
    any_dang = bool(dang.any())
    for it in range(1, max_iter + 1):
        # dangling mass δ returns to γ: (1 − α)(π Ã + δ γ) + α γ = (1 − α) π Ã + (α + (1 − α) δ) γ
        delta = s * g_iso
        if any_dang:
            delta = delta + p[dang].sum(axis=0)
        s_new = alpha + (1 - alpha) * delta
        nxt = at @ p
        nxt *= 1 - alpha
        nxt += ga * s_new.astype(dtype)
        np.subtract(nxt, p, out=p)  # p's buffer becomes the difference; p is replaced below
        np.abs(p, out=p)
        err = p.sum(axis=0) + np.abs(s_new - s) * g_iso
        newly = (err <= tol) & ~done
        if newly.any():
            final_p[:, newly] = nxt[:, newly]
            final_s[newly] = s_new[newly]
            iters[newly] = it
            done |= newly
            if done.all():
                break
        p, s = nxt, s_new
    if not done.all():
        final_p[:, ~done] = p[:, ~done]
        final_s[~done] = s[~done]
    pi = g * final_s  # isolated nodes (active rows are overwritten next)
    pi[trans.active] = final_p
    return pi, iters


def personalized_pagerank(
    trans: Transition,
    gamma: np.ndarray,
    alpha: float = 0.2,
    tol: float = 1e-5,
    max_iter: int = 1000,
    dtype=np.float64,
) -> tuple[np.ndarray, int]:
    """One query: π = α γ + (1 − α) π Ã (STAR-RAG Alg. 1 lines 10–13, Eq. 8).  Returns (π, iterations)."""
    pi, iters = personalized_pagerank_many(trans, np.asarray(gamma)[:, None], alpha, tol, max_iter, dtype)
    return pi[:, 0], int(iters[0])
