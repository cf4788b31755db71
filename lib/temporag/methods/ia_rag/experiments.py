"""The notebook's experiment steps as functions, so each notebook cell stays a few lines.

``Setup`` holds one data set's documents, questions, build and baselines; ``variants`` makes the
Table 3 / 4 / 7 / 8 retrievers; ``read_scores`` runs the kit's reader and scores DyG-RAG's token-level
accuracy / recall on its answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from temporag.evaluate import answered_mean, squad_normalise, token_accuracy_recall
from temporag.methods.ia_rag import Build, build_index
from temporag.methods.ia_rag.corpus import QA, Doc
from temporag.methods.ia_rag.retrieval import IARAG, VanillaRAG, chunk_vectors, score_retrieval

score = score_retrieval  # LLM-free recall, tokens and latency of one retriever
__all__ = [
    "IARAG",
    "build_index",
    "score",
    "prepare",
    "variants",
    "read_scores",
    "reader_mean",
    "documents_for",
]

K1_DEFAULT = {"TimeQA": 10, "TempReason": 20, "ComplexTR": 10}  # Appendix B.1


def documents_for(
    questions: Sequence[QA], docs: Sequence[Doc], extra: int, rng: np.random.Generator
) -> list[Doc]:
    """The documents whose title the questions name, plus ``extra`` seeded distractors (smoke corpora)."""
    names = [squad_normalise(q.question) for q in questions]
    hit = [d for d in docs if (t := squad_normalise(d.title)) and any(t in n for n in names)]
    rest = [d for d in docs if d not in hit]
    pick = rng.choice(len(rest), size=min(extra, len(rest)), replace=False) if rest else []
    return hit + [rest[i] for i in sorted(pick)]


@dataclass
class Setup:
    """One data set ready for the tables: documents, questions, the IA-RAG build, both baselines."""

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


def prepare(dataset: str, docs, questions, encoder, *, k1: int | None = None, **build_kw) -> Setup:
    build = build_index(docs, encoder, **build_kw)
    return Setup(dataset, list(docs), list(questions), build, k1 or K1_DEFAULT[dataset], encoder)


def variants(setup: Setup, docs_kw: dict, k2: int) -> dict[str, IARAG]:
    """Tables 3 and 4: IA-RAG and its ablations (w/o Tight. needs a build without tightening)."""
    untight = build_index(setup.docs, setup.encoder, **{**docs_kw, "tightening": "none"})
    return {
        "IA-RAG": setup.ia_rag(k2=k2),
        "w/o IA": setup.ia_rag(k2=k2, traversal="none"),
        "w/o Tight.": IARAG(untight.index, setup.encoder, k1=setup.k1, k2=k2),
        "w/o Hier.": setup.ia_rag(k2=k2, hierarchy=False),
        "w/All": setup.ia_rag(k2=k2, traversal="all"),
        "w/Top-5": setup.ia_rag(k2=k2, traversal="top5"),
    }


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


def reader_mean(scores: dict, metric: str = "accuracy") -> dict:
    """One reader number of :func:`read_scores` (``accuracy``, ``recall``, ``prompt_tokens``) over the
    questions answered, with n, answered and failed: a failed call is never a wrong answer (its per-question
    0 stays in ``scores`` for the predictions, but no mean counts it)."""
    return answered_mean(scores[metric], scores["failed"])
