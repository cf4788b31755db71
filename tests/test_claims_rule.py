"""The one verdict rule on hand-made outcome vectors whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.claims import BEST, Claim, MissingOutcome, best_setting, judge, paired
from temporag.claims.rule import CONTRADICTED, INCONCLUSIVE, NOT_RUN, REPRODUCED, RESAMPLES


def _pairs(wins: int, losses: int, ties: int) -> tuple[np.ndarray, np.ndarray]:
    """first − second is +1 on ``wins`` questions, −1 on ``losses``, 0 on ``ties``."""
    first = np.array([1.0] * wins + [0.0] * losses + [1.0] * ties)
    second = np.array([0.0] * wins + [1.0] * losses + [1.0] * ties)
    return first, second


def test_the_interval_is_the_95_percent_interval_of_the_mean_within_a_tenth_of_its_error(monkeypatch):
    """What the number of resamples buys: the bootstrap's own (Monte-Carlo) error.  On 2,000 questions
    the percentile interval must sit on the normal 95 % interval of the mean difference to within a tenth
    of a standard error, whichever seed draws it (too few resamples, e.g. 500 or 1,000, miss by more); and
    one seed gives the same interval every time, so the same records always give the same verdict."""
    from temporag.claims import rule

    first, second = _pairs(300, 200, 1500)
    d = first - second
    se = d.std() / np.sqrt(len(d))
    exact = (d.mean() - 1.959964 * se, d.mean() + 1.959964 * se)
    misses = []
    for seed in range(10):
        monkeypatch.setattr(rule, "SEED", seed)
        v = paired(first, second, +1)
        assert v.verdict == REPRODUCED and v.effect == pytest.approx(0.05)
        misses.append(max(abs(v.low - exact[0]), abs(v.high - exact[1])) / se)
    assert np.mean(misses) < 0.1 and max(misses) < 0.2, (RESAMPLES, misses)
    monkeypatch.setattr(rule, "SEED", 0)
    assert paired(first, second, +1) == paired(first, second, +1)


def test_a_clear_gain_is_reproduced_with_its_effect_and_mde():
    first, second = _pairs(60, 10, 130)
    v = paired(first, second, +1)
    assert v.verdict == REPRODUCED and v.n == 200
    assert v.effect == pytest.approx(50 / 200)
    assert 0 < v.low < 0.25 < v.high
    d = first - second
    assert v.mde == pytest.approx(2.8 * d.std(ddof=1) / np.sqrt(200))


def test_a_clear_loss_contradicts_a_claimed_gain_and_reproduces_a_claimed_loss():
    first, second = _pairs(10, 60, 130)
    assert paired(first, second, +1).verdict == CONTRADICTED
    assert paired(first, second, -1).verdict == REPRODUCED


def test_noise_is_inconclusive():
    first, second = _pairs(12, 12, 176)
    v = paired(first, second, +1)
    assert v.verdict == INCONCLUSIVE and v.effect == 0.0 and v.low < 0 < v.high


def test_a_lone_win_among_ties_is_inconclusive():
    first, second = _pairs(1, 0, 199)
    v = paired(first, second, +1)
    assert v.verdict == INCONCLUSIVE and v.effect == pytest.approx(0.005) and v.low == 0.0


def test_all_equal_outcomes_are_inconclusive_with_a_zero_interval():
    v = paired(np.ones(50), np.ones(50), +1)
    assert (v.verdict, v.effect, v.low, v.high, v.mde) == (INCONCLUSIVE, 0.0, 0.0, 0.0, 0.0)


def test_failed_reads_leave_their_question_out_of_n():
    first, second = _pairs(60, 10, 130)
    first[:5] = np.nan
    assert paired(first, second, +1).n == 195


def test_fewer_than_two_questions_is_inconclusive():
    assert paired(np.array([1.0]), np.array([0.0]), +1).verdict == INCONCLUSIVE


def test_best_setting_reproduced_when_the_papers_setting_is_best_or_within_noise():
    rng = np.random.default_rng(1)
    base = (rng.random(300) < 0.5).astype(float)
    v = best_setting({"5": base * 0, "10": base, "20": base}, "10")
    assert v.verdict == REPRODUCED and v.best == "10" and v.effect == 0.0
    nudged = base.copy()
    nudged[np.flatnonzero(base == 0)[:2]] = 1.0  # two more hits than the paper's setting: noise
    v = best_setting({"10": base, "40": nudged}, "10")
    assert v.verdict == REPRODUCED and v.best == "40" and v.effect == pytest.approx(2 / 300)


def test_best_setting_contradicted_when_another_setting_is_clearly_better():
    first, second = _pairs(60, 5, 135)
    v = best_setting({"10": second, "40": first}, "10")
    assert v.verdict == CONTRADICTED and v.best == "40" and v.low > 0


def test_best_setting_when_lower_is_better():
    first, second = _pairs(60, 5, 135)  # "40" scores higher: worse when lower is better
    v = best_setting({"10": second, "40": first}, "10", higher_is_better=False)
    assert v.verdict == REPRODUCED and v.best == "10"


def _claim(**kw) -> Claim:
    return Claim("demo", "gain", "Table 1", "A beats B", measure="recall@10", arms=("A", "B"), **kw)


def test_judge_pairs_arms_by_question_id():
    first, second = _pairs(60, 10, 130)
    a = {f"q{i}": v for i, v in enumerate(first)}
    b = {f"q{i}": v for i, v in reversed(list(enumerate(second)))}  # another order, same questions
    row = judge(_claim(), {"recall@10/A": a, "recall@10/B": b})
    assert row["verdict"] == REPRODUCED and row["n"] == 200 and row["effect"] == pytest.approx(0.25)


def test_a_claim_naming_an_unrecorded_outcome_fails_naming_claim_and_key():
    with pytest.raises(MissingOutcome, match=r"claim demo/gain: .*'recall@10/B'"):
        judge(_claim(), {"recall@10/A": {"q": 1.0}})


def test_an_outcome_the_run_skipped_on_purpose_is_not_run_with_the_reason():
    row = judge(_claim(), {"recall@10/A": {"q": 1.0}}, {"recall@10": "reader_sample=0 in smoke"})
    assert row["verdict"] == NOT_RUN and "reader_sample=0" in row["note"]


def test_declarations_are_checked():
    with pytest.raises(ValueError, match="exactly two arms"):
        Claim("demo", "x", "T1", "s", measure="m", arms=("A",))
    with pytest.raises(ValueError, match="paper_arm"):
        Claim("demo", "x", "T1", "s", measure="m", arms=("5", "10"), direction=BEST, paper_arm="20")
    with pytest.raises(ValueError, match="command"):
        Claim("demo", "x", "T1", "s", not_testable_here="needs a 70B reader")
