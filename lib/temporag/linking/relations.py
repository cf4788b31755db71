"""Relation grounding: a question's relation phrase → the KG relation it means (TECQA's Ground(r, R_KG)).

The phrase is what is left of the question once entities, dates and scaffolding are removed
(:func:`~temporag.linking.mentions.predicate_text`); cue words narrow the candidates the way TECQA's
relation prompt does, and paraphrases of each label let past-tense or nominal phrasings meet their relation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from temporag.linking.phrase_vectors import encode_memo
from temporag.linking.tokens import name_key, tokenize
from temporag.retrieval.topk import top_k_stable

#: The offline counterpart of the mapping rules in TECQA's relation prompt (appendix F.1): a cue word in
#: the relation phrase (matched as a word prefix) narrows the candidates to the relation labels of one
#: family before the cosine decides among them.  A family that would leave no candidate is skipped.
RELATION_CUES: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    # (cue prefixes, label prefixes or fragments, how to match the label: "start" | "contains")
    (
        ("want", "wish", "plan", "aim", "intend", "intention", "interest", "hope", "willing"),
        ("express intent",),
        "start",
    ),
    (("ask", "urge", "call", "request", "appeal", "plead"), ("appeal", "make an appeal or request"), "start"),
    (("negotiat", "talk"), ("negotiat",), "contains"),
    (("meet", "meeting"), ("meet",), "contains"),
    (("visit", "travel", "trip"), ("make a visit", "host a visit"), "start"),
    (("attack", "force"), ("force", "violence", "fight", "attack"), "contains"),
    (("criticis", "criticiz", "condemn", "denounc"), ("criticize or denounce",), "start"),
    (("cooperat",), ("cooperat",), "contains"),
)


def cue_families(text: str) -> list[tuple[tuple[str, ...], str]]:
    """The relation-label families whose cue words occur in a relation phrase."""
    norms = [t.norm for t in tokenize(text)]
    fired = []
    for cues, labels, how in RELATION_CUES:
        if any(n.startswith(c) for n in norms for c in cues):
            fired.append((labels, how))
    return fired


_IRREGULAR_PAST = {
    "make": "made",
    "give": "gave",
    "seek": "sought",
    "bring": "brought",
    "hold": "held",
    "take": "took",
    "meet": "met",
    "send": "sent",
    "threaten": "threatened",
}


def relation_paraphrases(label: str) -> list[str]:
    """Forms a question uses for a relation name, made from the name itself: the name, its leading verb
    in the past tense ("Make optimistic comment" → "made optimistic comment") and the name without its
    leading verb ("optimistic comment"), so a past-tense or nominal phrasing meets its own relation."""
    words = label.split()
    if len(words) < 2 or not words[0].isalpha():
        return [label]
    verb = words[0].lower()
    if verb in _IRREGULAR_PAST:
        past = _IRREGULAR_PAST[verb]
    elif verb.endswith("e"):
        past = verb + "d"
    elif verb.endswith("y") and verb[-2:-1] not in "aeiou":
        past = verb[:-1] + "ied"
    else:
        past = verb + "ed"
    rest = " ".join(words[1:])
    return [label, f"{past} {rest}", rest]


class RelationGrounder:
    """TECQA's Ground(r, R_KG): a relation phrase → the relation label with the highest cosine.

    ``paraphrase_vectors`` (optional, rows: one per :func:`relation_paraphrases` form, ``paraphrase_of``
    their relation) score each relation by its best form instead of its name alone."""

    def __init__(
        self,
        kg,
        encoder,
        relation_vectors: np.ndarray,
        use_cues: bool = True,
        paraphrase_vectors: np.ndarray | None = None,
        paraphrase_of: np.ndarray | None = None,
    ) -> None:
        self.kg = kg
        self.encoder = encoder
        self.relation_vectors = relation_vectors
        self.use_cues = use_cues
        self.paraphrase_vectors, self.paraphrase_of = paraphrase_vectors, paraphrase_of
        self._phrase_memo: dict[str, np.ndarray] = {}

    def score_rows(
        self,
        texts: Sequence[str],
        allowed: Sequence[np.ndarray | None] | None = None,
        cues: bool | None = None,
    ) -> np.ndarray:
        """Cosine of each text with every relation label, −inf where ``allowed`` or a cue family rules a
        relation out, and 1.0 for a text that is exactly a relation label (n_texts × n_relations).
        ``cues`` overrides the grounder's ``use_cues`` (False: the whole phrase's cosine alone decides)."""
        use_cues = self.use_cues if cues is None else cues
        if not len(texts):
            return np.zeros((0, len(self.kg.relation_labels)), dtype=np.float32)
        exact = {name_key(label): i for i, label in enumerate(self.kg.relation_labels)}
        labels = [label.casefold() for label in self.kg.relation_labels]
        vecs = encode_memo(self.encoder, [t or "event" for t in texts], self._phrase_memo)
        sims = np.asarray(vecs @ self.relation_vectors.T, dtype=np.float32)
        if self.paraphrase_vectors is not None:
            forms = vecs @ self.paraphrase_vectors.T
            for r in range(sims.shape[1]):
                sims[:, r] = np.maximum(sims[:, r], forms[:, self.paraphrase_of == r].max(axis=1))
        for i, text in enumerate(texts):
            row = sims[i]
            ok = np.ones(len(row), dtype=bool)
            if allowed is not None and allowed[i] is not None and len(allowed[i]):
                ok[:] = False
                ok[allowed[i]] = True
            if use_cues:
                for family, how in cue_families(text):
                    hit = np.array(
                        [
                            any(lab.startswith(f) if how == "start" else f in lab for f in family)
                            for lab in labels
                        ]
                    )
                    if (ok & hit).any():
                        ok &= hit
            row[~ok] = -np.inf
            rid = exact.get(name_key(text))
            if rid is not None and np.isfinite(row[rid]):
                row[rid] = 1.0
        return sims

    def ground(
        self, texts: Sequence[str], allowed: Sequence[np.ndarray | None] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Best relation per text (exact label wins); ``allowed`` optionally limits each text's candidates."""
        ids = np.zeros(len(texts), dtype=np.int64)
        scores = np.zeros(len(texts), dtype=np.float32)
        if not len(texts):
            return ids, scores
        rows = self.score_rows(texts, allowed)
        ids[:] = rows.argmax(axis=1)
        scores[:] = rows[np.arange(len(texts)), ids]
        return ids, scores


def top_relations(row: np.ndarray, m: int = 1, margin: float = 0.0) -> list[int]:
    """The best relation and up to ``m`` − 1 more whose score is within ``margin`` of it (best first):
    when grounding is uncertain the subgraph unites the close candidates instead of betting on one."""
    order = top_k_stable(row, max(m, 1))
    best = float(row[order[0]])
    return [int(r) for r in order if np.isfinite(row[r]) and best - float(row[r]) <= margin] or [
        int(order[0])
    ]
