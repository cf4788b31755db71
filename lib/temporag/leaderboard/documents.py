"""Vanilla RAG vs IA-RAG on the document data sets (TimeQA, TempReason, ComplexTR), one protocol.

MultiTQ's template reader does not apply to documents, so this part of the leaderboard has the
LLM-free retrieval recall (every gold answer contained in the retrieved text, DyG-RAG's rule), the
context's cl100k tokens, retrieval latency, and DyG-RAG's token-level reader accuracy on a small seeded
sample — all through IA-RAG's own notebook steps (:mod:`temporag.methods.ia_rag.setups` and
:mod:`~temporag.methods.ia_rag.reader_tables`), with the same MiniLM encoder as the MultiTQ methods and
the paper's K1 / K2.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.methods.ia_rag import corpus
from temporag.methods.ia_rag.experiments import prepare as prepare_setup
from temporag.methods.ia_rag.reader_tables import read_scores, reader_mean
from temporag.methods.ia_rag.retrieval import score_retrieval
from temporag.methods.ia_rag.setups import documents_for
from temporag.sampling import stratified_sample

VANILLA_CHUNKS = 2  # chunks Vanilla RAG shows (the IA-RAG notebook's default)
IA_UNITS = {"smoke": 15, "paper": 40}  # IA-RAG units shown to the reader (the IA-RAG notebook's defaults)


def prepare(datasets: Sequence[str], sample_size: int | None, encoder, seed: int = 0, *, smoke: bool) -> dict:
    """Each data set's documents, a seeded (stratified) question sample and IA-RAG's offline build; a smoke
    corpus is the documents the questions name plus three distractors.  The generator is drawn exactly as
    the IA-RAG notebook draws it (seeded by ``seed``, data sets in order), so with the same sample size the
    corpora — and their cached builds — are the IA-RAG notebook's own."""
    rng = np.random.default_rng(seed)
    setups = {}
    for ds in datasets:
        docs, qas, _ = corpus.load(ds)
        qs = stratified_sample(qas, sample_size, rng)
        if smoke:
            docs = documents_for(qs, docs, 3, rng)
        setups[ds] = prepare_setup(ds, docs, qs, encoder, progress=False)
    return setups


def methods_of(setup) -> dict:
    """The two rows of IA-RAG's Table 2 for one data set, with the context each shows its reader."""
    return {"Vanilla RAG": (setup.vanilla_chunks(), VANILLA_CHUNKS), "IA-RAG": (setup.ia_rag(), None)}


def score(setups: dict, llm, reader_sample: int, profile: str, seed: int = 0):
    """One row per (data set, method): retrieval recall with its 95% interval, tokens, latency, and the
    reader's DyG-RAG accuracy / recall on ``reader_sample`` seeded questions (with its calls and tokens)."""
    rows = []
    for ds, setup in setups.items():
        sample = stratified_sample(setup.questions, reader_sample, np.random.default_rng(seed + 1))
        for name, (method, k) in methods_of(setup).items():
            k_shown = k if k is not None else IA_UNITS[profile]
            found = score_retrieval(method, setup.questions, k_shown)
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
                read = read_scores(method, sample, llm, k=k_shown)
                records = read["records"]
                accuracy = reader_mean(read, "accuracy")  # failed calls left out, counted
                row.update(
                    {
                        "reader n": len(sample),
                        "reader accuracy": accuracy["value"],
                        "reader recall": reader_mean(read, "recall")["value"],
                        "reader failed": accuracy["failed"],
                        "LLM calls / question": float(np.mean([r.llm_calls for r in records])),
                        "reader tokens / question": float(
                            np.mean([r.prompt_tokens + r.completion_tokens for r in records])
                        ),
                    }
                )
            rows.append(row)
    return pd.DataFrame(rows)
