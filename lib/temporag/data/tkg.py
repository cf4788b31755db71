"""The temporal knowledge graph as columnar arrays.

461K facts as Python objects cost gigabytes and seconds per scan; as int32 columns they cost
~9 MB and every method's filters become vectorised numpy.  Times are day numbers (days since
1970-01-01, numpy ``datetime64[D]`` as int) so that years, months and days compare directly;
point events (ICEWS) have ``t_start == t_end``, interval facts (Wikidata) span both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from temporag.timeutil import iso_day


def entity_label(name: str) -> str:
    """KG names use '_' for spaces (MultiTQ); answers and prompts use the spaced form."""
    return name.replace("_", " ")


@dataclass(frozen=True)
class CSRIndex:
    """Fact ids grouped by a key (entity, relation, time): ``ids[offsets[k]:offsets[k+1]]``."""

    offsets: np.ndarray
    ids: np.ndarray

    @classmethod
    def build(cls, keys: np.ndarray, n_keys: int, fact_ids: np.ndarray | None = None) -> CSRIndex:
        if fact_ids is None:
            fact_ids = np.arange(len(keys), dtype=np.int32)
        order = np.argsort(keys, kind="stable")
        counts = np.bincount(keys, minlength=n_keys)
        offsets = np.zeros(n_keys + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return cls(offsets=offsets, ids=fact_ids[order].astype(np.int32))

    def __getitem__(self, key: int) -> np.ndarray:
        return self.ids[self.offsets[key] : self.offsets[key + 1]]

    def many(self, keys) -> np.ndarray:
        """Union of the fact ids of several keys (sorted, unique)."""
        parts = [self[int(k)] for k in keys]
        if not parts:
            return np.empty(0, dtype=np.int32)
        return np.unique(np.concatenate(parts))

    def count(self, key: int) -> int:
        return int(self.offsets[key + 1] - self.offsets[key])

    def ids_of(self, keys: np.ndarray) -> np.ndarray:
        """Fact ids of several keys, ascending, without a Python loop over the keys (a fact listed under
        two of the keys appears twice; ``many`` is the unique form)."""
        keys = np.asarray(keys, dtype=np.int64)
        starts = self.offsets[keys]
        lens = self.offsets[keys + 1] - starts
        flat = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        return np.sort(self.ids[flat]).astype(np.int64)


@dataclass
class TemporalKG:
    """Facts (s, r, o, t_start, t_end) with id maps and indexes; facts are kept in file order."""

    s: np.ndarray
    r: np.ndarray
    o: np.ndarray
    t_start: np.ndarray
    t_end: np.ndarray
    entities: list[str]
    relations: list[str]
    name: str = "kg"
    granularity: str = "day"
    splits: dict[str, tuple[int, int]] = field(default_factory=dict)
    # display names when ids are not readable (CronQuestions: Wikidata QIDs → labels); default: the
    # id with '_' read as a space
    entity_names: list[str] | None = None
    relation_names: list[str] | None = None

    def __post_init__(self) -> None:
        n = len(self.s)
        for col in ("r", "o", "t_start", "t_end"):
            if len(getattr(self, col)) != n:
                raise ValueError(f"column {col} has {len(getattr(self, col))} rows, expected {n}")

    # -- sizes -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.s)

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    @property
    def n_relations(self) -> int:
        return len(self.relations)

    @cached_property
    def timestamps(self) -> np.ndarray:
        """Distinct start days, sorted."""
        return np.unique(self.t_start)

    def stats(self) -> dict[str, int]:
        return {
            "facts": len(self),
            "entities": self.n_entities,
            "relations": self.n_relations,
            "timestamps": int(len(self.timestamps)),
        }

    # -- id maps -----------------------------------------------------------------------
    @cached_property
    def entity_id(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.entities)}

    @cached_property
    def relation_id(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.relations)}

    @cached_property
    def entity_labels(self) -> list[str]:
        return self.entity_names or [entity_label(e) for e in self.entities]

    @cached_property
    def relation_labels(self) -> list[str]:
        return self.relation_names or [entity_label(r) for r in self.relations]

    @cached_property
    def label_to_entity(self) -> dict[str, int]:
        """Spaced label → entity id (the form answers and questions use)."""
        return {label: i for i, label in enumerate(self.entity_labels)}

    # -- indexes -----------------------------------------------------------------------
    @cached_property
    def by_entity(self) -> CSRIndex:
        """Facts in which an entity is subject or object."""
        ids = np.arange(len(self), dtype=np.int32)
        keys = np.concatenate([self.s, self.o])
        both = np.concatenate([ids, ids])
        # a self-loop fact would be listed twice; CSR keeps both, callers use np.unique via many()
        return CSRIndex.build(keys, self.n_entities, both)

    @cached_property
    def by_subject(self) -> CSRIndex:
        return CSRIndex.build(self.s, self.n_entities)

    @cached_property
    def by_relation(self) -> CSRIndex:
        return CSRIndex.build(self.r, self.n_relations)

    @cached_property
    def time_order(self) -> np.ndarray:
        """Fact ids sorted by start time (stable), for range queries with ``facts_between``."""
        return np.argsort(self.t_start, kind="stable").astype(np.int32)

    def facts_between(self, first_day: int, last_day: int) -> np.ndarray:
        """Fact ids whose start day lies in [first_day, last_day]."""
        sorted_t = self.t_start[self.time_order]
        lo = np.searchsorted(sorted_t, first_day, side="left")
        hi = np.searchsorted(sorted_t, last_day, side="right")
        return self.time_order[lo:hi]

    # -- distinct triples (embed each distinct text once) -------------------------------
    @cached_property
    def _triples(self) -> tuple[np.ndarray, np.ndarray]:
        key = (self.s.astype(np.int64) * self.n_relations + self.r) * self.n_entities + self.o
        uniq, inverse = np.unique(key, return_inverse=True)
        return uniq, inverse.astype(np.int32)

    @property
    def triple_of_fact(self) -> np.ndarray:
        """For each fact, the id of its distinct (s, r, o) triple."""
        return self._triples[1]

    @cached_property
    def triple_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s, r, o) arrays of the distinct triples."""
        key = self._triples[0]
        o = key % self.n_entities
        rest = key // self.n_entities
        r = rest % self.n_relations
        s = rest // self.n_relations
        return s.astype(np.int32), r.astype(np.int32), o.astype(np.int32)

    @cached_property
    def by_triple(self) -> CSRIndex:
        """The events of each distinct triple (one triple, many dates)."""
        return CSRIndex.build(self.triple_of_fact, self.n_triples)

    @property
    def n_triples(self) -> int:
        return len(self._triples[0])

    # -- verbalisation -----------------------------------------------------------------
    def date(self, fact: int) -> str:
        start, end = int(self.t_start[fact]), int(self.t_end[fact])
        text = iso_day(start)
        if self.granularity == "year":
            text = text[:4] if end == start else f"{iso_day(start)[:4]}–{iso_day(end)[:4]}"
        elif end != start:
            text = f"{text} to {iso_day(end)}"
        return text

    def triple_text(self, s: int, r: int, o: int) -> str:
        return f"{self.entity_labels[s]} {self.relation_labels[r]} {self.entity_labels[o]}"

    def verbalise(self, fact: int) -> str:
        """'s r o on YYYY-MM-DD' — the line format every method puts in front of a reader."""
        f = int(fact)
        text = self.triple_text(int(self.s[f]), int(self.r[f]), int(self.o[f]))
        if self.granularity == "year" or self.t_end[f] != self.t_start[f]:
            return f"{text} ({self.date(f)})"
        return f"{text} on {self.date(f)}"

    def verbalise_many(self, facts) -> list[str]:
        return [self.verbalise(int(f)) for f in facts]

    def triple_texts(self) -> list[str]:
        s, r, o = self.triple_columns
        ents, rels = self.entity_labels, self.relation_labels
        return [f"{ents[a]} {rels[b]} {ents[c]}" for a, b, c in zip(s.tolist(), r.tolist(), o.tolist())]

    def as_quadruples(self, facts) -> list[tuple[str, str, str, str]]:
        """(subject, relation, object, date) with spaced labels, for tables and prompts."""
        return [
            (
                self.entity_labels[int(self.s[f])],
                self.relation_labels[int(self.r[f])],
                self.entity_labels[int(self.o[f])],
                self.date(int(f)),
            )
            for f in facts
        ]

    def split(self, name: str) -> np.ndarray:
        """Fact ids of an official split (e.g. MultiTQ's train/valid/test line ranges)."""
        if name not in self.splits:
            raise KeyError(f"{self.name} has no split {name!r}; known: {sorted(self.splits)}")
        first, last = self.splits[name]
        return np.arange(first, last, dtype=np.int32)
