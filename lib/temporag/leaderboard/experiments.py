"""The leaderboard notebook's loops as functions, so each cell reads as one step.

Each function takes what the notebook already built (the roster's entries, the per-method scores, the
document table) and computes what a table or figure shows; :mod:`.record` writes it into the run's
``Results`` under the names the committed runs use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from temporag.leaderboard import report, scores
from temporag.leaderboard.roster import Entry
from temporag.leaderboard.scores import MethodScores

#: Breakdown tables: the per-question column of :meth:`MethodScores.per_question` → table name.
BREAKDOWNS = {
    "template Hits@1 strict": "breakdown_template_hits1",
    "recall (whole context)": "breakdown_recall",
}


def score_methods(
    entries: Sequence[Entry], kg, questions: Sequence, workspace, ks: Sequence[int]
) -> list[MethodScores]:
    """Every entry's native context on every question (kept on the entry for the reader), read by the
    template reader and scored under the common protocol."""
    method_scores = []
    for entry in entries:
        retrieval = entry.run(questions)
        readings = workspace.read_contexts(questions, retrieval.ids)
        method_scores.append(
            scores.score_contexts(
                entry.name,
                kg,
                questions,
                retrieval.ids,
                readings,
                entry.context_lines,
                retrieval.latency_s,
                ks,
            )
        )
    return method_scores


def ceiling_numbers(ceilings: Mapping[str, MethodScores]) -> dict[str, dict]:
    """Each template-reader ceiling's strict Hits@1 and mean context size, by ceiling key (for
    :func:`.record.ceilings`)."""
    return {
        key: {
            "name": ceiling.name,
            "hits@1": float(ceiling.strict.mean()),
            "context_facts": float(ceiling.facts.mean()),
        }
        for key, ceiling in ceilings.items()
    }


def summary_note(n_questions: int, profile: str) -> str:
    """The summary figure's footnote: the questions and what its axes and bars measure."""
    return (
        f"MultiTQ, {n_questions} questions ({profile}); all-MiniLM-L6-v2 for every method; tokens: cl100k "
        "of the context lines each method shows its reader; bars: bootstrap 95% intervals."
    )


def breakdowns(
    questions: Sequence, method_scores: Sequence[MethodScores], seed: int
) -> dict[str, pd.DataFrame]:
    """Template Hits@1 and whole-context recall of every method by Single / Multiple and qtype, with
    bootstrap intervals: one table each, by table name (:data:`BREAKDOWNS`)."""
    return {
        key: report.pivot(scores.breakdown_table(questions, method_scores, column, seed))
        for column, key in BREAKDOWNS.items()
    }


def common_protocol(
    method_scores: Sequence[MethodScores], document_table: pd.DataFrame, reader: str
) -> dict[str, dict]:
    """Each method's number under the common protocol, for the headline table: the template reader's
    strict Hits@1 on MultiTQ, and IA-RAG's reader accuracy on each document data set where it read."""
    common = {
        s.name: {
            "value": float(s.strict.mean()),
            "n": len(s.strict),
            "how": "LLM-free template reader, strict Hits@1, every selected question",
        }
        for s in method_scores
    }
    for row in document_table[document_table.method == "IA-RAG"].to_dict("records"):
        if "reader accuracy" in row and row["reader accuracy"] == row["reader accuracy"]:  # not NaN
            common[f"{row['dataset']}/IA-RAG"] = {
                "value": row["reader accuracy"],
                "n": row["reader n"],
                "how": f"reader {reader}, DyG-RAG token-level accuracy",
            }
    return common


def predictions(
    method_scores: Sequence[MethodScores], entries: Sequence[Entry], questions: Sequence
) -> list[dict]:
    """Every method's first three answers and first 20 evidence ids on every question."""
    return [
        {
            "method": s.name,
            "quid": q.quid,
            "answers": s.answers[i][:3],
            "evidence_ids": e.retrieval.ids[i][:20].tolist(),
        }
        for s, e in zip(method_scores, entries)
        for i, q in enumerate(questions)
    ]
