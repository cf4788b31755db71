"""The numbers behind SAR's tables, computed from what the notebook already has (questions, pipeline
records), so each cell reads like a step of the paper.

Each function returns a frame or the numbers a table shows; :mod:`.record` writes them into the run's
``Results`` under the names the committed runs use.  Nothing here runs a model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer.evaluate import answer_recall_at_k, answered_hits, latency_summary
from temporag.methods.sar import report
from temporag.reported import PaperRef

OFFLINE_HOW = "offline policy + template reader (no LLM)"  # Table 2's offline rows


def protocol_table(question_sets: Mapping[str, Sequence]) -> pd.DataFrame:
    """The protocol table: each question set's size and its questions per label (Single / Multiple),
    beside the paper's 560-question sample."""
    return pd.DataFrame(
        [
            {"set": name, "questions": len(qs), **pd.Series([q.qlabel for q in qs]).value_counts().to_dict()}
            for name, qs in question_sets.items()
        ]
    )


def pivot_facts(kg, templates: Sequence) -> list:
    """Every fact of each template's parsed main entity (none without one): the template reader's ceiling
    context, the best any retrieval could give it with this parse."""
    return [kg.by_entity[t.pivot] if t.pivot is not None else [] for t in templates]


def offline_measures(
    kg, questions: Sequence, templates: Sequence, records: Sequence, ceiling: Sequence
) -> pd.Series:
    """The offline agent's LLM-free measures (template accuracy, evidence recall and size, Hits@1 and the
    template reader's ceiling) as one column named after the number of questions."""
    evidence = [r.evidence_ids for r in records]
    recall = answer_recall_at_k(kg, evidence, questions, [10**6])[10**6]
    measures = {
        "offline/template_accuracy": np.mean([t.template == q.qtype for t, q in zip(templates, questions)]),
        "offline/evidence_answer_recall": recall.mean(),
        "offline/evidence_facts_mean": np.mean([len(e) for e in evidence]),
        "offline/hits@1": answered_hits(report.answers_of(records), questions)[1].mean(),
        "template_reader/ceiling_hits@1": answered_hits([r.answers for r in ceiling], questions)[1].mean(),
    }
    return pd.Series(measures, name=f"n={len(questions)}")


def llm_agent_measures(questions: Sequence, records: Sequence, n: int) -> dict:
    """The LLM agent's strict Hits@1 at verification budget ``n`` (failed calls left out and counted,
    never 0), how its attempts ended and its LLM calls per question."""
    return {
        "hits@1": report.reader_hits(questions, records, n),
        "outcomes": report.outcomes(records),
        "calls_per_question": float(np.mean([r.llm_calls for r in records])),
    }


def ablation_rows(
    variants: Mapping[str, tuple[Sequence, Sequence, int | None]],
    questions: Sequence,
    agent_questions: Sequence,
    llm_how: str,
) -> list[dict]:
    """Table 2's kit rows: every variant's offline row on ``questions``, then its LLM row on
    ``agent_questions``; ``variants`` maps a name to (offline records, LLM records, N)."""
    offline = [
        report.record_row(name, OFFLINE_HOW, questions, offline_records, n)
        for name, (offline_records, _, n) in variants.items()
    ]
    llm = [
        report.record_row(name, llm_how, agent_questions, llm_records, n)
        for name, (_, llm_records, n) in variants.items()
    ]
    return offline + llm


def paper_k_points() -> dict[int, float]:
    """The two values of Fig. 3 the paper's text quotes (K = 5 and K = 15), where the register has them."""
    points = {k: PaperRef("sar", "Figure 3", "SAR", f"K={k}").value() for k in (5, 15)}
    return {k: v for k, v in points.items() if v is not None}


def n_sweep_frame(
    questions: Sequence,
    offline_records: Sequence,
    agent_questions: Sequence,
    llm_records: Sequence,
    n_max_llm: int,
    model: str,
) -> pd.DataFrame:
    """Fig. 4's curves over :data:`.report.N_GRID`: the offline policy's Hits@1 (records of one run at the
    largest N) and the LLM agent's up to ``n_max_llm``, with its failed calls in a column of their own."""
    offline_n = report.hits_over_n(questions, offline_records).set_index("N")
    llm_ns = range(n_max_llm + 1)
    llm_n = report.hits_over_n(agent_questions, llm_records, llm_ns).set_index("N").reindex(report.N_GRID)
    llm_curve = f"LLM policy + LLM verifier, {model} (n={len(agent_questions)})"
    return pd.DataFrame(
        {
            "N": list(report.N_GRID),
            f"offline policy + rule verifier (n={len(questions)})": offline_n["hits@1"].tolist(),
            llm_curve: llm_n["hits@1"].tolist(),
            llm_curve + report.FAILED_SUFFIX: llm_n["failed"].tolist(),  # left out of the curve
        }
    )


def search_seconds(records: Sequence) -> list[float]:
    """The time of every SEARCH the agent issued, in seconds, read from the records' traces."""
    return [
        step["search"]["latency_ms"] / 1e3
        for record in records
        for attempt in record.trace["attempts"]
        for step in attempt["steps"]
        if "search" in step
    ]


def latency_table(records: Sequence, semantic_seconds: Sequence[float], k: int) -> pd.DataFrame:
    """One SAR SEARCH's latency (from the agent's traces) beside the semantic retriever's per question
    (``evaluate.latency_summary``: p50 / p95 / mean ms and n)."""
    return pd.DataFrame(
        [
            {"retrieval": "one SAR SEARCH (structure-aligned)", **latency_summary(search_seconds(records))},
            {
                "retrieval": f"semantic top-{k} over all facts (per question)",
                **latency_summary(semantic_seconds),
            },
        ]
    )


def compact_predictions(records: Sequence) -> list[dict]:
    """Each record's answers, evidence ids and outcome, without its trace: every question's prediction."""
    return [
        dict(quid=r.quid, answers=r.answers, evidence_ids=r.evidence_ids, outcome=r.trace["outcome"])
        for r in records
    ]


def method_predictions(methods: Mapping[str, Sequence]) -> list[dict]:
    """Every record of each method, full trace included, tagged with the method's name."""
    return [dict(method=name, **r.to_dict()) for name, records in methods.items() for r in records]
