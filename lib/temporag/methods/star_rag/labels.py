"""Step 1 of the rule graph — entity labelling (§3.2, Alg. 2).

Entity categories are not given, so STAR-RAG derives them from behaviour: each entity's relation set
is a transaction, Apriori (``efficient-apriori``, subsets of at most three relations, footnote 2) mines
the frequent relation subsets, the subsets are sorted and numbered (TypeIDs), and every entity keeps
the first ``k_type`` subsets it contains; an entity without any keeps its whole relation set as its
only label (the fallback, Alg. 2 lines 6–8).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from temporag.data.tkg import TemporalKG

ORDERS = ("specific", "support")


def relation_sets(kg: TemporalKG) -> list[tuple[int, ...]]:
    """RelSet[e]: the sorted relation ids of the facts where e is subject or object (Alg. 2 line 1)."""
    ent = np.concatenate([kg.s, kg.o]).astype(np.int64)
    rel = np.concatenate([kg.r, kg.r]).astype(np.int64)
    key = np.unique(ent * kg.n_relations + rel)
    ents, rels = key // kg.n_relations, key % kg.n_relations
    bounds = np.searchsorted(ents, np.arange(kg.n_entities + 1))
    rels_list = rels.tolist()
    return [tuple(rels_list[bounds[e] : bounds[e + 1]]) for e in range(kg.n_entities)]


def frequent_relation_subsets(
    relsets: Sequence[tuple[int, ...]], min_support: float, max_length: int = 3
) -> tuple[list[tuple[int, ...]], np.ndarray, list[np.ndarray]]:
    """Apriori (Alg. 2 line 2) over the entities' relation sets: (patterns, entity counts, members).

    ``min_support`` is the share of entities whose relation set must contain a subset; entities without
    any relation are left out of the transactions (they have no facts to summarise).
    """
    from efficient_apriori import itemsets_from_transactions

    tx_ids = [i for i, rs in enumerate(relsets) if rs]
    transactions = [relsets[i] for i in tx_ids]
    if not transactions:
        return [], np.zeros(0, dtype=np.int64), []
    found, _ = itemsets_from_transactions(
        transactions, min_support=min_support, max_length=max_length, output_transaction_ids=True
    )
    tx_ids_arr = np.asarray(tx_ids, dtype=np.int64)
    patterns, counts, members = [], [], []
    for by_len in found.values():
        for pattern, item in by_len.items():
            patterns.append(tuple(sorted(int(r) for r in pattern)))
            counts.append(int(item.itemset_count))
            members.append(np.sort(tx_ids_arr[np.fromiter(item.members, dtype=np.int64)]))
    return patterns, np.asarray(counts, dtype=np.int64), members


@dataclass(frozen=True)
class EntityLabels:
    """C(e) for every entity: TypeIDs of relation patterns (Apriori patterns first, then fallbacks)."""

    min_support: float
    k_type: int
    max_length: int
    order: str
    patterns: list[tuple[int, ...]]  # TypeID -> relation ids
    pattern_entities: np.ndarray  # entities whose relation set contains the pattern (fallback: equals it)
    n_frequent: int  # TypeIDs below this are Apriori patterns, the rest are fallback relation sets
    offsets: np.ndarray  # CSR over entities
    labels: np.ndarray  # TypeIDs, each entity's in rank order

    def of(self, entity: int) -> np.ndarray:
        return self.labels[self.offsets[entity] : self.offsets[entity + 1]]

    @property
    def counts(self) -> np.ndarray:
        """Number of labels per entity (0 for an entity without facts)."""
        return np.diff(self.offsets)

    @cached_property
    def used(self) -> np.ndarray:
        """TypeIDs assigned to at least one entity (the label alphabet 𝒜 of Appendix B)."""
        return np.unique(self.labels)

    @property
    def n_labels(self) -> int:
        return int(len(self.used))

    def is_fallback(self, type_id: int) -> bool:
        return type_id >= self.n_frequent

    @cached_property
    def padded(self) -> np.ndarray:
        """(entities × k_type) TypeIDs, -1 where an entity has fewer labels."""
        out = np.full((len(self.offsets) - 1, max(1, self.k_type)), -1, dtype=np.int64)
        counts = self.counts
        rows = np.repeat(np.arange(len(counts)), counts)
        cols = np.arange(len(self.labels)) - np.repeat(self.offsets[:-1], counts)
        out[rows, cols] = self.labels
        return out

    def name(self, type_id: int, kg: TemporalKG, short: bool = False) -> str:
        """A readable label: its relations, e.g. '{Consult, Make statement}' (fallbacks marked *)."""
        rels = [kg.relation_labels[r] for r in self.patterns[type_id]]
        if short:
            rels = [r if len(r) <= 18 else r[:17] + "…" for r in rels]
            if len(rels) > 3:
                rels = rels[:3] + [f"+{len(rels) - 3}"]
        star = "*" if self.is_fallback(type_id) else ""
        return f"T{type_id}{star}{{{', '.join(rels)}}}"

    def summary(self) -> dict:
        counts = self.counts[self.counts > 0]
        fallback_entities = int(np.sum(self.labels >= self.n_frequent))
        return {
            "min_support": self.min_support,
            "k_type": self.k_type,
            "max_length": self.max_length,
            "order": self.order,
            "frequent_subsets": self.n_frequent,
            "frequent_by_length": {
                int(k): int(v)
                for k, v in zip(
                    *np.unique([len(p) for p in self.patterns[: self.n_frequent]], return_counts=True)
                )
            },
            "labels_in_use": self.n_labels,
            "fallback_labels": int(len(self.patterns) - self.n_frequent),
            "entities_with_fallback": fallback_entities,
            "entities_labelled": int(len(counts)),
            "mean_labels_per_entity": float(counts.mean()) if len(counts) else 0.0,
        }


def label_entities(
    kg: TemporalKG,
    min_support: float = 0.05,
    k_type: int = 2,
    max_length: int = 3,
    order: str = "specific",
    mined: tuple | None = None,
) -> EntityLabels:
    """Alg. 2: label every entity with the first ``k_type`` frequent relation subsets it contains.

    ``mined`` = (relation sets, Apriori output) lets a parameter sweep reuse one mining run per support.

    "Sort F" (line 3) is not specified; ``order="specific"`` ranks longer subsets first, then by
    support, so an entity's first labels are its most specific frequent patterns (the paper's example
    labels Oman with three-relation subsets); ``order="support"`` ranks by support only (then the most
    common single relations come first).  Ties break on the relation ids.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if k_type < 1:
        raise ValueError("k_type must be at least 1")
    if mined is None:
        relsets = relation_sets(kg)
        mined = (relsets, frequent_relation_subsets(relsets, min_support, max_length))
    relsets, (patterns, counts, members) = mined
    if order == "specific":
        rank = sorted(range(len(patterns)), key=lambda i: (-len(patterns[i]), -counts[i], patterns[i]))
    else:
        rank = sorted(range(len(patterns)), key=lambda i: (-counts[i], len(patterns[i]), patterns[i]))
    patterns = [patterns[i] for i in rank]
    counts = counts[rank] if len(rank) else counts
    members = [members[i] for i in rank]
    n_freq = len(patterns)
    # (TypeID, entity) incidences; the first k_type TypeIDs per entity are its labels (line 9)
    if members:
        inc_type = np.concatenate([np.full(len(m), t, dtype=np.int64) for t, m in enumerate(members)])
        inc_ent = np.concatenate(members)
        by = np.lexsort((inc_type, inc_ent))
        inc_type, inc_ent = inc_type[by], inc_ent[by]
        starts = np.searchsorted(inc_ent, inc_ent, side="left")
        keep = (np.arange(len(inc_ent)) - starts) < k_type
        inc_type, inc_ent = inc_type[keep], inc_ent[keep]
    else:
        inc_type = inc_ent = np.zeros(0, dtype=np.int64)
    has = np.zeros(kg.n_entities, dtype=bool)
    has[inc_ent] = True
    # fallback (lines 6–8): the entity's whole relation set becomes its single label
    fallback_sets: dict[tuple[int, ...], list[int]] = {}
    for e in np.flatnonzero(~has).tolist():
        if relsets[e]:
            fallback_sets.setdefault(relsets[e], []).append(e)
    fb_order = sorted(fallback_sets, key=lambda p: (-len(p), p))
    fb_type, fb_ent, fb_counts = [], [], []
    for j, pattern in enumerate(fb_order):
        ents = fallback_sets[pattern]
        fb_type.extend([n_freq + j] * len(ents))
        fb_ent.extend(ents)
        fb_counts.append(len(ents))
    all_type = np.concatenate([inc_type, np.asarray(fb_type, dtype=np.int64)])
    all_ent = np.concatenate([inc_ent, np.asarray(fb_ent, dtype=np.int64)])
    by = np.lexsort((all_type, all_ent))
    all_type, all_ent = all_type[by], all_ent[by]
    offsets = np.zeros(kg.n_entities + 1, dtype=np.int64)
    np.cumsum(np.bincount(all_ent, minlength=kg.n_entities), out=offsets[1:])
    return EntityLabels(
        min_support=float(min_support),
        k_type=int(k_type),
        max_length=int(max_length),
        order=order,
        patterns=patterns + fb_order,
        pattern_entities=np.concatenate([counts.astype(np.int64), np.asarray(fb_counts, dtype=np.int64)]),
        n_frequent=n_freq,
        offsets=offsets,
        labels=all_type,
    )
