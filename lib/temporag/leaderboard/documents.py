"""Vanilla RAG vs IA-RAG on the document data sets (TimeQA, TempReason, ComplexTR), one protocol.

MultiTQ's template reader does not apply to documents, so this part of the leaderboard has the
LLM-free retrieval recall (every gold answer contained in the retrieved text, DyG-RAG's rule), the
context's cl100k tokens, retrieval latency, and DyG-RAG's token-level reader accuracy on a small seeded
sample — all through the declaring method's own notebook steps (``documents=`` of its registry entry:
IA-RAG declares Vanilla RAG and IA-RAG), with the same MiniLM encoder as the MultiTQ methods and the
paper's K1 / K2.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.methods import registry
from temporag.methods.registry import DocumentRows
from temporag.sampling import stratified_sample


def declared() -> list[DocumentRows]:
    """Every registered method's document rows, in reading order."""
    return [e.documents for e in registry.entries() if e.documents is not None]


def prepare(
    datasets: Sequence[str], sample_size: int | None, encoder, seed: int = 0, *, smoke: bool
) -> list[tuple[DocumentRows, dict]]:
    """Each declaring method's setups for ``datasets`` (its documents, a seeded question sample, its
    offline build), built by the method's own ``prepare``."""
    return [(rows, rows.prepare(datasets, sample_size, encoder, seed, smoke=smoke)) for rows in declared()]


def score(setups: list[tuple[DocumentRows, dict]], llm, reader_sample: int, profile: str, seed: int = 0):
    """One row per (data set, method): retrieval recall with its 95% interval, tokens, latency, and the
    reader's DyG-RAG accuracy / recall on ``reader_sample`` seeded questions (with its calls and tokens)."""
    rows = []
    for method_rows, by_dataset in setups:
        rows += _rows(method_rows, by_dataset, llm, reader_sample, profile, seed)
    return pd.DataFrame(rows)


def _rows(method_rows: DocumentRows, setups: dict, llm, reader_sample: int, profile: str, seed: int) -> list:
    """One declaring method's rows of :func:`score`, data set by data set."""
    rows = []
    for ds, setup in setups.items():
        sample = stratified_sample(setup.questions, reader_sample, np.random.default_rng(seed + 1))
        for name, (method, k_shown) in method_rows.rows(setup, profile).items():
            found = method_rows.retrieval(method, setup.questions, k_shown)
            low, high = evaluate.bootstrap_ci(found["recall"], seed=seed)
            latency = evaluate.latency_summary(found["latency_s"])
            row = {
                "dataset": ds,
                "method": name,
                "n": len(setup.questions),
                "retrieval recall": float(found["recall"].mean()),
                "CI low": low,
                "CI high": high,
                "context tokens / question": float(found["tokens"].mean()),
                "retrieval p50 ms": latency["p50_ms"],
                "retrieval p95 ms": latency["p95_ms"],
            }
            if llm is not None and sample:
                read = method_rows.reader(method, sample, llm, k=k_shown)
                records = read["records"]
                accuracy = method_rows.reader_mean(read, "accuracy")  # failed calls left out, counted
                row.update(
                    {
                        "reader n": len(sample),
                        "reader accuracy": accuracy["value"],
                        "reader recall": method_rows.reader_mean(read, "recall")["value"],
                        "reader failed": accuracy["failed"],
                        "LLM calls / question": float(np.mean([r.llm_calls for r in records])),
                        "reader tokens / question": float(
                            np.mean([r.prompt_tokens + r.completion_tokens for r in records])
                        ),
                    }
                )
            rows.append(row)
    return rows
