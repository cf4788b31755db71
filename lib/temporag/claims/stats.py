"""The statistics the verdict rule uses, each a published method, kept apart from the words they decide.

Why these (Dror et al. 2018 for NLP; Fagerland, Lydersen & Laake 2017, ch. 8 for paired 0/1 outcomes):
per-question 0/1 outcomes of two arms on the same questions are a paired 2×2 table, so the test is the
exact McNemar test (a binomial test on the discordant questions, ``scipy.stats.binomtest``) and the
interval Newcombe's square-and-add interval (his method 10), which stays valid when only a handful of
questions differ — a percentile bootstrap does not.  Fractional outcomes (recall of several answers) keep
the paired bootstrap for the interval and get a paired sign-flip permutation test for p
(``scipy.stats.permutation_test``).  Holm's step-down adjustment is written here (scipy has only
Benjamini–Hochberg); it is tested on a worked example.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats


def is_binary(*vectors: np.ndarray) -> bool:
    """Every value 0 or 1: the arms form a paired 2×2 table."""
    return all(np.isin(np.asarray(v, dtype=float), (0.0, 1.0)).all() for v in vectors)


def paired_table(first: np.ndarray, second: np.ndarray) -> tuple[int, int, int, int]:
    """(both 1, first only, second only, both 0) of two aligned 0/1 vectors."""
    a, b = np.asarray(first, dtype=bool), np.asarray(second, dtype=bool)
    return int((a & b).sum()), int((a & ~b).sum()), int((~a & b).sum()), int((~a & ~b).sum())


def mcnemar_exact_p(first_only: int, second_only: int) -> float:
    """Two-sided exact McNemar p: the discordant questions as a Binomial(b + c, ½) draw."""
    discordant = first_only + second_only
    if discordant == 0:
        return 1.0
    return float(stats.binomtest(first_only, discordant, 0.5, alternative="two-sided").pvalue)


def wilson(successes: int, n: int, level: float) -> tuple[float, float]:
    """Wilson's score interval for one proportion."""
    z = stats.norm.ppf(1 - (1 - level) / 2)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(centre - half), float(centre + half)


def newcombe_paired(table: tuple[int, int, int, int], level: float) -> tuple[float, float]:
    """Newcombe's (1998) method 10: the interval of p₁ − p₂ from paired data, square-and-add of the two
    Wilson intervals with the correlation of the pairs.  Newcombe shrinks a positive ad − bc by n/2
    before taking φ (and sets φ = 0 when a margin is empty); the worked example in Fagerland, Lydersen
    & Laake (2017, ch. 8) is the test."""
    a, b, c, d = table
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n, level)
    l2, u2 = wilson(a + c, n, level)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    cross = a * d - b * c
    shrunk = max(cross - n / 2, 0.0) if cross >= 0 else cross
    phi = shrunk / np.sqrt(margins) if margins > 0 else 0.0
    diff = p1 - p2
    below = np.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    above = np.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return float(max(diff - below, -1.0)), float(min(diff + above, 1.0))


def bootstrap_means(matrix: np.ndarray, resamples: int, seed: int, chunk: int = 250) -> np.ndarray:
    """Each row's mean in ``resamples`` paired resamples of the questions (columns): resamples × rows.
    Every row is resampled with the same question indices, so the pairing is kept; one index matrix,
    drawn as the loop over resamples would draw it, and gathered in chunks to bound the memory."""
    matrix = np.asarray(matrix, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, matrix.shape[1], size=(resamples, matrix.shape[1]))
    out = np.empty((resamples, matrix.shape[0]))
    for start in range(0, resamples, chunk):
        block = idx[start:start + chunk]
        out[start:start + chunk] = matrix[:, block].mean(axis=2).T  # rows × block × n → block × rows
    return out


def bootstrap_mean_differences(differences: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Resampled means of per-question differences (vectorised: one index matrix)."""
    d = np.asarray(differences, dtype=float)
    rng = np.random.default_rng(seed)
    return d[rng.integers(0, len(d), size=(resamples, len(d)))].mean(axis=1)


def percentile_interval(resampled: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1 - level) / 2
    return float(np.quantile(resampled, alpha)), float(np.quantile(resampled, 1 - alpha))


def sign_flip_p(differences: np.ndarray, resamples: int, seed: int) -> float:
    """Two-sided paired permutation p of the mean difference (random sign flips; Dror et al. 2018)."""
    d = np.asarray(differences, dtype=float)
    if not np.any(d):
        return 1.0
    result = stats.permutation_test(
        (d,), lambda x, axis: np.mean(x, axis=axis), permutation_type="samples", vectorized=True,
        n_resamples=resamples, alternative="two-sided", random_state=seed,
    )
    return float(result.pvalue)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (family-wise error control)."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted.tolist()


def inverted_p(inside: Callable[[float], bool], tolerance: float = 1e-4) -> float:
    """The smallest α at which ``inside(level)`` holds for the (1 − 2α) interval: the p-value of a
    one-sided test read off its interval (TOST for equivalence, a margin test for non-inferiority).
    ``inside`` must be monotone: true at some level implies true at every lower one."""
    if not inside(1 - 2 * 0.5 + 1e-9):  # not even the zero-width interval satisfies it
        return 1.0
    low, high = 0.0, 0.5  # inside(1 - 2*high) holds; find the smallest α that still holds
    while high - low > tolerance:
        mid = (low + high) / 2
        if inside(1 - 2 * mid):
            high = mid
        else:
            low = mid
    return float(high)
