"""SAR's SEARCH (Algorithm 1, lines 24–34): temporal FILTER, (h, r, t) decomposition, Eq. 1, top-K, RE-ORDER.

Eq. 1 scores a fact (h', r', t') against the query triple (h, r, t) as S(h, h') + S(r, r') + S(t, t') with
S the cosine of *name* embeddings.  A fact's score therefore depends only on its subject, relation and
object ids, so one SEARCH is three small matrix-vector products (10,488 entity names twice, 251 relation
names once) and three gathers over the filtered facts — no per-fact embedding exists or is needed.  The
KG's columns are kept in time order, so BEFORE / AFTER / IN filters are one contiguous slice found by
binary search.

Choices the paper leaves open (the kit's, stated once):

* granularity: ``BEFORE 2010`` keeps facts before 2010-01-01, ``AFTER 2010`` facts after 2010-12-31,
  ``IN 2010-05`` facts of that month; a time that does not parse makes the search ANYTIME, with a note;
* a query part the sub-query does not name ("who", "?") adds 0 to every fact's score;
* ties (every fact of one (s, r, o) triple scores the same) go to the earliest facts, or to the latest
  when the sub-query asks for the last / previous ones or searches BEFORE a time;
* RE-ORDER sorts the top-K chronologically when the sub-query asks for an order (first, last, next,
  earliest, latest, previous, before, after) or searches BEFORE / AFTER a time;
* ``symmetric=True`` also scores each fact with head and tail swapped (kept off: Eq. 1 is directional).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import numpy as np

from temporag.retrieval.blas import one_blas_thread
from temporag.retrieval.topk import top_k_stable
from temporag.timeutil import TimeValue, extract_time_mentions, try_parse_time

TYPES = ("ANYTIME", "BEFORE", "AFTER", "IN")
DEFAULT_K = 15  # §Embedding-Based Retrieval: "e.g., K = 15, tuned via validation data"

_ORDER_WORDS = re.compile(r"\b(first|earliest|next|after|last|latest|previous|before|chronolog\w*)\b", re.I)
_LATEST_WORDS = re.compile(r"\b(last|latest|previous|before|most recent)\b", re.I)
_UNKNOWN = {
    "",
    "?",
    "who",
    "whom",
    "what",
    "which",
    "someone",
    "somebody",
    "anyone",
    "unknown",
    "x",
    "none",
    "_",
}


def parse_filter_time(text: str | None) -> TimeValue | None:
    """A SEARCH time argument as a period: ISO forms first ("2010", "2010-05", "2010-05-03"), then any
    date the kit's time parser finds ("May 2010"); None when there is none."""
    if text is None:
        return None
    value = try_parse_time(str(text).strip().strip("'\""))
    if value is not None:
        return value
    found = extract_time_mentions(str(text))
    return found[0].value if found else None


def is_unknown(part: str | None) -> bool:
    """A query part that names nothing ('?', 'who', '')."""
    return part is None or part.strip().strip("'\"").casefold() in _UNKNOWN


def wants_order(sub_query: str, kind: str) -> bool:
    """RE-ORDER applies: the sub-query asks for an order, or the filter is BEFORE / AFTER."""
    return kind in ("BEFORE", "AFTER") or bool(_ORDER_WORDS.search(sub_query))


def latest_first(sub_query: str, kind: str) -> bool:
    """Ties go to the latest facts: "last" / "previous" sub-queries and BEFORE searches."""
    return kind == "BEFORE" or bool(_LATEST_WORDS.search(sub_query))


class TimeIndex:
    """The KG's (s, r, o, t) columns in time order, so every temporal filter is one slice."""

    def __init__(self, kg) -> None:
        self.kg = kg
        self.order = np.asarray(kg.time_order, dtype=np.int64)
        # platform-size ints: numpy would otherwise convert int32 indices on every gather
        self.s = np.ascontiguousarray(kg.s[self.order], dtype=np.intp)
        self.r = np.ascontiguousarray(kg.r[self.order], dtype=np.intp)
        self.o = np.ascontiguousarray(kg.o[self.order], dtype=np.intp)
        self.start = np.ascontiguousarray(kg.t_start[self.order])
        self.end = np.ascontiguousarray(kg.t_end[self.order])
        self.points = bool(np.array_equal(kg.t_start, kg.t_end))

    def __len__(self) -> int:
        return len(self.order)

    def filter(self, kind: str, period: TimeValue | None) -> tuple[int, int, np.ndarray | None]:
        """FILTER(G, type, time) as (lo, hi, mask): facts ``lo:hi`` of the time order, narrowed by ``mask``
        (None for point KGs, where the slice is exact)."""
        n = len(self.order)
        if kind == "ANYTIME" or period is None:
            return 0, n, None
        if kind not in TYPES:
            raise ValueError(f"type must be one of {TYPES}, got {kind!r}")
        first, last = period.first_day, period.last_day
        if kind == "BEFORE":
            lo, hi = 0, int(np.searchsorted(self.start, first, side="left"))
        elif kind == "AFTER":
            lo, hi = int(np.searchsorted(self.start, last, side="right")), n
        else:
            lo = 0 if not self.points else int(np.searchsorted(self.start, first, side="left"))
            hi = int(np.searchsorted(self.start, last, side="right"))
        if self.points:
            return lo, hi, None
        # interval facts: BEFORE needs the whole fact before the period, IN any overlap
        if kind == "BEFORE":
            mask = self.end[lo:hi] < first
        elif kind == "IN":
            mask = self.end[lo:hi] >= first
        else:
            mask = None
        return lo, hi, mask


