"""What the tour keeps: every number of the semantic baseline that goes into the run's results.

The one module of the package that writes into a :class:`~temporag.notebook.results.Results`, so what
a run stores is read in one place.  Each function takes what :mod:`.report` computed (a frame, the
reader's scores) and records it under the names the committed runs use; it computes nothing itself.
"""

from __future__ import annotations

import pandas as pd

from temporag.answer import evaluate
from temporag.methods.semantic.experiments import KG_STATISTICS, kg_table_ref
from temporag.methods.semantic.report import SEMANTIC_AT_20


def kg_statistics(results, table: pd.DataFrame) -> None:
    """``kg/<statistic>``: each count of :func:`.experiments.kg_statistics` beside STAR-RAG's Table 1."""
    for (label, _, column), kit in zip(KG_STATISTICS, table["kit"], strict=True):
        results.compare(f"kg/{label.split()[0]}", kit, kg_table_ref(column))


def recall(results, table: pd.DataFrame) -> dict:
    """``semantic/answer_recall@k`` with its bootstrap interval and n, read off the overall rows of
    :func:`.experiments.recall_at_k_table`; k = 20 beside TECQA Fig. 2's semantic retriever.  Returns the
    k = 20 row (kit, paper)."""
    rows = {}
    for row in table[table.group == "overall"].to_dict("records"):
        k = int(row["k"])
        ref = SEMANTIC_AT_20 if k == 20 else None
        ci95 = [float(row["ci_low"]), float(row["ci_high"])]
        rows[k] = results.compare(f"semantic/answer_recall@{k}", row["mean"], ref, n=int(row["n"]), ci95=ci95)
    return rows.get(20, {})


def reader_hits(results, scores: dict, table: pd.DataFrame, reader: str, top_k: int) -> None:
    """``semantic_reader/hits@1_<rule>`` under both rules, no paper counterpart, with n, answered and
    failed (``scores`` from ``evaluate.hits_by_category``: a failed call is left out of the mean), then
    ``table`` (:func:`.report.reader_table`) as ``semantic_reader_hits1``."""
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
