"""What a BM25 run records: the only module of the package that writes into a run's results."""

from __future__ import annotations

import numpy as np

from temporag.answer import evaluate


def recall(results, recall_at_k: dict[int, np.ndarray], table, caption: str, figure, seed: int = 0) -> None:
    """Each k as ``bm25/answer_recall@k`` (with its interval), the table and the figure."""
    for k, values in recall_at_k.items():
        results.metric(
            f"bm25/answer_recall@{k}", float(values.mean()), n=len(values),
            ci95=list(evaluate.bootstrap_ci(values, seed=seed)),
        )
    results.table("bm25_answer_recall", table, caption)
    results.figure("bm25_recall_at_k", figure)


def reader(results, scores: dict, questions: int, model: str, failed: int) -> None:
    """The reader's Hits@1 under both rules (failed calls left out and counted)."""
    for rule in ("strict", "lenient"):
        results.metric(f"bm25_reader/hits@1_{rule}", scores[rule]["Overall"], n=questions, rule=rule,
                       reader=model, failed=failed)
