"""The retrieval of the released code said to be STAR-RAG's, in the kit's own code, one switch per step.

Source read: ``MarshmallowLight/RAGverse`` @ 94e4905, folder ``dynamic_RAG/``; line numbers below are in
``src/hipporag/HippoRAG.py`` unless a file is named.  The paper's Alg. 1 (:class:`StarRAG`) returns the
top-K1 events of a re-ranked rule-graph pool; ``HippoRAG.retrieve`` and ``rerank_facts_dynamic`` do more
around the PPR.  Per our reading, and as :class:`ReleasedCodeRAG` does it:

1. **anchors** (3173-3342): the ``anchor_triples`` = 200 distinct (s, r, o) with the highest cosine
   (3192, 3204-3219), each expanded to its ``events_per_triple`` = 5 earliest events (3178, 3227-3235,
   2904-2965); ``relation_filter``: only the top triple's relation is kept (3224, 3244-3257); an anchor
   date — a date the question names (``utils/misc_utils.py:213-240``: an ISO date, else the first year
   as 1 January), else the first kept event's (3271-3285); a before/after word list
   (``misc_utils.py:243-266``); ``time_filter``: only events on the asked side are kept (all when none
   is, 3308-3327); ``time_order``: sorted by (violates, days from the anchor date, −score) (3329-3342).
2. **rule graph** (``ppr``): Appendix C's γ over the anchors' rule nodes (θ = 0.6, β = 0.7, 509-539),
   PPR with restart 0.2 (208, 541-600) and a self-loop on every node without an edge (``self_loops``,
   651-662), edges weighted by the events they explain (567-572, here ``edge_weight="spans"``: |T_uv|),
   the top ``k2`` = 5 rules (212, 690-702).
3. **pool** (1244-1338): the events ranked by cosine, top ``pool_size`` = 50.  Intended: the top rules'
   events.  As released the rules are read from ``_ppr_topk_rules``, which holds the count 5 rather than
   the rules (212, 1250-1284), so that pool is always empty and the anchors ∪ the rules' events are
   ranked instead (1308-1310, 1226-1239): ``pool="anchors+rules"``.
4. **time-nearest neighbours** (``neighbours``, 1341-1439): walking the pool, each event is followed by
   up to 5 events of its rule nodes with its relation that share its subject or object, nearest in time,
   until ``k`` = 10 events.
5. **merge** (1441-1526): those events, then the anchors, one event per (s, r, o); ``time_filter`` also
   drops what lies on the wrong side of the first anchor's date by a second word list (1485-1525).
6. **grouping** (1548-1594): one line per (subject, relation), the first ``k`` lines.  As released a
   line pairs the objects with the dates after de-duplicating each list on its own (1567-1583), so a
   date shared by two events drops an object and shifts the dates after it: ``pairing="released"``;
   intended: each object with its own date.

Not reproduced here (see :mod:`code_tables`): the code's rule graph (precomputed entity types, rule
nodes kept by a KGist-style MDL, chain edges of an entity pair, KGist edge costs) — the kit's graph with
``GraphParams(temporal_pairs="consecutive")`` stands in — and its NV-Embed vectors of dated 4-tuples:
scores are the kit's MiniLM cosine of each distinct triple.  Their fuzzy date fallback
(``misc_utils.py:231-239``) is left out: it finds no date in any of the 615 shared questions that name
no year.  The reader is STAR-RAG's (:class:`reader.StarReader`), so rows differ only in what is shown.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from temporag.methods.base import Method, QuestionRecord, Retrieval, check_shared
from temporag.methods.semantic import SemanticRetriever, TripleScores, top_of
from temporag.methods.star_rag.graph import RuleGraph
from temporag.methods.star_rag.ppr import Transition, personalized_pagerank_many, transition_matrix
from temporag.methods.star_rag.reader import StarReader, style_flags
from temporag.methods.star_rag.retrieval import ALPHA, BETA, THETA, TOL, seed_personalisation
from temporag.methods.star_rag.time_words import final_operation, on_side, question_day, rerank_direction
from temporag.progress import tqdm
from temporag.retrieval.topk import top_k_stable
from temporag.timeutil import iso_day

POOLS = ("rules", "anchors+rules")
PAIRINGS = ("intended", "released")


def _first_per_key(ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The first id of each key, in the original order."""
    _, first = np.unique(keys, return_index=True)
    return ids[np.sort(first)]


