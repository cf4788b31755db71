"""The one verdict rule (v2) on hand-made outcome vectors whose answer is known, and its statistics
against published worked examples."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.claims import BEST, Claim, MissingOutcome, best_setting, judge, paired, plateau, rule, stats
from temporag.claims.judge import judge_all
from temporag.claims.rule import (
    CONTRADICTED,
    HOLDS,
    IDENTICAL,
    INCONCLUSIVE,
    NO_DIFFERENCE,
    NOT_RUN,
    PLUMBING,
    REPRODUCED,
    TOO_FEW,
    UNDERPOWERED,
)


def _pairs(wins: int, losses: int, ties: int) -> tuple[np.ndarray, np.ndarray]:
    """first − second is +1 on ``wins`` questions, −1 on ``losses``, 0 on ``ties``."""
    first = np.array([1.0] * wins + [0.0] * losses + [1.0] * ties)
    second = np.array([0.0] * wins + [1.0] * losses + [1.0] * ties)
    return first, second


# --- the statistics, against published worked examples -------------------------------------------------

def test_newcombe_square_and_add_matches_the_textbooks_worked_example():
    """Fagerland, Lydersen & Laake (2017), ch. 8: Cavo et al. 2012, complete response before / after
    consolidation therapy, table (59, 6, 16, 80): estimate −0.0621, 95 % CI −0.1186 to −0.0046."""
    low, high = stats.newcombe_paired((59, 6, 16, 80), 0.95)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    first = np.array([1.0] * 59 + [1.0] * 6 + [0.0] * 16 + [0.0] * 80)
    second = np.array([1.0] * 59 + [0.0] * 6 + [1.0] * 16 + [0.0] * 80)
    v = paired(first, second, -1)
    assert v.effect == pytest.approx(-10 / 161) and (v.low, v.high) == (low, high)
    assert v.test == "exact McNemar" and v.p == pytest.approx(stats.mcnemar_exact_p(6, 16))


def test_holm_matches_the_worked_example():
    """Holm (1979) as usually worked: p = 0.01, 0.04, 0.03, 0.005 at α = 0.05 rejects the first and the
    last only (adjusted 0.03, 0.06, 0.06, 0.02)."""
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_the_exact_mcnemar_p_of_four_one_way_discordant_questions_is_one_eighth():
    assert stats.mcnemar_exact_p(4, 0) == pytest.approx(0.125)
    assert rule.FEWEST_DISCORDANT == 6  # 2 × 0.5⁶ = 0.031 < 0.05 ≤ 2 × 0.5⁵


# --- the verdict words, on hand-made outcome vectors ---------------------------------------------------

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


def test_four_for_none_against_at_954_questions_is_underpowered_not_reproduced():
    """The live STAR-RAG `uniform-recall` case: a percentile bootstrap excluded 0 here."""
    first, second = _pairs(4, 0, 950)
    v = paired(first, second, +1, paper_delta=0.078)
    assert v.verdict == UNDERPOWERED and v.p == pytest.approx(0.125)
    assert "only 4 questions differ" in v.why_otherwise


def test_all_equal_outcomes_are_no_difference_observed_with_the_exact_bound():
    v = paired(np.ones(954), np.ones(954), +1)
    assert v.verdict == NO_DIFFERENCE and v.p is None
    assert f"{1 - 0.05 ** (1 / 954):.4f}" in v.note == "no question differs: |Δ| ≤ 0.0031 (exact 95 % bound)"


def test_ties_in_mean_with_discordance_are_inconclusive_and_equivalent_within_the_margin():
    """TECQA's N = 1 vs N = 2: equal means, 24 questions differ (12 each way)."""
    first, second = _pairs(12, 12, 930)
    v = paired(first, second, +1)
    assert v.verdict == INCONCLUSIVE and v.effect == 0.0 and v.low < 0 < v.high and v.p == 1.0
    eq = plateau(first, second)
    assert eq.verdict == REPRODUCED and -rule.MARGIN < eq.low < 0 < eq.high < rule.MARGIN
    assert eq.level == pytest.approx(0.90)


def test_a_plateau_is_contradicted_by_a_clear_further_gain_and_inconclusive_when_too_wide():
    first, second = _pairs(60, 5, 135)  # +0.275: far beyond ±0.02
    assert plateau(first, second).verdict == CONTRADICTED
    first, second = _pairs(6, 3, 31)  # 40 questions: the interval is wider than ±0.02
    assert plateau(first, second).verdict == INCONCLUSIVE


