"""The BM25 baseline's figure: answer recall@k by question type (drawn from :mod:`.experiments`' table)."""

from __future__ import annotations

from temporag.methods import plots


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
