"""LLM-free retrieval recall, as the notebook's tables: the paper's protocol (each method at its own
context size), recall at equal context tokens (:mod:`.budget`), recall by reasoning type (Table 5) and
IA-RAG's per-question evidence."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.methods.ia_rag.budget import BUDGETS, curve_table
from temporag.methods.ia_rag.classify import GROUPS, TYPES, classify
from temporag.methods.ia_rag.retrieval import score_retrieval
from temporag.methods.ia_rag.setups import CALIBRATED, UNION_K, WINDOW_TOKENS, Setup
from temporag.reported import paper_value

CURVE_K2 = 60  # IEU seeds in the token curves: enough units to fill the largest budget


def operating_points(setups: Mapping[str, Setup], k2: int, vanilla_chunks: int):
    """The paper's protocol: IA-RAG's whole union against Vanilla RAG's top chunks (and the units by
    plain cosine), each at its own size.  Returns (retrievers, scores, table)."""
    chunks_name = f"Vanilla RAG (chunks, top-{vanilla_chunks})"
    retrievers, scores, rows = {}, {}, []
    for dataset, setup in setups.items():
        shown = {"IA-RAG": UNION_K, chunks_name: vanilla_chunks, "Vanilla RAG (IEUs, top-40)": 40}
        retrievers[dataset] = {
            "IA-RAG": setup.ia_rag(k2=k2),
            chunks_name: setup.vanilla_chunks(),
            "Vanilla RAG (IEUs, top-40)": setup.vanilla_units(),
        }
        scores[dataset] = {
            name: score_retrieval(method, setup.questions, shown[name])
            for name, method in retrievers[dataset].items()
        }
        for name, found in scores[dataset].items():
            rows.append(
                {
                    "dataset": dataset,
                    "method": name,
                    "retrieval recall": float(found["recall"].mean()),
                    "n": len(found["recall"]),
                    "tokens / question": float(found["tokens"].mean()),
                    "units / question": float(found["units"].mean()),
                    "latency p50 ms": float(np.median(found["latency_s"]) * 1e3),
                }
            )
    return retrievers, scores, pd.DataFrame(rows)


def curve_methods(paper: Setup, tuned: Setup) -> dict:
    """The retrievers of the tokens-vs-recall comparison for one data set."""
    return {
        "IA-RAG (paper reading)": paper.ia_rag(k2=CURVE_K2),
        "IA-RAG (calibrated)": tuned.ia_rag(k2=CURVE_K2, **CALIBRATED),
        "Vanilla RAG (1,200-token chunks)": paper.vanilla_chunks(),
        f"Vanilla RAG ({WINDOW_TOKENS}-token windows)": paper.vanilla_windows(),
        "Vanilla RAG (IEUs)": tuned.vanilla_units(),
    }


def token_curves(
    paper: Mapping[str, Setup],
    tuned: Mapping[str, Setup],
    budgets: Sequence[int] = BUDGETS,
    per_question: dict | None = None,
) -> pd.DataFrame:
    """Recall at each token budget, per data set and retriever (:func:`.budget.curve_table`); fills
    ``per_question[(data set, retriever, budget)]`` with each question's recall when given."""
    frames = []
    for dataset, setup in paper.items():
        sink: dict | None = {} if per_question is not None else None
        frame = curve_table(curve_methods(setup, tuned[dataset]), setup.questions, budgets, UNION_K, sink)
        if per_question is not None:
            per_question.update({(dataset, *key): v for key, v in sink.items()})
        frames.append(frame.assign(dataset=dataset))
    out = pd.concat(frames, ignore_index=True)
    return out[["dataset", "method", "budget", "recall", "tokens shown", "n"]]


def curve_grid(curves: pd.DataFrame) -> pd.DataFrame:
    """The curves as one row per (data set, method) and one recall column per budget."""
    grid = curves.pivot_table(index=["dataset", "method"], columns="budget", values="recall", sort=False)
    grid.columns = [f"recall @{b}" for b in grid.columns]
    return grid.reset_index()