def test_fewer_than_thirty_questions_get_no_verdict_but_show_the_effect():
    first, second = _pairs(20, 0, 9)
    v = paired(first, second, +1)
    assert v.verdict == TOO_FEW and v.p is None and v.effect == pytest.approx(20 / 29) and v.low > 0
    assert plateau(first, second).verdict == TOO_FEW
    assert best_setting({"a": first, "b": second}, "a").verdict == TOO_FEW


def test_noise_is_called_reproduced_at_most_at_the_nominal_rate():
    """400 claims of two arms with the same 50 % hit rate (n = 200): a one-sided *reproduced* at most
    2.5 % of the time (plus Monte-Carlo slack), where the bootstrap rule gave more with few discordant."""
    rng = np.random.default_rng(3)
    calls = [paired((rng.random(200) < 0.5).astype(float), (rng.random(200) < 0.5).astype(float), +1).verdict
             for _ in range(400)]
    assert sum(c == REPRODUCED for c in calls) / 400 <= 0.025 + 0.02


def test_failed_reads_leave_their_question_out_of_n():
    first, second = _pairs(60, 10, 130)
    first[:5] = np.nan
    assert paired(first, second, +1).n == 195


def test_fractional_outcomes_keep_a_paired_bootstrap_and_a_sign_flip_test():
    rng = np.random.default_rng(0)
    base = rng.random(300)
    v = paired(base + 0.05, base, +1)
    assert v.test == "sign-flip permutation" and v.verdict == REPRODUCED and v.low > 0
    assert v.effect == pytest.approx(0.05)


def test_about_best_never_compares_the_papers_setting_with_itself():
    """The paper's setting is best: the effect is paper − best *other*, not 0 with a [0, 0] interval."""
    first, second = _pairs(12, 12, 930)
    low_setting = second.copy()
    low_setting[np.flatnonzero(second == 1)[:40]] = 0.0
    v = best_setting({"N=1": first, "N=2": second, "N=5": low_setting}, "N=2")
    assert v.best == "N=1" and v.effect == 0.0 and v.low < 0 < v.high
    assert v.verdict == REPRODUCED  # within −δ of the best other


def test_about_best_contradicted_when_another_setting_is_clearly_better():
    first, second = _pairs(60, 5, 135)
    v = best_setting({"10": second, "40": first}, "10")
    assert v.verdict == CONTRADICTED and v.best == "40" and v.high < -rule.MARGIN


def test_about_best_when_lower_is_better():
    first, second = _pairs(60, 5, 135)  # "40" scores higher: worse when lower is better
    v = best_setting({"10": second, "40": first}, "10", higher_is_better=False)
    assert v.verdict == REPRODUCED and v.best == "40" and v.effect > 0


def test_holm_within_the_family_decides_the_word():
    """Two claims each at p ≈ 0.03: alone each is *reproduced*, together Holm makes both inconclusive."""
    first, second = _pairs(16, 5, 179)
    alone = paired(first, second, +1)
    assert alone.verdict == REPRODUCED and 0.025 < alone.p < 0.05
    both = rule.adjusted([alone, alone])
    assert [v.verdict for v in both] == [INCONCLUSIVE, INCONCLUSIVE]
    assert both[0].p_holm == pytest.approx(min(1.0, 2 * alone.p))


def _claim(**kw) -> Claim:
    return Claim("demo", "gain", "Table 1", "A beats B", **{"measure": "recall@10", "arms": ("A", "B"), **kw})


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


def _run(claims_outcomes: dict, served: bool = False) -> dict:
    return {"outcomes": claims_outcomes, "settings": {"llm_base_url": "http://h/v1" if served else None}}


def test_reader_rows_are_plumbing_offline_and_carry_a_verdict_when_served():
    first, second = _pairs(60, 10, 130)
    outcomes = {"hits@1/A": dict(enumerate(first)), "hits@1/B": dict(enumerate(second))}
    claim = Claim("demo", "gain", "Table 1", "A beats B", measure="hits@1", arms=("A", "B"), reader=True)
    (offline,) = judge_all([claim], _run(outcomes))
    assert offline["verdict"] == PLUMBING and offline["tier"] == "b · plumbing" and offline["p_holm"] is None
    (served,) = judge_all([claim], _run(outcomes, served=True))
    assert served["verdict"] == REPRODUCED and served["tier"].startswith("a ·")


