"""The KG workspace: what every method on one temporal KG shares, built lazily and once.

It lives in the methods layer because the semantic baseline's retriever is one of the things it shares
(other methods rank with its vectors). One encoder and the vectors it gives (entity and relation names, the
KG's distinct triple texts through the kit's semantic retriever), the offline question parser
(:mod:`temporag.question.parsing`) and the template reader (:mod:`temporag.answer.template_reader`) with
each question's template memoised. SAR's agent, the leaderboard's rows and its LLM-free scoring all read
from one workspace, so every method sees the same vectors and the same parse of a question.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

import numpy as np

from temporag.answer.template_reader import TemplateQuestion, TemplateReader, analyse_many
from temporag.linking import name_key
from temporag.methods.semantic import SemanticRetriever
from temporag.question.parsing import OfflineParser
from temporag.retrieval.embed import Encoder, kg_name_vectors


class KGWorkspace:
    """Encoder, name vectors, semantic retriever, offline parser and template reader of one KG, and the run
    they serve (its questions, profile and seed: what a leaderboard row is built for)."""

    def __init__(
        self,
        kg,
        encoder: Encoder | None = None,
        *,
        questions: Sequence = (),
        profile: str = "smoke",
        seed: int = 0,
    ) -> None:
        self.kg = kg
        self.questions, self.profile, self.seed = questions, profile, seed
        self._encoder = encoder
        self._text_vectors: dict[str, np.ndarray] = {}
        self._templates: dict[str, TemplateQuestion] = {}

    @cached_property
    def encoder(self) -> Encoder:
        return self._encoder or Encoder()

    @cached_property
    def name_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Entity-label and relation-label vectors (cached on disk by ``embed``)."""
        return kg_name_vectors(self.kg, self.encoder)

    @property
    def entity_vectors(self) -> np.ndarray:
        return self.name_vectors[0]

    @property
    def relation_vectors(self) -> np.ndarray:
        return self.name_vectors[1]

    @cached_property
    def semantic(self) -> SemanticRetriever:
        """The kit's semantic retriever (Naive RAG, ReAct RAG's search); it loads the triple vectors."""
        return SemanticRetriever(self.kg, self.encoder)

    @cached_property
    def triple_vectors(self) -> np.ndarray:
        """Vectors of the KG's distinct 's r o' texts (loaded once, shared with the semantic retriever)."""
        return self.semantic.triple_vectors

    @cached_property
    def parser(self) -> OfflineParser:
        """The offline parser every method's question reading shares (the paper-faithful settings)."""
        return OfflineParser(self.kg, self.encoder, self.entity_vectors, self.relation_vectors)

    @cached_property
    def reader(self) -> TemplateReader:
        return TemplateReader(self.kg)

    def templates(self, questions: Sequence[str]) -> list[TemplateQuestion]:
        """The template of each question (:func:`temporag.answer.template_reader.analyse` of the offline
        parse), parsed in one batch and memoised: SAR's offline policy and rule verifier and the LLM-free
        scoring of every method's context share them."""
        todo = [q for q in dict.fromkeys(questions) if q not in self._templates]
        if todo:
            self._templates.update(zip(todo, analyse_many(todo, self.parser.parse_many(todo))))
        return [self._templates[q] for q in questions]

    def read_contexts(self, questions: Sequence, contexts: Sequence) -> list:
        """The template reader's reading of each question's context (fact ids): an LLM-free answer."""
        templates = self.templates([q.question for q in questions])
        return self.reader.read_many(templates, [np.asarray(c, dtype=np.int64) for c in contexts])

    @cached_property
    def relation_ids(self) -> dict[tuple[str, ...], int]:
        """Relation id by the matching key of its label (:func:`temporag.linking.name_key`)."""
        return {name_key(label): i for i, label in enumerate(self.kg.relation_labels)}

    def embed(self, text: str) -> np.ndarray:
        """A short text's vector, memoised (sub-queries and their parts repeat across questions)."""
        vec = self._text_vectors.get(text)
        if vec is None:
            vec = self.encoder.encode([text], progress=False)[0]
            self._text_vectors[text] = vec
        return vec

    def name_vector(self, text: str, kind: str) -> np.ndarray:
        """The vector a text is compared with KG names by: a KG name (any form the linker knows) gives that
        name's own vector, anything else is embedded.  ``kind`` is "entity" or "relation"."""
        if kind == "entity":
            eid = self.parser.linker.aliases.get(name_key(text))
            if eid is not None:
                return self.entity_vectors[eid]
        else:
            rid = self.relation_ids.get(name_key(text))
            if rid is not None:
                return self.relation_vectors[rid]
        return self.embed(text)
