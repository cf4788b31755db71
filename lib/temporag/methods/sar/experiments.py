"""The notebook's recording steps as functions, so each cell reads like a step of the paper.

Each function takes what the notebook already computed (questions, pipeline records, frames made by
:mod:`.report`), records it in the run's ``Results`` under the names the committed runs use, and
returns what the cell shows.  Nothing here runs a model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer.evaluate import answer_recall_at_k, latency_summary
from temporag.methods.sar import report
from temporag.reported import PaperRef

OFFLINE_HOW = "offline policy + template reader (no LLM)"  # Table 2's offline rows


def record_protocol(results, question_sets: Mapping[str, Sequence]) -> pd.DataFrame:
    """The protocol table: each question set's size and its questions per label (Single / Multiple),
    beside the paper's 560-question sample."""
    protocol = pd.DataFrame(
        [
            {"set": name, "questions": len(qs), **pd.Series([q.qlabel for q in qs]).value_counts().to_dict()}
            for name, qs in question_sets.items()
        ]
    )
    results.table("protocol", protocol, "Question sets: the paper draws 560 (half Single, half Multiple).")
    return protocol


def pivot_facts(kg, templates: Sequence) -> list:
    """Every fact of each template's parsed main entity (none without one): the template reader's ceiling
    context, the best any retrieval could give it with this parse."""
    return [kg.by_entity[t.pivot] if t.pivot is not None else [] for t in templates]


def record_offline_measures(
    results, kg, questions: Sequence, templates: Sequence, records: Sequence, ceiling: Sequence
) -> pd.Series:
    """The offline agent's LLM-free measures (template accuracy, evidence recall and size, Hits@1 and the
    template reader's ceiling), each recorded as a metric with n; returns them as one column."""
    evidence = [r.evidence_ids for r in records]
    recall = answer_recall_at_k(kg, evidence, questions, [10**6])[10**6]
    measures = {
        "offline/template_accuracy": np.mean([t.template == q.qtype for t, q in zip(templates, questions)]),
        "offline/evidence_answer_recall": recall.mean(),
        "offline/evidence_facts_mean": np.mean([len(e) for e in evidence]),
        "offline/hits@1": report.hits(questions, report.answers_of(records)).mean(),
        "template_reader/ceiling_hits@1": report.hits(questions, [r.answers for r in ceiling]).mean(),
    }
    for key, value in measures.items():
        results.metric(key, float(value), n=len(questions), rule="strict" if "hits" in key else None)
    return pd.Series(measures, name=f"n={len(questions)}")


def record_llm_agent(results, questions: Sequence, records: Sequence, n: int, model: str) -> dict:
    """The LLM agent's strict Hits@1 (failed calls left out and counted, never 0), its outcomes and its
    calls per question, recorded under ``llm/``; returns the Hits@1 summary."""
    score = report.reader_hits(questions, records, n)
    results.metric(
        "llm/hits@1",
        score["value"],
        n=score["n"],
        answered=score["answered"],
        failed=score["failed"],
        reader=model,
        rule="strict",
    )
    results.metric("llm/outcomes", report.outcomes(records), reader=model)
    calls = float(np.mean([r.llm_calls for r in records]))
    results.metric("llm/calls_per_question", calls, reader=model)
    return score


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


def record_k_sweep(results, k_frame: pd.DataFrame, n_questions: int, n_sweep: int, model: str) -> None:
    """Fig. 3: the K sweep's table, its per-K recall and Hits@1 metrics (Hits@1 beside the paper's
    quoted value) and the figure."""
    caption = (
        f"Fig. 3: answer recall and Hits@1 over K (offline: {n_questions} questions; "
        f"reader {model}: {n_sweep} questions per K)."
    )
    results.table("fig3_k_sweep", k_frame, caption)
    paper_k = paper_k_points()
    for row in k_frame.itertuples():
        results.metric(f"fig3/K={row.K}/search_recall", row.search_recall, n=n_questions)
        results.metric(
            f"fig3/K={row.K}/template_hits@1", row.template_hits, n=n_questions, paper=paper_k.get(row.K)
        )
    results.figure("fig3_k_sensitivity", report.fig_k(k_frame, paper_k))


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


def record_n_sweep(results, n_frame: pd.DataFrame, n_questions: int) -> None:
    """Fig. 4: the N sweep's table, the offline curve's value at each N as a metric, and the figure."""
    results.table("fig4_n_sweep", n_frame, "Fig. 4: strict Hits@1 over the verification budget N.")
    offline = n_frame.set_index("N")[f"offline policy + rule verifier (n={n_questions})"]
    for n in report.N_GRID:
        results.metric(f"fig4/offline/N={n}", float(offline.loc[n]), n=n_questions)
    results.figure("fig4_n_sensitivity", report.fig_n(n_frame))


def record_recall_by_qtype(results, recall_frame: pd.DataFrame, k: int, n_questions: int) -> None:
    """The answer-recall-by-qtype table, each retrieval's overall recall as a metric, and the figure."""
    caption = (
        f"Answer recall by qtype: SAR's SEARCH evidence (offline policy, K={k}) "
        "vs semantic retrieval at K and at the same number of facts."
    )
    results.table("search_recall_by_qtype", recall_frame, caption)
    methods = [c for c in recall_frame.columns if c not in ("group", "category", "n")]
    overall = recall_frame.loc[recall_frame.group == "overall"]
    for method in methods:
        results.metric(f"recall/{method}", float(overall[method].iloc[0]), n=n_questions)
    results.figure("search_recall_by_qtype", report.fig_recall(recall_frame, methods))


def record_cost(results, cost: pd.DataFrame) -> None:
    """The cost table and each method's LLM calls per question (with its prompt tokens) as a metric."""
    results.table("cost_per_question", cost, "LLM calls, tokens and seconds per question for each method.")
    for row in cost.to_dict("records"):
        results.metric(
            f"cost/{row['method']}/llm_calls_per_question",
            row["LLM calls / q"],
            tokens=row["prompt tokens / q"],
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


def record_latency(results, records: Sequence, semantic_seconds: Sequence[float], k: int) -> pd.DataFrame:
    """One SAR SEARCH's latency (from the agent's traces) beside the semantic retriever's per question:
    the table, and SEARCH's p50 as a metric beside the issue's 20 ms target."""
    seconds = search_seconds(records)
    speed = pd.DataFrame(
        [
            {"retrieval": "one SAR SEARCH (structure-aligned)", **latency_summary(seconds)},
            {
                "retrieval": f"semantic top-{k} over all facts (per question)",
                **latency_summary(semantic_seconds),
            },
        ]
    )
    results.table("latency", speed, "Retrieval latency on this machine (query embedding excluded).")
    results.metric("latency/search_p50_ms", speed.p50_ms.iloc[0], target_ms=20, n=len(seconds))
    return speed


def compact_predictions(records: Sequence) -> list[dict]:
    """Each record's answers, evidence ids and outcome, without its trace: every question's prediction."""
    return [
        dict(quid=r.quid, answers=r.answers, evidence_ids=r.evidence_ids, outcome=r.trace["outcome"])
        for r in records
    ]


def method_predictions(methods: Mapping[str, Sequence]) -> list[dict]:
    """Every record of each method, full trace included, tagged with the method's name."""
    return [dict(method=name, **r.to_dict()) for name, records in methods.items() for r in records]
