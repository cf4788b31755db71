"""TECQA §4.3: the temporal evidence chain, as pure steps over the KG's arrays.

* §4.2.2 F_q = F_main ∪ F_context (Eqs. 3–5) is the kit's :func:`temporag.question.parsing.subgraph` (the
facts a
  parse points at; the leaderboard reads it too);
* §4.3 explicit anchors by regex with ISO normalisation that keeps the granularity
  (:func:`explicit_anchors`), implicit anchors = dates of the top-N most similar subgraph facts (Eq. 6,
  :func:`implicit_anchors`), k-nearest temporal neighbours of every anchor (Eqs. 7–8,
  :func:`knn_temporal`), proximity serialisation (Eq. 9, :func:`serialise`); :class:`EvidenceChain` is
  what one question's chain holds, in the order it was built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from temporag.question.parsing import Constraints
from temporag.retrieval.topk import top_k_stable
from temporag.timeutil import TimeValue, extract_time_mentions

# ----------------------------------------------------------------------------------------------------
# §4.3 temporal evidence chain


def explicit_anchors(question: str) -> list[TimeValue]:
    """T_exp: dates named in the question, ISO-normalised with their granularity ("April 2005" → 2005-04)."""
    seen, out = set(), []
    for m in extract_time_mentions(question):
        if m.value not in seen:
            seen.add(m.value)
            out.append(m.value)
    return out


def fact_days(kg, facts: np.ndarray) -> np.ndarray:
    """A fact's representative day: the start day, or the midpoint of an interval (§5.1, CronQuestions)."""
    start, end = kg.t_start[facts].astype(np.int64), kg.t_end[facts].astype(np.int64)
    return (start + end) // 2


def fact_similarity(kg, triple_vectors: np.ndarray, q_vec: np.ndarray, facts: np.ndarray) -> np.ndarray:
    """sim(q, text(f)) for subgraph facts: each distinct (s, r, o) text is scored once."""
    if not len(facts):
        return np.empty(0, dtype=np.float32)
    triples = kg.triple_of_fact[facts]
    uniq, inverse = np.unique(triples, return_inverse=True)
    return (triple_vectors[uniq] @ q_vec)[inverse].astype(np.float32)


def implicit_anchors(kg, facts: np.ndarray, sims: np.ndarray, n: int) -> tuple[list[TimeValue], np.ndarray]:
    """T_imp (Eq. 6): the days of the top-N facts by similarity, and those facts' ids."""
    top = facts[top_k_stable(sims, n)]  # ties (facts of one triple): chronological
    anchors, seen = [], set()
    for day in fact_days(kg, top).tolist():
        if day not in seen:
            seen.add(day)
            anchors.append(TimeValue(int(day), int(day), "day"))
    return anchors, top


def temporal_distance(kg, facts: np.ndarray, anchor: TimeValue) -> np.ndarray:
    """|t_i − t| in days; 0 anywhere inside a month or year anchor (the granularity is kept)."""
    days = fact_days(kg, facts)
    return np.maximum(np.maximum(anchor.first_day - days, days - anchor.last_day), 0)


def knn_temporal(kg, facts: np.ndarray, anchors: Sequence[TimeValue], k: int) -> np.ndarray:
    """Eqs. 7–8: for each anchor the K facts closest in time — before or after it — united, sorted ids.

    Ties at the K-th distance go to the earlier fact (then the lower id), so the result is deterministic.
    """
    if not len(facts) or not anchors or k <= 0:
        return np.empty(0, dtype=np.int32)
    days = fact_days(kg, facts)
    keep = np.zeros(len(facts), dtype=bool)
    for anchor in anchors:
        dist = temporal_distance(kg, facts, anchor)
        if len(facts) <= k:
            keep[:] = True
            break
        order = np.lexsort((facts, days, dist))
        keep[order[:k]] = True
    return np.sort(facts[keep]).astype(np.int32)


def proximity(kg, facts: np.ndarray, anchors: Sequence[TimeValue]) -> np.ndarray:
    """δ(f) of Eq. 9: days to the nearest anchor (0 inside a month/year anchor)."""
    if not anchors:
        return np.zeros(len(facts), dtype=np.int64)
    return np.min(np.stack([temporal_distance(kg, facts, a) for a in anchors]), axis=0)


def serialise(
    kg, facts: np.ndarray, anchors: Sequence[TimeValue], sims: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """S_prox (Eq. 9): facts in ascending δ and their δ values.

    Facts equally close to an anchor come most similar first when ``sims`` is given (so the anchor
    event itself leads, as in the paper's Table 5), then chronologically, then by id."""
    facts = np.asarray(facts, dtype=np.int32)
    delta = proximity(kg, facts, anchors)
    neg_sim = np.zeros(len(facts), dtype=np.float32) if sims is None else -np.asarray(sims, dtype=np.float32)
    order = np.lexsort((facts, fact_days(kg, facts), neg_sim, delta))
    return facts[order], delta[order]


@dataclass
class EvidenceChain:
    """Everything TECQA built for one question, in the order it was built."""

    question: str
    constraints: Constraints
    subgraph: np.ndarray
    explicit: list[TimeValue]
    implicit: list[TimeValue]
    anchor_facts: np.ndarray
    facts: np.ndarray  # serialised evidence chain
    delta: np.ndarray
    variant: str = "tecqa"

    @property
    def anchors(self) -> list[TimeValue]:
        return list(dict.fromkeys([*self.explicit, *self.implicit]))

    def __len__(self) -> int:
        return len(self.facts)

    def record(self) -> dict:
        """JSON-ready summary for results.json (ids, anchors, sizes)."""
        return {
            "subgraph_size": int(len(self.subgraph)),
            "anchors_explicit": [a.iso for a in self.explicit],
            "anchors_implicit": [a.iso for a in self.implicit],
            "anchor_facts": self.anchor_facts.tolist(),
            "facts": self.facts.tolist(),
        }

    def trace(self, kg) -> dict:
        """What a :class:`~temporag.methods.base.Retrieval` keeps of this chain: the parse (labels), the
        anchors, the subgraph size and the chain length (the ids themselves are the ranking)."""
        out = {**self.constraints.describe(kg), **self.record()}
        del out["facts"]
        out["chain_length"] = int(len(self.facts))
        return out
