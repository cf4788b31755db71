"""SAR's notebook steps: ``sar.experiments`` computes what the notebook shows and ``sar.record`` records
it under the names the committed runs use, with the values the report functions compute."""

from __future__ import annotations

import json

import numpy as np
import pytest

from temporag.methods.base import QuestionRecord
from temporag.methods.sar import SAR, experiments, record, report
from temporag.methods.workspace import KGWorkspace
from temporag.notebook.results import Results


@pytest.fixture(scope="module")
def offline_run(kg, questions):
    """The offline agent on six real after_first questions (two SEARCHes each)."""
    workspace = KGWorkspace(kg)
    qs = [q for q in questions if q.qtype == "after_first"][:6]
    return workspace, qs, SAR(kg, workspace=workspace).pipeline(qs, progress=False)


def _metrics(results: Results) -> dict:
    return json.loads((results.dir / "results.json").read_text())["metrics"]


def _first_is_gold(answers, question) -> bool:
    """MultiTQ's strict Hits@1 written out apart from the kit: the first answer, lower-cased with '_' as a
    space, equals a gold one (a time cut to the gold's length: '2006-05-03' hits '2006-05')."""
    if not answers:
        return False
    first = " ".join(answers[0].replace("_", " ").split()).casefold()
    for gold in question.answers:
        gold = " ".join(gold.replace("_", " ").split()).casefold()
        if (first[: len(gold)] if question.answer_type == "time" else first) == gold:
            return True
    return False


def test_offline_measures_and_latency_from_real_records(kg, offline_run, results):
    workspace, qs, records = offline_run
    templates = workspace.templates([q.question for q in qs])
    ceiling = workspace.read_contexts(qs, experiments.pivot_facts(kg, templates))
    shown = experiments.offline_measures(kg, qs, templates, records, ceiling)
    record.offline_measures(results, shown, n=len(qs))

    metrics = _metrics(results)
    hits = np.mean([_first_is_gold(r.answers, q) for r, q in zip(records, qs)])
    assert metrics["offline/hits@1"] == {"value": pytest.approx(hits), "n": 6, "rule": "strict"}
    assert metrics["offline/evidence_answer_recall"]["rule"] is None
    facts = np.mean([len(r.evidence_ids) for r in records])
    assert metrics["offline/evidence_facts_mean"]["value"] == pytest.approx(facts) and facts > 15
    assert shown.name == "n=6" and shown["offline/hits@1"] == pytest.approx(hits)

    seconds = experiments.search_seconds(records)
    assert len(seconds) == sum(r.trace["searches"] for r in records) >= 6
    speed = experiments.latency_table(records, [0.01] * 6, 15)
    record.latency(results, speed)
    assert speed["retrieval"].tolist()[1] == "semantic top-15 over all facts (per question)"
    assert _metrics(results)["latency/search_p50_ms"]["n"] == len(seconds)


def _record(question, attempts, calls=0, error=None):
    """A pipeline record whose attempts answered ``attempts`` (answers, valid) in turn."""
    trace = {
        "outcome": "finish",
        "searches": 1,
        "attempts": [{"answers": a, "verdict": None if v is None else {"valid": v}} for a, v in attempts],
    }
    answers = attempts[-1][0]
    return QuestionRecord(question.quid, [1], 0.01, answers, error, calls, 10 * calls, calls, 1.0, trace)


def test_ablation_rows_and_the_n_sweep(questions, results):
    qs = [q for q in questions if q.answer_type == "entity"][:2]
    gold = qs[0].answers[0]
    # question 0 is right only after one verification; question 1 never
    records = [_record(qs[0], [(["wrong"], False), ([gold], None)], 2), _record(qs[1], [(["x"], True)], 1)]
    variants = {"SAR": (records, records[:1], 2), "w/o Validation": (records, records[:1], 0)}
    rows = experiments.ablation_rows(variants, qs, qs[:1], "LLM policy, fake")
    assert [(r["method"], r["how"], r["Overall"]) for r in rows] == [
        ("SAR", experiments.OFFLINE_HOW, 0.5),
        ("w/o Validation", experiments.OFFLINE_HOW, 0.0),
        ("SAR", "LLM policy, fake", 1.0),
        ("w/o Validation", "LLM policy, fake", 0.0),
    ]

    frame = experiments.n_sweep_frame(qs, records, qs[:1], records[:1], 1, "fake")
    llm_curve = "LLM policy + LLM verifier, fake (n=1)"
    assert frame.columns.tolist() == [
        "N",
        "offline policy + rule verifier (n=2)",
        llm_curve,
        llm_curve + report.FAILED_SUFFIX,
    ]
    assert frame["offline policy + rule verifier (n=2)"].tolist() == [0.0, 0.5, 0.5, 0.5, 0.5]
    assert frame[llm_curve].tolist()[:2] == [0.0, 1.0] and np.isnan(frame[llm_curve].iloc[2])
    record.n_sweep(results, frame, 2, report.fig_n(frame))  # as the notebook's cell does
    metrics = _metrics(results)
    assert [metrics[f"fig4/offline/N={n}"]["value"] for n in experiments.N_GRID] == [0.0, 0.5, 0.5, 0.5, 0.5]
    saved = json.loads((results.dir / "results.json").read_text())
    assert "fig4_n_sweep" in saved["tables"] and "fig4_n_sensitivity" in saved["figures"]

    record.cost(results, experiments.cost_table({"SAR": records}))
    assert _metrics(results)["cost/SAR/llm_calls_per_question"] == {"value": 1.5, "tokens": 15.0}
    predictions = experiments.method_predictions({"SAR": records, "ReAct RAG": records[:1]})
    assert [p["method"] for p in predictions] == ["SAR", "SAR", "ReAct RAG"]
    assert experiments.compact_predictions(records)[0] == {
        "quid": qs[0].quid,
        "answers": [gold],
        "evidence_ids": [1],
        "outcome": "finish",
    }
