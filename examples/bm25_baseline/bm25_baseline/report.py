"""The BM25 baseline's one table and figure: answer recall@k by question type, with 95% intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.answer import evaluate
from temporag.methods import plots


def recall_table(questions: Sequence, recall: dict[int, np.ndarray], results, seed: int = 0):
    """Answer recall@k overall and per question type, each k recorded as ``bm25/answer_recall@k``."""
    import pandas as pd

    frames = []
    for k, values in recall.items():
        results.metric(
            f"bm25/answer_recall@{k}", float(values.mean()), n=len(values),
            ci95=list(evaluate.bootstrap_ci(values, seed=seed)),
        )
        frame = evaluate.breakdown(questions, values, by=["qlabel", "qtype"], seed=seed)
        frame.insert(0, "k", k)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def recall_figure(table, questions: int, profile: str):
    """Answer recall@k curves per question type, overall highlighted."""
    shown = table[table.group.isin(["overall", "qtype"])]
    pivot = shown.pivot(index="category", columns="k", values="mean")
    ks = list(pivot.columns)
    series = {("overall" if c == "all" else c): pivot.loc[c, ks].tolist() for c in pivot.index}
    return plots.curves(
        ks, series, title="BM25 baseline: answer recall@k by question type", xlabel="k (facts)",
        ylabel="answer recall", logx=True, highlight="overall",
        note=f"BM25 over MultiTQ's triple texts + date bonus; n={questions} questions ({profile} profile).",
    )