def reasoning_types(setups: Mapping[str, Setup], classifier: str, llm=None) -> dict[str, list[str]]:
    """T1–T5 labels of each data set's selected questions (``llm`` only for ``classifier="llm"``)."""
    llm = llm if classifier == "llm" else None
    return {
        dataset: classify([q.question for q in setup.questions], classifier, llm)
        for dataset, setup in setups.items()
    }


def type_counts(labels: Mapping[str, Sequence[str]]) -> dict[str, dict[str, int]]:
    """Questions per reasoning type of each data set, most frequent first (``types/...`` metrics)."""
    return {
        dataset: {label: int(count) for label, count in pd.Series(dataset_labels).value_counts().items()}
        for dataset, dataset_labels in labels.items()
    }


def reasoning_groups(
    scores: Mapping, labels: Mapping[str, Sequence[str]], names: Sequence[str]
) -> pd.DataFrame:
    """Table 5 (ComplexTR): retrieval recall of ``names`` by Explicit / Relative / Compositional group."""
    rows = []
    for dataset in [d for d in ("ComplexTR",) if d in scores]:
        groups = np.array([GROUPS[t] for t in labels[dataset]])
        for name in names:
            recall = scores[dataset][name]["recall"]
            row = {"method": name}
            for g in ("Explicit", "Relative", "Compositional"):
                row[g] = float(recall[groups == g].mean()) if (groups == g).any() else np.nan
            row["Overall"] = float(recall.mean())
            row["paper row (accuracy)"] = "Vanilla RAG" if name.startswith("Vanilla") else "IA-RAG"
            rows.append(row)
    return pd.DataFrame(rows)


def retrieval_predictions(setups: Mapping[str, Setup], scores: Mapping, shown: int = 60) -> list[dict]:
    """IA-RAG's evidence ids (the first ``shown``) and retrieval recall per question
    (``predictions.ia_rag``), from :func:`operating_points`' scores."""
    records = []
    for dataset, by_method in scores.items():
        found = by_method["IA-RAG"]
        for question, ids, recall in zip(setups[dataset].questions, found["retrieval"].ids, found["recall"]):
            records.append(
                {
                    "dataset": dataset,
                    "quid": question.quid,
                    "answers": list(question.answers),
                    "evidence_ids": ids.tolist()[:shown],
                    "retrieval_recall": float(recall),
                }
            )
    return records


def type_distribution(labels: Mapping[str, Sequence[str]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables 9 and 10: T1–T5 counts and the Explicit / Relative / Compositional groups, kit vs paper."""
    t9, t10 = [], []
    for ds, lab in labels.items():
        c = Counter(lab)
        t9.append({"dataset": ds, "source": "kit", **{t: c.get(t, 0) for t in TYPES}, "Total": len(lab)})
        t9.append(
            {
                "dataset": ds,
                "source": "paper",
                **{t: paper_value("ia_rag", "Table 9", ds, t, ds) for t in TYPES},
                "Total": paper_value("ia_rag", "Table 9", ds, "Total", ds),
            }
        )
        g = Counter(GROUPS[t] for t in lab)
        t10.append(
            {
                "dataset": ds,
                "source": "kit",
                **{k: g.get(k, 0) for k in ("Explicit", "Relative", "Compositional")},
            }
        )
        t10.append(
            {
                "dataset": ds,
                "source": "paper",
                **{
                    k: paper_value("ia_rag", "Table 10", ds, k, ds)
                    for k in ("Explicit", "Relative", "Compositional")
                },
            }
        )
    t9, t10 = pd.DataFrame(t9), pd.DataFrame(t10)
    for frame in (t9, t10):
        for col in frame.columns[2:]:
            frame[col] = frame[col].astype("Int64")
    return t9, t10
