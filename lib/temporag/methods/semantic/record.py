"""What the tour keeps: every number of the semantic baseline that goes into the run's results.

The one module of the package that writes into a :class:`~temporag.notebook.results.Results`, so what
a run stores is read in one place.  Each function takes what :mod:`.experiments` computed (a frame, the
reader's scores) and records it under the names the committed runs use; it computes nothing itself.
"""

from __future__ import annotations

import pandas as pd

from temporag.answer import evaluate
from temporag.methods.semantic.experiments import KG_STATISTICS, kg_table_ref
from temporag.methods.semantic.report import SEMANTIC_AT_20


def kg_statistics(results, table: pd.DataFrame) -> None:
    """``kg/<statistic>``: each count of :func:`.experiments.kg_statistics` beside STAR-RAG's Table 1,
    and the table itself."""
    for (label, _, column), kit in zip(KG_STATISTICS, table["kit"], strict=True):
        results.compare(f"kg/{label.split()[0]}", kit, kg_table_ref(column))
    caption = "MultiTQ KG statistics computed from full.txt vs STAR-RAG Table 1."
    results.table("kg_statistics", table, caption)


def question_types(results, table: pd.DataFrame, figure, n: int) -> None:
    """The question-type table of the ``n`` selected questions (:func:`.experiments.question_types`) and
    its figure (:func:`.report.question_types_figure`, shown in the cell)."""
    results.table("question_types", table, f"Question types in the selected set ({n} questions).")
    results.figure("question_types", figure)


def recall(results, table: pd.DataFrame) -> dict:
    """``semantic/answer_recall@k`` with its bootstrap interval and n, read off the overall rows of
    :func:`.experiments.recall_at_k_table`; k = 20 beside TECQA Fig. 2's semantic retriever; then the
    table.  Returns the k = 20 row (kit, paper)."""
    rows = {}
    for row in table[table.group == "overall"].to_dict("records"):
        k = int(row["k"])
        ref = SEMANTIC_AT_20 if k == 20 else None
        ci95 = [float(row["ci_low"]), float(row["ci_high"])]
        rows[k] = results.compare(f"semantic/answer_recall@{k}", row["mean"], ref, n=int(row["n"]), ci95=ci95)
    caption = "Semantic baseline (all-MiniLM-L6-v2) answer recall@k by category, with bootstrap 95% CIs."
    results.table("semantic_answer_recall", table, caption)
    return rows.get(20, {})


def retrieval(results, figure, predictions: list[dict]) -> None:
    """The recall@k figure (:func:`.report.recall_figure`, shown in the cell) and the per-question
    retrieved ids (:func:`.experiments.retrieval_predictions`) as ``semantic``."""
    results.figure("semantic_recall_at_k", figure)
    results.predictions("semantic", predictions)


def reader_hits(
    results, scores: dict, table: pd.DataFrame, reader: str, top_k: int, usage: dict, predictions: list[dict]
) -> None:
    """``semantic_reader/hits@1_<rule>`` under both rules, no paper counterpart, with n, answered and
    failed (``scores`` from ``evaluate.hits_by_category``: a failed call is left out of the mean), then
    ``table`` (:func:`.report.reader_table`) as ``semantic_reader_hits1``, the reader's token ``usage``
    (``llm.usage_summary``) and its per-question ``predictions``
    (:func:`.experiments.reader_predictions`)."""
    n, answered = scores["n"]["Overall"], scores["answered"]["Overall"]
    failed = scores["failed"]["Overall"]
    for rule in evaluate.RULES:
        results.compare(
            f"semantic_reader/hits@1_{rule}",
            scores[rule]["Overall"],
            n=n,
            reader=reader,
            rule=rule,
            failed=failed,
            answered=answered,
        )
    results.table(
        "semantic_reader_hits1",
        table,
        f"Naive RAG (top-{top_k} facts) + reader {reader} on a seeded sample of {n} questions.",
    )
    results.metric("semantic_reader/usage", usage, reader=reader)
    results.predictions("semantic_reader", predictions)
