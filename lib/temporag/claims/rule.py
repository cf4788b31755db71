"""The one verdict rule every claim is judged by, declared here and printed under every claims table.

Why one rule: a verdict is only worth reading if it could not have been chosen after seeing the
numbers.  Every claim is judged by :func:`paired` (a difference), :func:`plateau` (no further gain) or
:func:`best_setting` (the paper's setting is about best) with the constants below, and Holm's
correction within each paper's family (:func:`adjusted`) decides the word; no declaration can change
them, except a plateau's margin where the paper's text gives one.  The statistics are in :mod:`.stats`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from temporag.claims import stats

ALPHA = 0.05  # family-wise, two-sided for differences
LEVEL = 0.95  # the interval printed beside a difference claim
EQUIVALENCE_LEVEL = 1 - 2 * ALPHA  # 90 %: the interval of a plateau / about-best claim (TOST)
MARGIN = 0.02  # δ: the kit-wide equivalence margin, declared before any run
MIN_QUESTIONS = 30  # fewer paired questions get no verdict
RESAMPLES = 2000  # paired bootstrap resamples (fractional outcomes, about-best claims)
SEED = 0  # the same records always give the same verdict
#: smallest detectable effect = MDE_FACTOR × SE of the mean paired difference: z(0.975) + z(0.80)
MDE_FACTOR = 2.8


def _fewest_discordant(alpha: float = ALPHA) -> int:
    """The fewest discordant questions at which the exact McNemar test can reject at all."""
    k = 1
    while stats.mcnemar_exact_p(k, 0) >= alpha:
        k += 1
    return k


FEWEST_DISCORDANT = _fewest_discordant()  # 6 at α = 0.05: 2 × 0.5⁶ = 0.031

REPRODUCED, CONTRADICTED, INCONCLUSIVE = "reproduced", "contradicted", "inconclusive"
UNDERPOWERED = "underpowered"
NO_DIFFERENCE = "no difference observed"
IDENTICAL = "identical by construction"
TOO_FEW = "too few questions"
NOT_TESTABLE, NOT_RUN = "not testable here", "not run here"
PLUMBING = "plumbing (no verdict)"
HOLDS, DOES_NOT_HOLD = "holds", "does not hold"  # the kit's own rows: reproduced / contradicted
#: verdicts a test decided (a claim can be counted as confirmed or refuted only with one of these)
DECIDED = (REPRODUCED, CONTRADICTED, HOLDS, DOES_NOT_HOLD)

RULE = (
    "**Verdict rule v2 (one for every claim).** Each claim pairs two arms on the questions both "
    "answered (n); effect = mean per-question difference (first arm − second). "
    "*0/1 outcomes*: exact McNemar test on the questions where the arms differ, 95 % interval by "
    "Newcombe's paired square-and-add method (method 10); *fractional outcomes*: paired sign-flip "
    f"permutation test and paired percentile bootstrap ({RESAMPLES:,} resamples, seed {SEED}). "
    f"Holm's correction within each paper's family decides the word (α = {ALPHA}); the raw p is printed "
    "beside it. *reproduced* / *contradicted*: the Holm-adjusted p < α with the effect in / against the "
    f"claimed direction. *underpowered*: not significant and either fewer than {FEWEST_DISCORDANT} "
    "questions differ (the exact test cannot reject) or the MDE exceeds the paper's own |Δ| "
    f"(MDE = {MDE_FACTOR} × SD(differences) / √n: 80 % power at α = 0.05); *inconclusive*: not "
    "significant though powered. *no difference observed*: no question differs (the exact 95 % bound "
    "|Δ| ≤ 1 − 0.05^(1/n) is printed). *identical by construction*: the arms handed the reader the same "
    f"evidence on every question (from the run's records). No verdict on fewer than {MIN_QUESTIONS} "
    f"questions (*too few questions*). *Plateau* claims (no further gain from b to c) are equivalence "
    f"tests: *reproduced* when the {EQUIVALENCE_LEVEL:.0%} interval of c − b lies inside ±δ "
    f"(δ = {MARGIN} unless the paper states one), *contradicted* when it lies wholly beyond ±δ. "
    "*About-best* claims compare the paper's setting with the best *other* setting, re-picked in each "
    f"bootstrap resample: *reproduced* when the {EQUIVALENCE_LEVEL:.0%} interval of paper − best other "
    "lies above −δ, *contradicted* when it lies wholly below −δ. Tiers: (a) the paper's method on an "
    "LLM-free measurement of every question carries the paper's verdict; (b) *plumbing* rows (the "
    "embedded 135M reader) are shown without a verdict; (c) the kit's own variants are judged in their "
    "own family with their own words (*holds* / *does not hold*). *not testable here*: needs a served "
    "model (the command is given)."
)


@dataclass(frozen=True)
class Verdict:
    verdict: str
    n: int
    effect: float  # mean paired difference (about-best: paper's setting − best other)
    low: float
    high: float
    mde: float
    best: str | None = None  # about-best claims: the best other setting (observed)
    note: str = ""
    p: float | None = None  # raw p of the claim's own test; None when no test decides
    p_holm: float | None = None  # filled by :func:`adjusted`
    if_significant: str | None = None  # the word a significant p gives
    otherwise: str | None = None  # the word a non-significant p gives
    why_otherwise: str = ""  # why the non-significant word is *underpowered* (shown only with it)
    test: str = ""  # which test gave p (for the table)
    level: float = LEVEL  # the level of [low, high]


def decided(verdict: Verdict, p_adjusted: float) -> Verdict:
    """The verdict's word at a (Holm-)adjusted p."""
    if verdict.if_significant is None:
        return replace(verdict, p_holm=None)
    word = verdict.if_significant if p_adjusted < ALPHA else verdict.otherwise
    return replace(verdict, verdict=word, p_holm=p_adjusted)


