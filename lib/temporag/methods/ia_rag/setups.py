"""One data set ready for the notebook's tables: its documents, seeded question sample, IA-RAG build and
the Vanilla RAG baselines it is compared with.

Two builds per data set are compared: the **paper reading** (τ_sem = 0.8, MEU summaries shown as
evidence lines, seeds first, :func:`prepare`) and the **calibrated** one (τ_sem by
:func:`.graph.calibrate_tau`, MEUs narrowing the unit search, the union ranked by fit to the question's
window: :func:`calibrated` with :data:`CALIBRATED`).  The baselines are Vanilla RAG over 1,200-token
chunks, over raw-text windows of about a unit's size and over the units themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from temporag.answer.evaluate import squad_normalise
from temporag.methods.ia_rag import Build, build_index
from temporag.methods.ia_rag.corpus import QA, Doc, load
from temporag.methods.ia_rag.retrieval import IARAG, VanillaRAG, chunk_pieces, chunk_vectors
from temporag.sampling import stratified_sample

K1_DEFAULT = {"TimeQA": 10, "TempReason": 20, "ComplexTR": 10}  # Appendix B.1
CALIBRATED = {"meus": "narrow", "order": "window"}  # the calibrated retrieval's options
WINDOW_TOKENS = 200  # Vanilla RAG's raw-text windows: about five units' worth of text
UNION_K = 500  # the whole union (no method returns more)


def load_datasets(
    datasets: Sequence[str],
    questions_file: str | None,
    sample_size: int | None,
    rng: np.random.Generator,
    smoke_extra: int | None = None,
) -> tuple[dict[str, tuple[list[Doc], list[QA], int]], list]:
    """Each data set's documents, its seeded question sample and its number of questions, and the files
    read (for their checksums).  ``questions_file`` replaces ComplexTR's questions only; ``smoke_extra``
    (smoke runs) keeps just the documents the sample needs plus that many distractors."""
    loaded, files = {}, []
    for dataset in datasets:
        own_questions = questions_file if dataset == "ComplexTR" else None
        docs, questions, paths = load(dataset, questions_file=own_questions)
        selected = stratified_sample(questions, sample_size, rng)
        if smoke_extra is not None:
            docs = documents_for(selected, docs, smoke_extra, rng)
        loaded[dataset] = (docs, selected, len(questions))
        files += paths
    return loaded, files


def data_table(loaded: Mapping[str, tuple[list[Doc], list[QA], int]]) -> pd.DataFrame:
    """What the run reads per data set: documents, selected questions and all questions."""
    return pd.DataFrame(
        [
            {
                "dataset": dataset,
                "documents": len(docs),
                "questions (selected)": len(questions),
                "questions (all)": total,
            }
            for dataset, (docs, questions, total) in loaded.items()
        ]
    )


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


def prepare(dataset: str, docs, questions, encoder, *, k1: int | None = None, **build_kw) -> Setup:
    """The paper reading of one data set: ``build_kw`` go to :func:`.build_index`, K1 defaults to the
    paper's for the data set."""
    build = build_index(docs, encoder, **build_kw)
    return Setup(dataset, list(docs), list(questions), build, k1 or K1_DEFAULT[dataset], encoder)


def calibrated(setup: Setup, build_kw: Mapping) -> Setup:
    """The same documents and questions on a build whose τ_sem is calibrated for the encoder."""
    build = build_index(setup.docs, setup.encoder, **{**build_kw, "tau": None})
    return Setup(setup.dataset, setup.docs, setup.questions, build, setup.k1, setup.encoder, setup.chunk_vecs)
