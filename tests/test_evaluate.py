"""Metric rules on hand-made cases: MultiTQ strict Hits@k, TimeR4 lenient, recall, CIs."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.answer.evaluate import (
    answer_fact_mask,
    answer_recall_at_k,
    bootstrap_ci,
    breakdown,
    chain_recall,
    lenient_hit,
    normalise_answer,
    strict_hit,
)
from temporag.data.multitq import Question
from temporag.data.tkg import TemporalKG
from temporag.timeutil import day_of


def test_strict_hits_at_k():
    assert strict_hit(["Jack Straw", "Iran"], ["Jack Straw"], k=1)
    assert strict_hit(["Jack_Straw"], ["Jack Straw"], k=1)  # KG form vs answer form
    assert not strict_hit(["Iran", "Jack Straw"], ["Jack Straw"], k=1)
    assert strict_hit(["Iran", "Jack Straw"], ["Jack Straw"], k=2)
    assert not strict_hit(["Jack Straw Jr"], ["Jack Straw"], k=1)  # exact, not substring
    assert not strict_hit([], ["x"], k=10)


def test_time_predictions_cut_to_gold_granularity():
    assert strict_hit(["2010-05-03"], ["2010"], answer_type="time")
    assert strict_hit(["2010-05-03"], ["2010-05"], answer_type="time")
    assert not strict_hit(["2010-06-03"], ["2010-05"], answer_type="time")
    assert not strict_hit(["2010"], ["2010-05-03"], answer_type="time")  # coarser guess is no hit
    assert not strict_hit(["2010-05-03"], ["2010"], answer_type="entity")


def test_lenient_rule():
    assert lenient_hit("The answer is Jack Straw.", ["Jack Straw"])
    assert lenient_hit(["the Jack Straw", "Iran"], ["Jack Straw"])
    assert not lenient_hit(["Iran", "Jack Straw"], ["Jack Straw"])  # list: first item only
    assert lenient_hit("Answer: 2010-05-03", ["2010"])  # substring: coarser gold inside
    assert normalise_answer("  'Citizen_(North Korea)'. ") == "citizen (north korea)"


def _tiny_kg() -> TemporalKG:
    days = [day_of(d) for d in ("2005-01-01", "2005-02-10", "2006-03-01")]
    return TemporalKG(
        s=np.array([0, 1, 2], np.int32),
        r=np.array([0, 0, 1], np.int32),
        o=np.array([1, 2, 0], np.int32),
        t_start=np.array(days, np.int32),
        t_end=np.array(days, np.int32),
        entities=["A_x", "B", "C"],
        relations=["visit", "praise"],
    )


def test_answer_recall_on_facts():
    kg = _tiny_kg()
    assert answer_fact_mask(kg, np.array([0, 1, 2]), ["A x"], "entity").tolist() == [True, False, True]
    assert answer_fact_mask(kg, np.array([0, 1, 2]), ["2005-02"], "time").tolist() == [False, True, False]
    assert answer_fact_mask(kg, np.array([0, 1, 2]), ["2006"], "time").tolist() == [False, False, True]
    qs = [
        Question(1, "?", ("C",), "entity", "day", "equal", "Single"),
        Question(2, "?", ("2006",), "time", "year", "equal", "Single"),
    ]
    rec = answer_recall_at_k(kg, [np.array([0, 1]), np.array([0, 1, 2])], qs, ks=[1, 2, 3])
    assert rec[1].tolist() == [0.0, 0.0]
    assert rec[2].tolist() == [1.0, 0.0]
    assert rec[3].tolist() == [1.0, 1.0]
    assert chain_recall(np.array([1, 1, 0]), np.array([1, 0, 1])).tolist() == [1.0, 0.0, 0.0]


def test_bootstrap_and_breakdown():
    lo, hi = bootstrap_ci([1.0] * 50 + [0.0] * 50, seed=1)
    assert 0.38 < lo < 0.5 < hi < 0.62
    qs = [
        Question(i, "?", ("x",), "entity", "day", "equal" if i % 2 else "first_last", "Single")
        for i in range(10)
    ]
    df = breakdown(qs, [1.0 if i % 2 else 0.0 for i in range(10)], by=["qtype"], ci=False)
    got = {(r.group, r.category): (r.n, r.mean) for r in df.itertuples()}
    assert got[("overall", "all")] == (10, 0.5)
    assert got[("qtype", "equal")] == (5, 1.0)
    assert got[("qtype", "first_last")] == (5, 0.0)


def _q(answers, answer_type="entity", qlabel="Single", qtype="equal"):
    from types import SimpleNamespace

    return SimpleNamespace(answers=answers, answer_type=answer_type, qlabel=qlabel, qtype=qtype)


def test_hits_at_k_strict_and_lenient_values():
    from temporag.answer.evaluate import hits_at_k

    qs = [_q(["Iran"]), _q(["2010-05"], "time"), _q(["South Korea"])]
    answers = [["Iraq", "Iran"], ["2010-05-17"], ["the South Korea government"]]
    strict = hits_at_k(answers, qs, (1, 2))
    assert strict[1].tolist() == [0.0, 1.0, 0.0] and strict[2].tolist() == [1.0, 1.0, 0.0]
    assert hits_at_k(answers, qs, (1,), "lenient")[1].tolist() == [0.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="first answer only"):
        hits_at_k(answers, qs, (5,), "lenient")


def test_hits_by_category_leaves_failed_calls_out_of_the_mean():
    from temporag.answer.evaluate import hits_by_category

    qs = [_q(["A"]), _q(["B"], qlabel="Multiple"), _q(["2001"], "time", qlabel="Multiple")]
    table = hits_by_category(qs, [["A"], [], ["2001-02-03"]], failed=[False, True, False])
    assert table["strict"]["Overall"] == 1.0  # the failed call is not a wrong answer
    assert table["n"]["Multiple"] == 2
    assert table["answered"]["Multiple"] == 1 and table["failed"]["Multiple"] == 1
    all_failed = hits_by_category(qs[:1], [[]], failed=[True])
    assert np.isnan(all_failed["strict"]["Overall"]) and all_failed["failed"]["Overall"] == 1


def test_answered_hits_is_nan_where_the_call_failed_for_every_k():
    """The one per-question Hits@k with failed calls as NaN (SAR, TECQA, STAR-RAG and TimeR4 read it)."""
    from types import SimpleNamespace

    from temporag.answer.evaluate import answered_hits, answered_mean, failed_calls

    qs = [_q(["Iran"]), _q(["2010-05"], "time"), _q(["Chad"])]
    answers = [["Iraq", "Iran"], ["2010-05-17"], []]
    reads = [SimpleNamespace(error=None), SimpleNamespace(error=None), SimpleNamespace(error="timeout")]
    assert failed_calls(reads).tolist() == [False, False, True]
    hits = answered_hits(answers, qs, failed_calls(reads), (1, 2))
    assert hits[1][:2].tolist() == [0.0, 1.0] and np.isnan(hits[1][2])  # not a wrong answer: no answer
    assert hits[2][:2].tolist() == [1.0, 1.0] and np.isnan(hits[2][2])
    assert answered_mean(hits[1]) == {"value": 0.5, "n": 3, "answered": 2, "failed": 1}
    assert answered_hits(answers, qs)[1].tolist() == [0.0, 1.0, 0.0]  # no failures given: plain Hits@1
    assert answered_hits(answers, qs, [False] * 3, rule="lenient")[1].tolist() == [0.0, 1.0, 0.0]


def test_latency_summary_in_milliseconds():
    from temporag.answer.evaluate import latency_summary

    s = latency_summary([0.001, 0.002, 0.003, 0.004, 0.010])
    assert s["n"] == 5 and s["p50_ms"] == pytest.approx(3.0) and s["mean_ms"] == pytest.approx(4.0)
    assert np.isnan(latency_summary([])["p50_ms"])


def test_answer_anchor_and_chain_recall_values():
    from temporag.answer.evaluate import anchor_recall, answer_recall

    kg = _tiny_kg()
    qs = [
        Question(1, "?", ("C",), "entity", "day", "equal", "Single"),
        Question(2, "?", ("2006",), "time", "year", "equal", "Single"),
    ]
    assert answer_recall(kg, [np.array([0, 1]), np.array([0, 1])], qs).tolist() == [1.0, 0.0]
    assert answer_recall(kg, [np.array([0, 1]), np.array([0, 2])], qs, k=1).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="1 rankings but 2 questions"):
        answer_recall(kg, [np.array([0])], qs)
    anchor = anchor_recall([np.array([False, True]), np.array([False]), None])
    assert anchor[:2].tolist() == [1.0, 0.0] and np.isnan(anchor[2])
    chain = chain_recall(np.array([1.0, 1.0, 1.0]), anchor)
    assert chain[:2].tolist() == [1.0, 0.0] and np.isnan(chain[2])  # no anchor: left out, not a hit
