"""The numbers behind the tour's tables: the KG's size beside STAR-RAG's Table 1, the selected
questions by type, the semantic baseline's answer recall@k with bootstrap CIs, and the per-question
retrieval and reader records.

:mod:`.report` draws and formats them; :mod:`.record` keeps what a run stores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.answer import evaluate
from temporag.methods.base import Retrieval
from temporag.reported import PaperRef

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


def retrieval_predictions(questions: Sequence, retrieval: Retrieval, k: int = 20) -> list[dict]:
    """Per question: the first ``k`` fact ids and the retrieval latency (for ``results.json``)."""
    return [
        {"quid": q.quid, "facts": ids[:k].tolist(), "latency_s": float(t)}
        for q, ids, t in zip(questions, retrieval.ids, retrieval.latency_s)
    ]


def reader_predictions(questions: Sequence, answers: Sequence) -> list[dict]:
    """Per question: the reader's ranked answers, its raw reply and any error."""
    return [
        {"quid": q.quid, "answers": r.answers, "raw": r.raw_text, "error": r.error}
        for q, r in zip(questions, answers)
    ]
