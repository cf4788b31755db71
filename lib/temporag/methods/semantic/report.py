"""The tour's tables and figures: the KG beside STAR-RAG's Table 1, the question types, the semantic
baseline's answer recall@k and its reader's Hits@1 — one call per artifact, metrics from
:mod:`temporag.answer.evaluate`, paper numbers through :class:`~temporag.reported.PaperRef`.  Nothing
here writes into the run's results: :mod:`.record` keeps what these frames show."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.answer import evaluate
from temporag.methods import plots
from temporag.methods.base import Retrieval
from temporag.reported import PaperRef

#: TECQA Fig. 2's semantic retriever (bge-base-en-v1.5): the one printed recall of a semantic baseline
SEMANTIC_AT_20 = PaperRef("tecqa", "Figure 2", "Semantic retriever (bge-base-en-v1.5)", "Answer Recall@20")
KG_STATISTICS = (  # label, kg.stats() key, STAR-RAG Table 1 column
    ("facts |F|", "facts", "|F|"),
    ("entities |E|", "entities", "|E|"),
    ("relations |R|", "relations", "|R|"),
    ("timestamps |T|", "timestamps", "|T|"),
)
BREAKDOWN = ("qtype", "qlabel", "answer_type")


def kg_table_ref(column: str) -> PaperRef:
    """Where STAR-RAG's Table 1 prints a MultiTQ KG statistic."""
    return PaperRef("star_rag", "Table 1", "MultiTQ", column)


def kg_statistics(kg):
    """The KG's size recomputed from the file beside STAR-RAG's Table 1 (recorded by
    :func:`.record.kg_statistics`)."""
    import pandas as pd

    stats, rows = kg.stats(), []
    for label, key, column in KG_STATISTICS:
        ref = kg_table_ref(column)
        rows.append({"statistic": label, "kit": stats[key], "paper (STAR-RAG Table 1)": ref.value()})
    table = pd.DataFrame(rows)
    table["match"] = table["kit"] == table["paper (STAR-RAG Table 1)"]
    return table


def question_types(questions: Sequence):
    """Questions per (qlabel, qtype), Single first, most frequent first."""
    import pandas as pd

    frame = pd.DataFrame([{"qlabel": q.qlabel, "qtype": q.qtype} for q in questions])
    counts = frame.groupby(["qlabel", "qtype"]).size().rename("questions").reset_index()
    return counts.sort_values(["qlabel", "questions"], ascending=[False, False])


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


def answer_types(questions: Sequence):
    """Questions per (answer_type, time_level): what a time answer's granularity is."""
    import pandas as pd

    frame = pd.DataFrame([{"answer_type": q.answer_type, "time_level": q.time_level} for q in questions])
    return frame.groupby(["answer_type", "time_level"]).size().rename("questions").to_frame()


def recall_at_k_table(questions: Sequence, recall: dict[int, np.ndarray], seed: int = 0):
    """Answer recall@k by question type, label and answer type, with bootstrap CIs, for every k."""
    import pandas as pd

    frames = []
    for k, values in recall.items():
        frame = evaluate.breakdown(questions, values, by=list(BREAKDOWN), seed=seed)
        frame.insert(0, "k", k)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


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


def retrieval_predictions(questions: Sequence, retrieval: Retrieval, k: int = 20) -> list[dict]:
    """Per question: the first ``k`` fact ids and the retrieval latency (for ``results.json``)."""
    return [
        {"quid": q.quid, "facts": ids[:k].tolist(), "latency_s": float(t)}
        for q, ids, t in zip(questions, retrieval.ids, retrieval.latency_s)
    ]


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


def reader_predictions(questions: Sequence, answers: Sequence) -> list[dict]:
    """Per question: the reader's ranked answers, its raw reply and any error."""
    return [
        {"quid": q.quid, "answers": r.answers, "raw": r.raw_text, "error": r.error}
        for q, r in zip(questions, answers)
    ]
