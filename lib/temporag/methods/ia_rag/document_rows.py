"""IA-RAG's rows in the leaderboard's documents section: Vanilla RAG and IA-RAG on TimeQA, TempReason and
ComplexTR, built by IA-RAG's own notebook steps (:mod:`.experiments`, :mod:`.setups`) with the IA-RAG
notebook's defaults. Declared as ``documents=`` of the package's registry entry; the leaderboard
finds it there."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.methods.ia_rag import corpus
from temporag.methods.ia_rag.experiments import prepare as prepare_setup
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


def rows(setup, profile: str) -> dict:
    """The two rows of IA-RAG's Table 2 for one data set, with the units each shows its reader."""
    return {
        "Vanilla RAG": (setup.vanilla_chunks(), VANILLA_CHUNKS),
        "IA-RAG": (setup.ia_rag(), IA_UNITS[profile]),
    }