def adjusted(verdicts: Sequence[Verdict]) -> list[Verdict]:
    """One family's verdicts after Holm's correction (a verdict with no test is passed through)."""
    tested = [i for i, v in enumerate(verdicts) if v.if_significant is not None]
    p_holm = stats.holm([verdicts[i].p for i in tested])
    out = list(verdicts)
    for i, p in zip(tested, p_holm):
        out[i] = decided(verdicts[i], p)
    return out


def _aligned(vectors: list[np.ndarray]) -> tuple[list[np.ndarray], int]:
    """The questions every arm answered (no NaN in any)."""
    stacked = np.vstack([np.asarray(v, dtype=float) for v in vectors])
    keep = ~np.isnan(stacked).any(axis=0)
    return [row[keep] for row in stacked], int(keep.sum())


def _mde(differences: np.ndarray) -> float:
    n = len(differences)
    return float(MDE_FACTOR * differences.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")


def no_difference_bound(n: int) -> float:
    """The exact one-sided 95 % upper bound on the share of differing questions when none differs."""
    return 1 - 0.05 ** (1 / n)


def _interval(a: np.ndarray, b: np.ndarray, binary: bool, level: float,
              resampled: np.ndarray | None) -> tuple[float, float]:
    if binary:
        return stats.newcombe_paired(stats.paired_table(a, b), level)
    return stats.percentile_interval(resampled, level)


def _too_few(n: int) -> Verdict:
    nan = float("nan")
    return Verdict(TOO_FEW, n, nan, nan, nan, nan, note=f"n = {n} < {MIN_QUESTIONS}: no verdict")


def _unless_too_few(verdict: Verdict) -> Verdict:
    """Below :data:`MIN_QUESTIONS` the effect and interval are shown, but no test decides a word."""
    if verdict.n >= MIN_QUESTIONS:
        return verdict
    return replace(verdict, verdict=TOO_FEW, p=None, p_holm=None, if_significant=None, otherwise=None,
                   note=f"n = {verdict.n} < {MIN_QUESTIONS}: no verdict")


def paired(first: np.ndarray, second: np.ndarray, direction: int,
           paper_delta: float | None = None) -> Verdict:
    """Judge "first scores higher (direction +1) / lower (-1) than second" on the same questions; the
    word is the one the raw p gives until :func:`adjusted` applies the family's correction."""
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 or -1, got {direction!r}")
    if len(first) != len(second):
        raise ValueError(f"paired outcomes need the same questions: {len(first)} vs {len(second)}")
    (a, b), n = _aligned([first, second])
    if n < 2:
        return _too_few(n)
    d = a - b
    effect, mde = float(d.mean()), _mde(d)
    binary = stats.is_binary(a, b)
    if binary:
        _, first_only, second_only, _ = stats.paired_table(a, b)
        p, test = stats.mcnemar_exact_p(first_only, second_only), "exact McNemar"
        low, high = stats.newcombe_paired(stats.paired_table(a, b), LEVEL)
        differing = first_only + second_only
    else:
        p, test = stats.sign_flip_p(d, RESAMPLES, SEED), "sign-flip permutation"
        low, high = stats.percentile_interval(stats.bootstrap_mean_differences(d, RESAMPLES, SEED), LEVEL)
        differing = int(np.count_nonzero(d))
    base = Verdict(INCONCLUSIVE, n, effect, low, high, mde, p=p, test=test)
    if n < MIN_QUESTIONS:
        return _unless_too_few(base)
    if differing == 0:
        return replace(base, verdict=NO_DIFFERENCE, p=None,
                       note=f"no question differs: |Δ| ≤ {no_difference_bound(n):.4f} (exact 95 % bound)")
    if binary and differing < FEWEST_DISCORDANT:
        otherwise, why = UNDERPOWERED, (f"only {differing} question{'s' if differing > 1 else ''} "
                                        f"differ{'' if differing > 1 else 's'}: the exact test cannot reject "
                                        f"with fewer than {FEWEST_DISCORDANT}")
    elif paper_delta is not None and mde > abs(paper_delta):
        otherwise, why = UNDERPOWERED, f"MDE {mde:.3f} exceeds the paper's |Δ| {abs(paper_delta):.3f}"
    else:
        otherwise, why = INCONCLUSIVE, ""
    claimed = REPRODUCED if direction * effect > 0 else CONTRADICTED
    return decided(replace(base, if_significant=claimed, otherwise=otherwise, why_otherwise=why), p)


def _margin_verdict(base: Verdict, interval_at: Callable[[float], tuple[float, float]],
                    holds: Callable[[tuple[float, float]], bool],
                    fails: Callable[[tuple[float, float]], bool]) -> Verdict:
    """A margin claim's word from test inversion: p of "holds" and p of "fails", the smaller decides."""
    p_holds = stats.inverted_p(lambda level: holds(interval_at(level)))
    p_fails = stats.inverted_p(lambda level: fails(interval_at(level)))
    if p_holds <= p_fails:
        return decided(replace(base, p=p_holds, if_significant=REPRODUCED, otherwise=INCONCLUSIVE), p_holds)
    return decided(replace(base, p=p_fails, if_significant=CONTRADICTED, otherwise=INCONCLUSIVE), p_fails)


def plateau(higher_setting: np.ndarray, lower_setting: np.ndarray, margin: float = MARGIN) -> Verdict:
    """Judge "no further gain from the lower setting to the higher one" as equivalence (TOST): the
    interval of higher − lower inside ±``margin``."""
    (a, b), n = _aligned([higher_setting, lower_setting])
    if n < 2:
        return _too_few(n)
    d = a - b
    binary = stats.is_binary(a, b)
    resampled = None if binary else stats.bootstrap_mean_differences(d, RESAMPLES, SEED)

    def interval_at(level: float) -> tuple[float, float]:
        return _interval(a, b, binary, level, resampled)

    low, high = interval_at(EQUIVALENCE_LEVEL)
    note = f"equivalence margin ±{margin}" + ("; no question differs" if not np.any(d) else "")
    base = Verdict(INCONCLUSIVE, n, float(d.mean()), low, high, _mde(d), note=note,
                   test=f"TOST ({'Newcombe' if binary else 'bootstrap'})", level=EQUIVALENCE_LEVEL)
    return _unless_too_few(_margin_verdict(base, interval_at, lambda i: -margin < i[0] and i[1] < margin,
                                           lambda i: i[0] > margin or i[1] < -margin))


def best_setting(vectors: dict[str, np.ndarray], paper_arm: str, higher_is_better: bool = True,
                 margin: float = MARGIN) -> Verdict:
    """Judge "the paper's setting is about best": paper − best *other* setting (re-picked in each
    resample, so the paper's setting is never compared with itself) no worse than −``margin``."""
    names = list(vectors)
    if paper_arm not in vectors:
        raise ValueError(f"the paper's setting {paper_arm!r} is not among {names}")
    rows, n = _aligned([vectors[name] for name in names])
    if n < 2:
        return _too_few(n)
    sign = 1.0 if higher_is_better else -1.0
    paper_index = names.index(paper_arm)
    others = [i for i in range(len(names)) if i != paper_index]
    matrix = sign * np.vstack(rows)  # settings × questions

    means = np.array([row.mean() for row in matrix])
    best_other = others[int(np.argmax(means[others]))]
    effect = float(means[paper_index] - means[others].max())
    resampled_means = stats.bootstrap_means(matrix, RESAMPLES, SEED)  # resamples × settings
    resampled = resampled_means[:, paper_index] - resampled_means[:, others].max(axis=1)

    def interval_at(level: float) -> tuple[float, float]:
        return stats.percentile_interval(resampled, level)

    low, high = interval_at(EQUIVALENCE_LEVEL)
    differs = bool(np.any(matrix != matrix[0]))
    note = f"margin −{margin} against the best other setting" + ("" if differs else "; no question differs")
    d = matrix[paper_index] - matrix[best_other]
    base = Verdict(INCONCLUSIVE, n, effect, low, high, _mde(d), best=names[best_other], note=note,
                   test="non-inferiority (bootstrap, best other re-picked)", level=EQUIVALENCE_LEVEL)
    return _unless_too_few(_margin_verdict(base, interval_at, lambda i: i[0] > -margin,
                                           lambda i: i[1] < -margin))


def chance_line(verdicts: Sequence[str], decided_by_test: int) -> str:
    """What Holm's correction guarantees for these verdicts."""
    confirmed = sum(v in (REPRODUCED, HOLDS) for v in verdicts)
    return (
        f"{confirmed} of {len(verdicts)} judged claims reproduced or holding; of the {decided_by_test} "
        f"claims a test decided, Holm's correction within each paper keeps the chance of even one false "
        f"*reproduced* per paper family at most {ALPHA:.0%} when no effect is real."
    )
