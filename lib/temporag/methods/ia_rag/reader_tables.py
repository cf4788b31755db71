"""Table 2 and Fig. 3: the reader's answers to IA-RAG's and Vanilla RAG's contexts, scored by DyG-RAG's
token-level rule; a failed reader call is left out of every mean and counted, never a wrong answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer.evaluate import answered_mean, token_accuracy_recall
from temporag.methods.ia_rag.corpus import QA
from temporag.methods.ia_rag.setups import Setup
from temporag.sampling import stratified_sample


def read_scores(method, questions: Sequence[QA], llm, k: int, top_k: int = 1) -> dict:
    """Reader answers for ``questions`` through ``Method.pipeline`` and their DyG-RAG scores."""
    records = method.pipeline(list(questions), llm, k=k, top_k=top_k, progress=False)
    responses = [" ".join(r.answers) for r in records]
    acc, rec = token_accuracy_recall(responses, [q.answers for q in questions])
    failed = np.array([not r.answered for r in records])
    return {
        "records": records,
        "accuracy": acc,
        "recall": rec,
        "failed": failed,
        "prompt_tokens": np.array([r.prompt_tokens for r in records], dtype=float),
    }


def reader_reads(
    methods: Mapping[str, Mapping],
    setups: Mapping[str, Setup],
    llm,
    *,
    sample_size: int | None,
    seed: int,
    reader_units: int,
    vanilla_chunks: int,
) -> dict[str, dict[str, dict]]:
    """Table 2's reader runs (:func:`read_scores`) per data set: IA-RAG showing its first ``reader_units``
    units and Vanilla RAG its ``vanilla_chunks`` chunks, on the same seeded sample of ``sample_size``
    questions (seed + 1, so it is drawn apart from the LLM-free sample)."""
    reads = {}
    for dataset, setup in setups.items():
        sample = stratified_sample(setup.questions, sample_size, np.random.default_rng(seed + 1))
        shown = {"IA-RAG": reader_units, f"Vanilla RAG (chunks, top-{vanilla_chunks})": vanilla_chunks}
        reads[dataset] = {
            name: read_scores(methods[dataset][name], sample, llm, k=k) for name, k in shown.items()
        }
    return reads


def paper_row(method: str) -> str:
    """Table 2's row of a reader method: IA-RAG, or Vanilla RAG for any Vanilla RAG variant."""
    return "IA-RAG" if method == "IA-RAG" else "Vanilla RAG"


def reader_means(reads: Mapping[str, Mapping[str, dict]]) -> dict[str, dict[str, dict]]:
    """Table 2's numbers: each data set's and reader method's accuracy and recall over the questions
    answered (:func:`reader_mean`: a failed call is not a wrong answer)."""
    return {
        dataset: {
            method: {metric: reader_mean(scores, metric) for metric in ("accuracy", "recall")}
            for method, scores in by_method.items()
        }
        for dataset, by_method in reads.items()
    }


def accuracy_tokens(reads: Mapping[str, Mapping[str, dict]]) -> pd.DataFrame:
    """Fig. 3's points: each reader method's accuracy against its mean prompt tokens (failed calls left
    out of both means), with n read and failed."""
    return pd.DataFrame(
        [
            {
                "dataset": dataset,
                "method": name.split(" (")[0],
                "accuracy": reader_mean(scores)["value"],
                "tokens": reader_mean(scores, "prompt_tokens")["value"],
                "n": len(scores["accuracy"]),
                "failed": int(scores["failed"].sum()),
            }
            for dataset, by_method in reads.items()
            for name, scores in by_method.items()
        ]
    )


def reader_predictions(reads: Mapping[str, Mapping[str, dict]]) -> list[dict]:
    """Every reader record with its data set, method and DyG-RAG accuracy (``predictions.reader``)."""
    return [
        {"dataset": dataset, "method": name, **record.to_dict(), "accuracy": float(accuracy)}
        for dataset, by_method in reads.items()
        for name, scores in by_method.items()
        for record, accuracy in zip(scores["records"], scores["accuracy"])
    ]


def reader_mean(scores: dict, metric: str = "accuracy") -> dict:
    """One reader number of :func:`read_scores` (``accuracy``, ``recall``, ``prompt_tokens``) over the
    questions answered, with n, answered and failed: a failed call is never a wrong answer (its per-question
    0 stays in ``scores`` for the predictions, but no mean counts it)."""
    return answered_mean(scores[metric], scores["failed"])
