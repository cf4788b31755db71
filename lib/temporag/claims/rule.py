"""The one verdict rule every claim is judged by, declared here and printed under every claims table.

Why one rule: a verdict is only worth reading if it could not have been chosen after seeing the
numbers.  Every claim of every paper is judged by :func:`paired` (or :func:`best_setting`) with the
constants below; no declaration can change them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from temporag.answer.evaluate import bootstrap_ci

RESAMPLES = 2000  # paired bootstrap resamples of the questions
SEED = 0  # the bootstrap's seed: the same records always give the same verdict
LEVEL = 0.95
#: smallest detectable effect = MDE_FACTOR × SE of the mean paired difference: z(0.975) + z(0.80)
#: = 1.96 + 0.84, a two-sided test at α = 0.05 with 80 % power (normal approximation)
MDE_FACTOR = 2.8
#: under no true effect, a 95 % two-sided interval lies wholly above (or below) 0 with probability 2.5 %
CHANCE_PER_CLAIM = (1 - LEVEL) / 2

REPRODUCED, CONTRADICTED, INCONCLUSIVE = "reproduced", "contradicted", "inconclusive"
NOT_TESTABLE, NOT_RUN = "not testable here", "not run here"

RULE = (
    "**Verdict rule (one for every claim).** For the two arms of a claim, take the questions both "
    "answered (n) and each question's outcome difference (first arm − second). Effect = the mean "
    f"difference; its {LEVEL:.0%} interval is a paired percentile bootstrap over questions "
    f"({RESAMPLES:,} resamples, seed {SEED}). *reproduced*: the interval excludes 0 in the claimed "
    "direction; *contradicted*: it excludes 0 the other way; *inconclusive*: it contains 0. "
    f"MDE (smallest detectable effect) = {MDE_FACTOR} × SD(differences) / √n: the effect this n "
    "detects with 80 % power at α = 0.05 (two-sided, normal approximation). A *best-setting* claim "
    "(K, depth, K1) compares the setting with the best mean against the paper's setting: *reproduced* "
    "when the interval of best − paper's setting contains 0, *contradicted* when it excludes 0 (the best "
    "is picked after looking, so this leans towards *contradicted*). Failed reader calls (NaN) leave "
    "their question out of n. *not testable here*: needs a served model (the command is given). "
    "Multiplicity is not corrected: the scorecard says how many *reproduced* verdicts chance alone "
    f"gives ({CHANCE_PER_CLAIM:.1%} of the difference claims judged, when no effect is real)."
)


@dataclass(frozen=True)
class Verdict:
    verdict: str
    n: int
    effect: float  # mean paired difference (best-setting: best − paper's setting)
    low: float
    high: float
    mde: float
    best: str | None = None  # best-setting claims: the best setting
    note: str = ""


def paired_interval(differences: np.ndarray) -> tuple[float, float, float, float]:
    """(effect, low, high, MDE) of per-question paired differences."""
    d = np.asarray(differences, dtype=float)
    n = len(d)
    effect = float(d.mean())
    low, high = bootstrap_ci(d, n_boot=RESAMPLES, seed=SEED, level=LEVEL)
    se = float(d.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    return effect, low, high, MDE_FACTOR * se


def _aligned(vectors: list[np.ndarray]) -> tuple[list[np.ndarray], int]:
    """The questions every arm answered (no NaN in any)."""
    stacked = np.vstack([np.asarray(v, dtype=float) for v in vectors])
    keep = ~np.isnan(stacked).any(axis=0)
    return [row[keep] for row in stacked], int(keep.sum())


def paired(first: np.ndarray, second: np.ndarray, direction: int) -> Verdict:
    """Judge "first scores higher (direction +1) / lower (-1) than second" on the same questions."""
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction!r}")
    if len(first) != len(second):
        raise ValueError(f"paired outcomes need the same questions: {len(first)} vs {len(second)}")
    (a, b), n = _aligned([first, second])
    if n < 2:
        nan = float("nan")
        return Verdict(INCONCLUSIVE, n, nan, nan, nan, nan, note="fewer than 2 paired questions")
    effect, low, high, mde = paired_interval(a - b)
    signed_low, signed_high = sorted((direction * low, direction * high))
    if signed_low > 0:
        verdict = REPRODUCED
    elif signed_high < 0:
        verdict = CONTRADICTED
    else:
        verdict = INCONCLUSIVE
    return Verdict(verdict, n, effect, low, high, mde)


def best_setting(
    vectors: dict[str, np.ndarray], paper_arm: str, higher_is_better: bool = True
) -> Verdict:
    """Judge "the paper's setting is (about) the best": the setting with the best mean on the questions
    every setting answered against the paper's, by the paired interval of best − paper's setting."""
    names = list(vectors)
    if paper_arm not in vectors:
        raise ValueError(f"the paper's setting {paper_arm!r} is not among {names}")
    rows, n = _aligned([vectors[name] for name in names])
    if n < 2:
        nan = float("nan")
        return Verdict(INCONCLUSIVE, n, nan, nan, nan, nan, note="fewer than 2 paired questions")
    sign = 1.0 if higher_is_better else -1.0
    means = [sign * r.mean() for r in rows]
    best_index = int(np.argmax(means))  # ties: the first declared setting with the best mean
    paper_row = rows[names.index(paper_arm)]
    if means[names.index(paper_arm)] == means[best_index]:
        best_index = names.index(paper_arm)  # the paper's setting ties the best: it is the best
    effect, low, high, mde = paired_interval(rows[best_index] - paper_row)
    contains_zero = low <= 0 <= high
    return Verdict(REPRODUCED if contains_zero else CONTRADICTED, n, effect, low, high, mde,
                   best=names[best_index])


def chance_line(verdicts: list[str], difference_claims: int) -> str:
    """How many *reproduced* verdicts chance alone would give at this many difference claims."""
    reproduced = sum(v == REPRODUCED for v in verdicts)
    expected = CHANCE_PER_CLAIM * difference_claims
    return (
        f"{reproduced} of {len(verdicts)} judged claims reproduced; at {difference_claims} difference "
        f"claims with no real effect, chance alone would give {expected:.1f} *reproduced* on average "
        f"({CHANCE_PER_CLAIM:.1%} each; no multiplicity correction is applied)."
    )