def test_the_kits_own_rows_say_holds_in_their_own_family():
    first, second = _pairs(16, 5, 179)
    outcomes = {"m/A": dict(enumerate(first)), "m/B": dict(enumerate(second))}
    paper = Claim("demo", "p", "T1", "A beats B", measure="m", arms=("A", "B"))
    kit = Claim("demo", "k", "kit", "A beats B", measure="m", arms=("A", "B"), kits_own=True)
    rows = judge_all([paper, kit], _run(outcomes))
    assert [r["verdict"] for r in rows] == [REPRODUCED, HOLDS]  # one member per family: no correction
    assert rows[0]["p_holm"] == pytest.approx(rows[0]["p"])


def test_arms_that_handed_the_reader_the_same_evidence_are_identical_by_construction():
    """Even where a reader's outcomes differ (it samples), the same evidence on every question is no test."""
    first, second = _pairs(3, 2, 95)
    same = {i: f"digest {i}" for i in range(100)}
    outcomes = {"m/A": dict(enumerate(first)), "m/B": dict(enumerate(second)),
                "evidence:m/A": same, "evidence:m/B": dict(same)}
    (row,) = judge_all([_claim(measure="m")], _run(outcomes))
    assert row["verdict"] == IDENTICAL and "same evidence on all 100 questions" in row["note"]
    outcomes["evidence:m/B"] = {**same, 7: "another digest"}
    (row,) = judge_all([_claim(measure="m")], _run(outcomes))
    assert row["verdict"] == UNDERPOWERED


def test_the_papers_delta_is_computed_from_its_printed_numbers():
    from temporag.claims.model import PaperNumbers

    c = _claim(paper_numbers=PaperNumbers("A 0.305 · B 0.183 (Table 4)", [0.305, 0.183]))
    assert c.paper_delta == pytest.approx(0.122)
    assert _claim(paper_numbers="no values").paper_delta is None


def test_a_subset_claim_is_judged_on_the_questions_with_that_label():
    """A claim about multiple-event questions reads the run's recorded labels and judges only those."""
    from types import SimpleNamespace

    from temporag.claims.model import LABELS, question_labels

    questions = [SimpleNamespace(quid=f"q{i}", qlabel="Multiple" if i < 100 else "Single", qtype="t")
                 for i in range(300)]
    first, second = _pairs(40, 0, 260)  # every win on a multiple-event question
    labels = question_labels(questions)
    outcomes = {"m/A": dict(zip(labels.quids, first)), "m/B": dict(zip(labels.quids, second)),
                **{f"{LABELS}/{f}": dict(zip(labels.quids, v)) for f, v in labels.values.items()}}
    (row,) = judge_all([_claim(measure="m", subset=("qlabel", "Multiple"))], _run(outcomes))
    assert row["n"] == 100 and row["effect"] == pytest.approx(0.4) and row["verdict"] == REPRODUCED
    assert "the 100 of 300 questions with qlabel = Multiple" in row["note"]
    (single,) = judge_all([_claim(measure="m", subset=("qlabel", "Single"))], _run(outcomes))
    assert single["n"] == 200 and single["verdict"] == NO_DIFFERENCE


def test_a_committed_run_that_predates_a_claim_reads_not_run_here_not_an_error():
    first, second = _pairs(4, 0, 50)
    outcomes = {"m/A": dict(enumerate(first)), "m/B": dict(enumerate(second))}
    claim = _claim(measure="m", subset=("qlabel", "Multiple"))
    with pytest.raises(MissingOutcome, match="labels/qlabel"):
        judge_all([claim], _run(outcomes))  # the notebook judging its own run: a bad declaration
    (row,) = judge_all([claim], _run(outcomes), strict=False)
    assert row["verdict"] == NOT_RUN and "predates the claim" in row["note"]


def test_bootstrap_means_draws_the_resamples_a_loop_would_draw():
    rng = np.random.default_rng(3)
    matrix = rng.integers(0, 2, size=(4, 101)).astype(float)
    means = stats.bootstrap_means(matrix, 300, seed=7, chunk=64)  # chunks that do not divide 300
    draw = np.random.default_rng(7)
    for i in range(300):
        idx = draw.integers(0, 101, size=101)
        assert np.array_equal(means[i], [row[idx].mean() for row in matrix])