# -- the retriever ---------------------------------------------------------------------------------------


@dataclass
class ReleasedCodeRAG(StarReader, Method):
    """The released code's retrieval behind the kit's interface; :meth:`variant` switches steps off.

    ``retrieve`` returns the events the reader is shown, in the order shown (grouped per (subject,
    relation) when ``grouping``); :meth:`evidence_lines` renders them as the reader sees them and
    :meth:`shown_tuples` gives the (subject, object, date) pairs those lines state."""

    kg: object
    graph: RuleGraph
    semantic: SemanticRetriever
    k: int = 10
    anchor_triples: int = 200
    events_per_triple: int = 5
    relation_filter: bool = True
    time_filter: bool = True
    time_order: bool = True
    ppr: bool = True
    k2: int = 5
    alpha: float = ALPHA
    theta: float = THETA
    beta: float = BETA
    tol: float = TOL
    edge_weight: str = "spans"
    self_loops: bool = True
    pool: str = "rules"
    pool_size: int = 50
    neighbours: int = 5
    grouping: bool = True
    pairing: str = "intended"
    reader_style: str = "plain"
    label: str = "released code"
    batch_size: int = 64
    trans: Transition = field(init=False, repr=False)

    evidence = "kg_fact"

    def __post_init__(self) -> None:
        self._check()
        kg = self.kg
        self.trans = self._transition()
        # every triple's events, earliest first: the anchors' expansion (step 1)
        triple = kg.triple_of_fact
        self._by_time = np.lexsort((np.arange(len(kg)), kg.t_start, triple)).astype(np.int64)
        self._offsets = np.concatenate([[0], np.cumsum(np.bincount(triple, minlength=kg.n_triples))])
        self._triple_relation = kg.triple_columns[1]
        self._mark = np.zeros(len(kg), dtype=bool)  # scratch for unions (a copy gets its own)

    def _check(self) -> None:
        """A clear error for a bad switch, before any work."""
        if self.pool not in POOLS:
            raise ValueError(f"pool must be one of {POOLS}, got {self.pool!r}")
        if self.pairing not in PAIRINGS:
            raise ValueError(f"pairing must be one of {PAIRINGS}, got {self.pairing!r}")
        for name in ("k", "anchor_triples", "events_per_triple", "k2", "pool_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive count, got {getattr(self, name)}")
        if self.neighbours < 0:
            raise ValueError(f"neighbours must be 0 (off) or a positive count, got {self.neighbours}")
        style_flags(self.reader_style)

    def _transition(self) -> Transition:
        """Ã of the graph's edges weighted by ``edge_weight`` (nodes without an edge are handled by
        :meth:`propagate`)."""
        u, v = self.graph.edges
        return transition_matrix(len(self.graph.nodes), u, v, self.graph.edge_weights(self.edge_weight))

    @property
    def name(self) -> str:
        return self.label

    def variant(self, **changes) -> ReleasedCodeRAG:
        """The same KG, graph and vectors with other switches (the PPR matrix is rebuilt only when the
        graph or the edge weights change)."""
        settings = [f.name for f in fields(self) if f.init]
        unknown = sorted(set(changes) - set(settings))
        if unknown:
            raise TypeError(f"unknown released-code setting(s) {unknown}; the settings are {settings}")
        if {"graph", "edge_weight", "kg"} & set(changes):
            return type(self)(**{**{k: getattr(self, k) for k in settings}, **changes})
        clone = copy.copy(self)
        clone.__dict__.update(changes)
        clone._mark = np.zeros(len(self.kg), dtype=bool)
        clone._check()
        return clone

    # -- step 1: anchors -------------------------------------------------------------------------
    def anchors(self, triple_scores: TripleScores | np.ndarray, question: str) -> tuple[np.ndarray, dict]:
        """The anchor events in their final order, and what decided it (anchor day, direction)."""
        kg = self.kg
        scores = TripleScores.wrap(triple_scores)
        row = scores.coarse
        m = min(self.anchor_triples, len(row))
        if scores.error == 0.0:
            top = np.argpartition(-row, m - 1)[:m]
        else:  # the m best exact cosines lie within twice the coarse error of the m-th best coarse one
            mth = np.partition(row, len(row) - m)[len(row) - m]
            near = np.flatnonzero(row >= mth - 2 * scores.error - 1e-6)
            top = near[top_k_stable(scores.exact(near), m)]
        top = top[np.lexsort((top, -scores.exact(top)))]
        starts = self._offsets[top]
        lens = np.minimum(self._offsets[top + 1] - starts, self.events_per_triple)
        flat = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
        events = self._by_time[flat]
        if self.relation_filter:
            events = events[kg.r[events] == self._triple_relation[top[0]]]
        day = question_day(question)
        if day is None and len(events):
            day = int(kg.t_start[events[0]])
        side = rerank_direction(question)
        days = kg.t_start[events].astype(np.int64)
        ok = on_side(days, day, side) if (day is not None and side) else np.ones(len(events), dtype=bool)
        if self.time_filter and ok.any():
            events, days, ok = events[ok], days[ok], ok[ok]
        score = scores.exact(kg.triple_of_fact[events])
        position = np.arange(len(events))
        if self.time_order and day is not None:
            order = np.lexsort((position, -score, np.abs(days - day), (~ok).astype(np.int8)))
        else:
            order = np.lexsort((position, -score))
        info = {"anchor_day": None if day is None else iso_day(day), "direction": side}
        return events[order], info

    # -- step 2: the rule graph ------------------------------------------------------------------
    def personalise(self, anchors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return seed_personalisation(self.graph.nodes, anchors, self.theta, self.beta)

    def top_rules(self, pi: np.ndarray) -> np.ndarray:
        reached = np.flatnonzero(pi > 0)
        return reached[top_k_stable(pi[reached], self.k2)]

    # -- steps 3-6 -------------------------------------------------------------------------------
    def pool_events(
        self, anchors: np.ndarray, rules: np.ndarray, triple_scores: TripleScores | np.ndarray
    ) -> np.ndarray:
        """The top ``pool_size`` events by cosine of the rules' events (intended) or of the anchors ∪
        those events (as released, and whenever the rules hold none)."""
        sup = self.graph.nodes.support
        mark = self._mark
        for r in rules.tolist():
            mark[sup[r]] = True
        rule_events = np.flatnonzero(mark)
        mark[rule_events] = False
        if self.pool == "rules" and len(rule_events):
            pool = rule_events
        else:
            mark[anchors] = True
            pool = np.concatenate([anchors, rule_events[~mark[rule_events]]])
            mark[anchors] = False
        # the first pool_size by cosine, ties in pool order (top_of scores exactly only what can make it)
        return top_of(self.kg, TripleScores.wrap(triple_scores), pool, [], self.pool_size).astype(np.int64)

    def nearest_neighbours(self, fact: int) -> np.ndarray:
        """Up to ``neighbours`` events of the fact's rule nodes with its relation that share its subject
        or object, nearest in time first (ties: earlier fact id)."""
        kg, nodes = self.kg, self.graph.nodes
        parts = []
        for u in nodes.of_fact[fact]:
            sup = nodes.support[int(u)]
            parts.append(sup[(kg.s[sup] == kg.s[fact]) | (kg.o[sup] == kg.o[fact])])
        near = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
        near = near[(near != fact) & (kg.r[near] == kg.r[fact])]
        gap = np.abs(kg.t_start[near].astype(np.int64) - int(kg.t_start[fact]))
        return near[np.lexsort((near, gap))][: self.neighbours].astype(np.int64)

    def walk(self, pool: np.ndarray) -> list[int]:
        """Each pool event followed by its time-nearest neighbours, until ``k`` events."""
        chosen: list[int] = []
        seen: set[int] = set()
        for f in pool.tolist():
            if f not in seen:
                chosen.append(f)
                seen.add(f)
            for g in self.nearest_neighbours(f).tolist() if self.neighbours else []:
                if len(chosen) >= self.k:
                    break
                if g not in seen:
                    chosen.append(g)
                    seen.add(g)
            if len(chosen) >= self.k:
                break
        return chosen

    def shown(self, walked: Sequence[int], anchors: np.ndarray, question: str) -> np.ndarray:
        """Steps 5-6: merge, last time filter, then the first ``k`` events or (subject, relation) groups."""
        kg = self.kg
        merged = np.concatenate([np.asarray(walked, dtype=np.int64), anchors])
        merged = _first_per_key(merged, kg.triple_of_fact[merged])
        side, inclusive = final_operation(question)
        if self.time_filter and side and len(anchors):
            merged = merged[on_side(kg.t_start[merged], int(kg.t_start[anchors[0]]), side, inclusive)]
        if not self.grouping:
            return merged[: self.k]
        group = kg.s[merged].astype(np.int64) * kg.n_relations + kg.r[merged]
        first_groups = _first_per_key(group, group)[: self.k]
        rank = {g: i for i, g in enumerate(first_groups.tolist())}
        keep = np.flatnonzero(np.isin(group, first_groups))
        order = np.lexsort((keep, [rank[g] for g in group[keep].tolist()]))
        return merged[keep[order]]

    # -- many questions ----------------------------------------------------------------------------
    @property
    def default_k(self) -> int:
        """The released code's k: (subject, relation) groups shown (events with grouping off)."""
        return self.k

    def within_k(self, ids: Sequence[int], k: int) -> bool:
        """``k`` counts (subject, relation) groups of the shown events (events with grouping off)."""
        if not self.grouping:
            return len(ids) <= k
        ids = np.asarray(ids, dtype=np.int64)
        return len(set(zip(self.kg.s[ids].tolist(), self.kg.r[ids].tolist()))) <= k

    def retrieve(
        self,
        questions: Sequence,
        k: int | None = None,
        *,
        progress: bool = True,
        q_vecs: np.ndarray | None = None,
        **shared,
    ) -> Retrieval:
        """The shown events per question, per-question latency (embedding excluded; a batch's cosine
        and PPR shared pro rata) and JSON-ready traces."""
        check_shared(shared)
        if k is not None and k != self.k:
            return self.variant(k=k).retrieve(questions, q_vecs=q_vecs, progress=progress)
        texts = [getattr(q, "question", q) for q in questions]
        if q_vecs is None:
            q_vecs = self.semantic.embed_questions(texts)
        ids, latency, traces = [], [], []
        starts = range(0, len(texts), self.batch_size)
        for start in tqdm(starts, desc=f"{self.name} retrieval", disable=not progress or len(starts) < 2):
            batch = list(range(start, min(start + self.batch_size, len(texts))))
            half = getattr(self.semantic, "half_vectors", None) if len(batch) == 1 else None
            t0 = time.perf_counter()
            rows = TripleScores.for_questions(self.semantic.triple_vectors, q_vecs[batch], half)
            found = [self.anchors(rows[j], texts[i]) for j, i in enumerate(batch)]
            rules = self._rules_of_batch([a for a, _ in found])
            shared = (time.perf_counter() - t0) / len(batch)
            for j, i in enumerate(batch):
                t1 = time.perf_counter()
                anchors, info = found[j]
                walked = self.walk(self.pool_events(anchors, rules[j], rows[j]))
                shown = self.shown(walked, anchors, texts[i])
                ids.append(shown)
                latency.append(shared + time.perf_counter() - t1)
                traces.append(
                    {
                        "facts": shown.tolist(),
                        "anchors": len(anchors),
                        **info,
                        "rules": rules[j].tolist(),
                        "walk": walked,
                        "lines": len(self._groups(shown)) if self.grouping else len(shown),
                        "retrieval_s": latency[-1],
                    }
                )
        return Retrieval(ids, np.asarray(latency), traces, self.evidence)

    def _rules_of_batch(self, anchor_lists: list[np.ndarray]) -> list[np.ndarray]:
        """Top-``k2`` rules per question from one batched PPR (none when ``ppr`` is off)."""
        empty = np.zeros(0, dtype=np.int64)
        if not self.ppr:
            return [empty] * len(anchor_lists)
        gammas = np.zeros((self.trans.n, len(anchor_lists)))
        for j, anchors in enumerate(anchor_lists):
            seeds, gamma = self.personalise(anchors)
            gammas[seeds, j] = gamma
        pis = self.propagate(gammas)
        return [self.top_rules(pis[:, j]) if pis[:, j].any() else empty for j in range(len(anchor_lists))]

    def propagate(self, gammas: np.ndarray) -> np.ndarray:
        """π for each column of γ: PPR with restart ``alpha``.  With ``self_loops`` a node without an edge
        keeps its own restart mass (π_u = γ_u, the fixed point of a self-loop) and the rest of the graph,
        which has no dangling node, diffuses the remaining mass; without them that node's mass returns to
        γ (:mod:`temporag.methods.star_rag.ppr`)."""
        pis = np.zeros_like(gammas)
        lone = self.trans.isolated
        if self.self_loops:
            pis[lone] = gammas[lone]
            gammas = np.where(lone[:, None], 0.0, gammas)
        mass = gammas.sum(axis=0)
        ok = np.flatnonzero(mass > 0)
        if len(ok):
            pi, _ = personalized_pagerank_many(
                self.trans, gammas[:, ok], self.alpha, self.tol, dtype=np.float32
            )
            pis[:, ok] += pi * (mass[ok] if self.self_loops else 1.0)
        return pis

    # -- what the reader sees ------------------------------------------------------------------------
    def _groups(self, ids: Sequence[int]) -> list[np.ndarray]:
        """The ids split into (subject, relation) groups in first-appearance order."""
        ids = np.asarray(ids, dtype=np.int64)
        key = self.kg.s[ids].astype(np.int64) * self.kg.n_relations + self.kg.r[ids]
        return [ids[key == g] for g in _first_per_key(key, key).tolist()]

    def _pairs(self, group: np.ndarray) -> list[tuple[int, int]]:
        """(object, day) pairs one grouped line states."""
        objects, days = self.kg.o[group].tolist(), self.kg.t_start[group].tolist()
        if self.pairing == "intended":
            return list(zip(objects, days))
        return list(zip(dict.fromkeys(objects), dict.fromkeys(days)))

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        """One 'subject relation object on date' per event, or per (subject, relation) group
        'subject relation (object on date; object on date)'."""
        if not self.grouping:
            return self.kg.verbalise_many(np.asarray(ids, dtype=np.int64))
        kg, lines = self.kg, []
        for group in self._groups(ids):
            head = f"{kg.entity_labels[int(kg.s[group[0]])]} {kg.relation_labels[int(kg.r[group[0]])]}"
            pairs = "; ".join(f"{kg.entity_labels[o]} on {iso_day(d)}" for o, d in self._pairs(group))
            lines.append(f"{head} ({pairs})")
        return lines

    def shown_tuples(self, ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(subjects, objects, first days, last days) the lines state, for answer recall of what is shown
        (``evaluate.answer_tuple_mask``); the events themselves unless the released pairing shifts dates."""
        ids = np.asarray(ids, dtype=np.int64)
        kg = self.kg
        if not self.grouping or self.pairing == "intended":
            return kg.s[ids], kg.o[ids], kg.t_start[ids], kg.t_end[ids]
        rows = [(int(kg.s[g[0]]), o, d) for g in self._groups(ids) for o, d in self._pairs(g)]
        s, o, d = (np.array(x, dtype=np.int64) for x in zip(*rows)) if rows else (np.zeros(0, np.int64),) * 3
        return s, o, d, d

    def pipeline(
        self, questions: Sequence, llm=None, *, k: int | None = None, top_k: int = 10, progress: bool = True
    ) -> list[QuestionRecord]:
        return super().pipeline(questions, llm, k=k or self.k, top_k=top_k, progress=progress)
