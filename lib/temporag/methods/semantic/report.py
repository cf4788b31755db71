"""The tour's figures and formatted tables: question types, the semantic baseline's answer recall@k
(TECQA Fig. 2's printed value dotted) and its reader's Hits@1, drawn from what :mod:`.experiments`
computed, paper numbers through :class:`~temporag.reported.PaperRef`.  Nothing here writes into the
run's results: :mod:`.record` keeps what these frames show."""

from __future__ import annotations

from temporag.answer import evaluate
from temporag.methods import plots
from temporag.reported import PaperRef

#: TECQA Fig. 2's semantic retriever (bge-base-en-v1.5): the one printed recall of a semantic baseline
SEMANTIC_AT_20 = PaperRef("tecqa", "Figure 2", "Semantic retriever (bge-base-en-v1.5)", "Answer Recall@20")


def question_types_figure(table):
    fig = plots.category_bars(
        table,
        "qtype",
        "questions",
        title="MultiTQ question types (selected set)",
        ylabel="questions",
        ylim=None,
    )
    fig.tight_layout()
    return fig


def recall_pivot(table):
    """Mean recall per question type (and overall) × k."""
    shown = table[table.group.isin(["overall", "qtype"])]
    return shown.pivot(index="category", columns="k", values="mean")


def recall_figure(table, questions: int, profile: str):
    """Answer recall@k curves per question type, overall thick, TECQA Fig. 2's semantic value dotted."""
    pivot = recall_pivot(table)
    ks = list(pivot.columns)
    series = {("overall" if cat == "all" else cat): pivot.loc[cat, ks].tolist() for cat in pivot.index}
    paper = SEMANTIC_AT_20.value()
    fig = plots.curves(
        ks,
        series,
        title="Semantic retrieval: answer recall@k by question type",
        xlabel="k (facts)",
        ylabel="answer recall",
        logx=True,
        highlight="overall",
        note=f"all-MiniLM-L6-v2 over 461,329 facts; n={questions} questions ({profile} profile). "
        f"TECQA Fig. 2 reports {paper} at k=20 for bge-base.",
    )
    if paper is not None:
        ax = fig.axes[0]
        ax.axhline(paper, ls=":", color="grey")
        ax.annotate(
            f"TECQA Fig. 2: semantic @20 = {paper:.2f}",
            (1, paper),
            fontsize=7,
            color="grey",
            xytext=(0, 3),
            textcoords="offset points",
        )
    return fig


def reader_table(scores: dict, reader: str):
    """Hits@1 of the reader under both rules, no paper counterpart, with n, answered and failed beside
    each number (``scores`` from ``evaluate.hits_by_category``: a failed call is left out of the mean,
    never scored as wrong); :func:`.record.reader_hits` records the same numbers."""
    import pandas as pd

    rows = []
    n, answered = scores["n"]["Overall"], scores["answered"]["Overall"]
    failed = scores["failed"]["Overall"]
    for rule, label in evaluate.RULES.items():
        rows.append(
            {"rule": label, "Hits@1": scores[rule]["Overall"], "n": n, "answered": answered, "failed": failed}
        )
    table = pd.DataFrame(rows)
    table["reader"] = reader
    return table
