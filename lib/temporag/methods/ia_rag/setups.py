"""One data set ready for the notebook's tables: its documents, seeded question sample, IA-RAG build and
the Vanilla RAG baselines it is compared with.

Two builds per data set are compared: the **paper reading** (τ_sem = 0.8, MEU summaries shown as
evidence lines, seeds first, :func:`.experiments.prepare`) and the **calibrated** one (τ_sem by
:func:`.graph.calibrate_tau`, MEUs narrowing the unit search, the union ranked by fit to the question's
window: :func:`.experiments.calibrated` with :data:`CALIBRATED`).  The baselines are Vanilla RAG over
1,200-token chunks, over raw-text windows of about a unit's size and over the units themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from temporag.answer.evaluate import squad_normalise
from temporag.methods.ia_rag import Build
from temporag.methods.ia_rag.corpus import QA, Doc
from temporag.methods.ia_rag.retrieval import IARAG, VanillaRAG, chunk_pieces, chunk_vectors

K1_DEFAULT = {"TimeQA": 10, "TempReason": 20, "ComplexTR": 10}  # Appendix B.1
CALIBRATED = {"meus": "narrow", "order": "window"}  # the calibrated retrieval's options
WINDOW_TOKENS = 200  # Vanilla RAG's raw-text windows: about five units' worth of text
UNION_K = 500  # the whole union (no method returns more)


def documents_for(
    questions: Sequence[QA], docs: Sequence[Doc], extra: int, rng: np.random.Generator
) -> list[Doc]:
    """The documents whose title the questions name (or hold their answer, ``QA.gold_docs``), plus
    ``extra`` seeded distractors (smoke corpora)."""
    names = [squad_normalise(q.question) for q in questions]
    gold = {i for q in questions for i in q.gold_docs}
    hit = [
        d
        for d in docs
        if d.doc_id in gold or ((t := squad_normalise(d.title)) and any(t in n for n in names))
    ]
    rest = [d for d in docs if d not in hit]
    pick = rng.choice(len(rest), size=min(extra, len(rest)), replace=False) if rest else []
    return hit + [rest[i] for i in sorted(pick)]


@dataclass
class Setup:
    """One data set ready for the tables: documents, questions, the IA-RAG build, the baselines."""

    dataset: str
    docs: list[Doc]
    questions: list[QA]
    build: Build
    k1: int
    encoder: object
    chunk_vecs: np.ndarray | None = None
    extra: dict = field(default_factory=dict)

    def ia_rag(self, **kw) -> IARAG:
        kw.setdefault("k1", self.k1)
        return IARAG(self.build.index, self.encoder, **kw)

    def vanilla_chunks(self) -> VanillaRAG:
        if self.chunk_vecs is None:
            self.chunk_vecs = chunk_vectors(self.build.chunks, self.encoder)
        return VanillaRAG(
            [c.text for c in self.build.chunks], self.chunk_vecs, self.encoder, "Vanilla RAG (chunks)"
        )

    def vanilla_units(self) -> VanillaRAG:
        units = self.build.index.graph.units
        return VanillaRAG(
            [u.line() for u in units], self.build.index.graph.vectors, self.encoder, "Vanilla RAG (IEUs)"
        )

    def vanilla_windows(self, size: int = WINDOW_TOKENS) -> VanillaRAG:
        """Dense retrieval over consecutive raw-text windows of ``size`` tokens (no extraction at all):
        the chunks' ``size``-token pieces, whose vectors the chunk vectors already average."""
        key = f"windows{size}"
        if key not in self.extra:
            texts, _ = chunk_pieces(self.build.chunks, size)
            self.extra[key] = (texts, self.encoder.encode_cached(texts, desc="embedding chunk windows"))
        texts, vectors = self.extra[key]
        return VanillaRAG(texts, vectors, self.encoder, f"Vanilla RAG ({size}-token windows)")