def name_scores(
    entity_vectors: np.ndarray, relation_vectors: np.ndarray, head, rel, tail
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """S(x, x') of each query part against every entity / relation name (None for an unnamed part);
    head and tail share one pass over the entity vectors."""
    ents = [v for v in (head, tail) if v is not None]
    with one_blas_thread():
        table = (entity_vectors @ np.stack(ents, axis=1)).astype(np.float32) if ents else None
        rel_s = (relation_vectors @ rel).astype(np.float32) if rel is not None else None
    head_s = table[:, 0] if head is not None else None
    tail_s = table[:, -1] if tail is not None else None
    return head_s, rel_s, tail_s


def eq1_scores(
    index: TimeIndex,
    lo: int,
    hi: int,
    head: np.ndarray | None,
    rel: np.ndarray | None,
    tail: np.ndarray | None,
    symmetric: bool = False,
) -> np.ndarray:
    """Eq. 1 for the facts ``lo:hi`` of the time order, from per-name score tables (None = 0)."""
    s, r, o = index.s[lo:hi], index.r[lo:hi], index.o[lo:hi]
    total = rel.take(r) if rel is not None else np.zeros(hi - lo, dtype=np.float32)
    if not symmetric:
        if head is not None:
            total += head.take(s)
        if tail is not None:
            total += tail.take(o)
        return total
    forward = np.zeros(hi - lo, dtype=np.float32)
    backward = np.zeros(hi - lo, dtype=np.float32)
    if head is not None:
        forward += head.take(s)
        backward += head.take(o)
    if tail is not None:
        forward += tail.take(o)
        backward += tail.take(s)
    return total + np.maximum(forward, backward)


@dataclass
class SearchResult:
    """One SEARCH: the facts (ranked, or chronological after RE-ORDER) and how they were found."""

    facts: np.ndarray
    scores: np.ndarray
    latency_s: float
    triple: tuple[str | None, str | None, str | None] = (None, None, None)
    decomposer: str = ""
    filtered: int = 0  # facts left by FILTER
    reordered: bool = False
    note: str = ""
    responses: list = field(default_factory=list)  # LLM responses spent (decomposition)

    def describe(self) -> dict:
        return {
            "triple": list(self.triple),
            "decomposer": self.decomposer,
            "filtered": self.filtered,
            "reordered": self.reordered,
            "latency_ms": round(self.latency_s * 1e3, 3),
            "note": self.note,
        }


def structured_search(
    index: TimeIndex,
    entity_vectors: np.ndarray,
    relation_vectors: np.ndarray,
    head: np.ndarray | None,
    rel: np.ndarray | None,
    tail: np.ndarray | None,
    kind: str = "ANYTIME",
    period: TimeValue | None = None,
    k: int = DEFAULT_K,
    *,
    order: bool = False,
    latest: bool = False,
    symmetric: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Lines 25–32 for query vectors already embedded: FILTER, Eq. 1, TOP-K, RE-ORDER.

    Returns (fact ids, their scores, facts left by FILTER)."""
    lo, hi, mask = index.filter(kind, period)
    head_s, rel_s, tail_s = name_scores(entity_vectors, relation_vectors, head, rel, tail)
    scores = eq1_scores(index, lo, hi, head_s, rel_s, tail_s, symmetric)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf).astype(np.float32)
    filtered = int(hi - lo if mask is None else mask.sum())
    pos = top_k_stable(scores, min(k, filtered), latest=latest)
    if order:
        pos = np.sort(pos)  # time order = chronological (ties: file order)
    return index.order[lo + pos], scores[pos], filtered


def semantic_filtered_search(
    index: TimeIndex,
    kg,
    triple_vectors: np.ndarray,
    query: np.ndarray,
    kind: str = "ANYTIME",
    period: TimeValue | None = None,
    k: int = DEFAULT_K,
    *,
    order: bool = False,
    latest: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """SEARCH without decomposition (Table 2, w/o Decompose): the sub-query's embedding against each
    filtered fact's 's r o' text, then the same TOP-K and RE-ORDER."""
    lo, hi, mask = index.filter(kind, period)
    triple_scores = (triple_vectors @ query).astype(np.float32)
    scores = triple_scores[kg.triple_of_fact[index.order[lo:hi]]]
    if mask is not None:
        scores = np.where(mask, scores, -np.inf).astype(np.float32)
    filtered = int(hi - lo if mask is None else mask.sum())
    pos = top_k_stable(scores, min(k, filtered), latest=latest)
    if order:
        pos = np.sort(pos)
    return index.order[lo + pos], scores[pos], filtered


def timed(fn, *args, **kwargs):
    """(result, seconds) of one call."""
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0
