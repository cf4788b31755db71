"""Every registered MultiTQ method, built once on one KG with one embedder, behind the retrieval interface.

The leaderboard compares methods, not notebooks, so each method package declares the rows it puts here
(:class:`temporag.methods.registry.Contender`): how to build its :class:`~temporag.methods.base.Method`
exactly as its notebook builds it — the paper's printed hyper-parameters, the kit's offline parse where the
paper uses an LLM — from one shared :class:`~temporag.methods.workspace.KGWorkspace`, so every row uses the
same all-MiniLM-L6-v2 vectors (:class:`~temporag.methods.workspace.KGWorkspace` holds them: triple, entity
and relation vectors, the offline parser, the template reader). Each row carries its *native context* (its
``k``): the evidence the method hands its reader as published (STAR-RAG's K1 = 10 events, TimeR4's n = 15
facts, TECQA's ~20 chain facts, SAR's K = 15 facts per SEARCH), so tokens and recall are measured on what a
reader would see. Every row retrieves through the one interface, ``retrieve(questions, k, progress=False,
q_vecs=...)``, the question vectors computed once for all of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from temporag.methods import registry
from temporag.methods.base import Method, Retrieval
from temporag.methods.workspace import KGWorkspace
from temporag.retrieval.embed import Encoder

log = logging.getLogger(__name__)


def method_names() -> list[str]:
    """The leaderboard's MultiTQ rows, in the order its tables list them."""
    return [c.name for _, c in registry.contenders()]


@dataclass
class Entry:
    """One method on the leaderboard: the Method object, the ``k`` of its native context, a note on the
    variant that ran (which retriever, which parse, which graph) and the paper package it comes from."""

    name: str
    method: Method
    k: int | None = None
    note: str = ""
    paper: str | None = None
    shared: Callable[[Sequence], dict] = field(default=lambda questions: {}, repr=False)
    retrieval: Retrieval | None = field(default=None, repr=False)

    def run(self, questions: Sequence) -> Retrieval:
        """The native context of every question through the one interface (kept on the entry for the
        reader and the tables)."""
        self.retrieval = self.method.retrieve(questions, self.k, progress=False, **self.shared(questions))
        if len(self.retrieval) != len(questions):
            raise RuntimeError(f"{self.name}: {len(self.retrieval)} rankings for {len(questions)} questions")
        return self.retrieval

    def context_lines(self, ids: Sequence[int]) -> list[str]:
        return self.method.evidence_lines(ids)


def build_roster(
    kg, questions: Sequence, *, profile: str = "smoke", seed: int = 0, encoder=None
) -> tuple[list[Entry], object]:
    """Every registered MultiTQ row, sharing one encoder and one set of vectors (see the module
    docstring), and the shared :class:`~temporag.methods.workspace.KGWorkspace` (offline parse, template
    reader)."""
    workspace = KGWorkspace(kg, encoder or Encoder(), questions=questions, profile=profile, seed=seed)
    texts = [q.question for q in questions]
    known = workspace.semantic.embed_questions(texts)

    def shared(qs) -> dict:
        """The shared inputs of ``qs``: vectors embedded once for the roster's questions, again for others."""
        asked = [q.question for q in qs]
        return {"q_vecs": known if asked == texts else workspace.semantic.embed_questions(asked)}

    entries = []
    for package, row in registry.contenders():
        method, note = row.build(workspace)
        paper = package.name if package.paper else None
        entries.append(Entry(row.name, method, row.k, note, paper, shared))
    return entries, workspace
