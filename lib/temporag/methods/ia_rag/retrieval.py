"""§3.4 Query-driven event retrieval (Eqs. 9–18) and the Vanilla RAG baseline, on the kit's interface.

* Φ_d(q) (Eq. 9): :func:`query_window` parses the question's time expressions with the kit's time
  parser (offline; "between X and Y", "in X", "before/after X", "N years before X"); :class:`LLMWindow`
  asks the LLM.  An open window (no date, e.g. "after he worked for X") is (None, None).
* Event-to-forest matching (Eqs. 10–11): top-K1 MEUs and top-K2 IEUs by cosine.
* IA-guided traversal Ψ (Eqs. 12–17): :func:`direction` picks R^F when the unit ends before the window,
  R^B when it starts after it, both otherwise; neighbours along the chosen relations are added from the
  IEU event graph and from the MEU level graphs.  ``traversal="all"`` (Table 4 "w/All") follows every
  relation, ``"none"`` (Table 3 "w/o IA") none, ``"top5"`` the five relations a question cue selects
  (an offline stand-in for Table 4's LLM-predicted top-5).
* The union of Eq. 18 is returned as ranked unit ids: IEU i is id i, MEU m is id n_ieus + m; a sentence
  already in the union (one sentence with two dates gives two units) is not repeated.

Two readings of the paper's open points, chosen per retriever (the notebook measures both):

* ``meus="lines"`` shows the K1 MEU summaries as evidence lines beside the units (the kit's first
  reading); ``meus="narrow"`` uses them to narrow the unit search instead: the K2 units are the best
  among the members of the K1 MEUs and the units no MEU holds, and no summary line is shown.
* ``order="seeds"`` lists the seeds, then the traversal's units by cosine; ``order="window"`` ranks the
  whole union by its fit to the question's window (:func:`window_tier`: intersects it, undated or open,
  disjoint), cosine within a tier — the order a reader with a token budget needs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from temporag.answer.evaluate import evidence_recall
from temporag.llm import LLMError, cl100k_count, parse_json_reply
from temporag.methods.base import Method, Retrieval, check_shared
from temporag.methods.ia_rag.corpus import _encoding
from temporag.methods.ia_rag.forest import Forest
from temporag.methods.ia_rag.graph import EventGraph
from temporag.retrieval.topk import top_k_stable
from temporag.timeutil import Allen, day_of, extract_time_expressions

R_F = frozenset(
    {Allen.BEFORE, Allen.MEETS, Allen.OVERLAPS, Allen.STARTS, Allen.DURING, Allen.FINISHES, Allen.EQUALS}
)  # Eq. 14
R_B = frozenset(
    {
        Allen.AFTER,
        Allen.MET_BY,
        Allen.OVERLAPPED_BY,
        Allen.STARTED_BY,
        Allen.CONTAINS,
        Allen.FINISHED_BY,
        Allen.EQUALS,
    }
)  # Eq. 15
ALL = R_F | R_B
TRAVERSALS = ("ia", "all", "none", "top5")
MEU_MODES = ("lines", "narrow")
ORDERS = ("seeds", "window")
_INF = 10**9

READER_RULES = (
    "Each fact is an event dated [start – end] ('~' = approximate) or a 'theme' summarising related events. "
    "First fix the time the question asks about, then use the events of the question's subject whose dates "
    "cover or are nearest that time; a role, job or membership continues until a later event ends it."
)


def encode_questions(encoder, texts: Sequence[str]) -> np.ndarray:
    """Question vectors through the kit's content-hashed cache when the encoder has one: the ablation and
    sensitivity tables retrieve the same questions a dozen times."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    if hasattr(encoder, "encode_cached"):
        return encoder.encode_cached(list(texts), desc="embedding questions")
    return encoder.encode(list(texts), progress=False)


def query_window(question: str) -> tuple[int | None, int | None]:
    """Φ_d(q) offline: the question's temporal window as (w_s, w_e) days, None for an open end."""
    exprs = extract_time_expressions(question)
    if not exprs:
        return None, None
    firsts = [e.first_day for e in exprs if e.first_day is not None]
    lasts = [e.last_day for e in exprs if e.last_day is not None]
    return (min(firsts) if firsts else None, max(lasts) if lasts else None)


WINDOW_PROMPT = """Give the time window a question asks about, as JSON {{"start": "YYYY-MM-DD or unknown",
"end": "YYYY-MM-DD or unknown"}}. Resolve offsets such as "3 years before May 1990"; use "unknown" for an
open end. Reply with JSON only.
Question: {question}"""


class LLMWindow:
    """Φ_d(q) by the LLM (Eq. 9); falls back to the offline parse when the reply has no usable date."""

    def __init__(self, llm) -> None:
        self.llm = llm

    def __call__(self, question: str) -> tuple[int | None, int | None]:
        r = self.llm.chat(
            [{"role": "user", "content": WINDOW_PROMPT.format(question=question)}],
            json_mode=True,
            max_tokens=60,
        )
        try:
            obj = parse_json_reply(r.text)
            a, b = (_day(obj.get("start")), _day(obj.get("end"))) if isinstance(obj, dict) else (None, None)
        except LLMError:
            a = b = None
        return (a, b) if a is not None or b is not None else query_window(question)


def window_tier(span: tuple[int | None, int | None], window: tuple[int | None, int | None]) -> int:
    """0 when a unit's interval intersects the question's window, 1 when either is open on both sides
    (an undated unit, a question without a date), 2 when they are disjoint."""
    (a, b), (w_s, w_e) = span, window
    if (a is None and b is None) or (w_s is None and w_e is None):
        return 1
    lo, hi = (-_INF if a is None else a), (_INF if b is None else b)
    ws, we = (-_INF if w_s is None else w_s), (_INF if w_e is None else w_e)
    return 0 if lo <= we and ws <= hi else 2


def _day(value) -> int | None:
    try:
        return day_of(str(value).strip()[:10])
    except (ValueError, TypeError):
        return None


def direction(t_start: int | None, t_end: int | None, window: tuple[int | None, int | None]) -> frozenset:
    """Ψ(T_i, T_w) of Eq. 13: forward relations if the unit ends before the window, backward if it
    starts after it, both otherwise (also when either side is open)."""
    w_s, w_e = window
    if t_end is not None and w_s is not None and t_end < w_s:
        return R_F
    if t_start is not None and w_e is not None and t_start > w_e:
        return R_B
    return ALL


_CUES = (
    ("before", frozenset({Allen.AFTER, Allen.MET_BY, Allen.OVERLAPPED_BY, Allen.STARTED_BY, Allen.CONTAINS})),
    ("after", frozenset({Allen.BEFORE, Allen.MEETS, Allen.OVERLAPS, Allen.FINISHED_BY, Allen.CONTAINS})),
)
_DEFAULT_TOP5 = frozenset({Allen.EQUALS, Allen.DURING, Allen.CONTAINS, Allen.OVERLAPS, Allen.OVERLAPPED_BY})


def top5_relations(question: str) -> frozenset:
    """Five relations chosen from the question's cue word (offline stand-in for an LLM's top-5)."""
    q = question.lower()
    for cue, rels in _CUES:
        if f" {cue} " in f" {q} ":
            return rels
    return _DEFAULT_TOP5


@dataclass
class IAIndex:
    """Everything retrieval needs: the (tightened) event graph and the thematic forest."""

    graph: EventGraph
    forest: Forest

    @property
    def n_ieus(self) -> int:
        return len(self.graph.units)

    def span_of(self, node: int) -> tuple[int | None, int | None]:
        if node < self.n_ieus:
            u = self.graph.units[node]
            return u.t_start, u.t_end
        m = self.forest.meus[node - self.n_ieus]
        return m.t_start, m.t_end

    def line(self, node: int) -> str:
        if node < self.n_ieus:
            return self.graph.units[node].line()
        return self.forest.meus[node - self.n_ieus].line()

    def text(self, node: int) -> str:
        """A node's sentence (IEU) or summary (MEU): what the union must not repeat."""
        if node < self.n_ieus:
            return self.graph.units[node].sentence
        return self.forest.meus[node - self.n_ieus].summary

    def unaggregated(self) -> np.ndarray:
        """Mask of the IEUs no MEU holds (searched with the K1 MEUs' members under ``meus="narrow"``)."""
        mask = np.ones(self.n_ieus, dtype=bool)
        for m in self.forest.meus:
            mask[m.members] = False
        return mask


class IARAG(Method):
    """IA-RAG's retrieval (§3.4) over one built :class:`IAIndex`; ``k`` caps the returned union."""

    name = "IA-RAG"
    evidence = "document_unit"
    reader_instructions = READER_RULES
    default_k = 200  # units at most when ``retrieve`` is given no k (the seeds and their neighbours)

    def __init__(
        self,
        index: IAIndex,
        encoder,
        *,
        k1: int = 10,
        k2: int = 20,
        traversal: str = "ia",
        hierarchy: bool = True,
        meus: str = "lines",
        order: str = "seeds",
        window=None,
        name: str | None = None,
    ) -> None:
        if traversal not in TRAVERSALS:
            raise ValueError(f"traversal must be one of {TRAVERSALS}, got {traversal!r}")
        if meus not in MEU_MODES or order not in ORDERS:
            raise ValueError(
                f"meus must be one of {MEU_MODES} and order one of {ORDERS}, got {meus!r}, {order!r}"
            )
        if k1 < 0 or k2 <= 0:
            raise ValueError(f"need k1 >= 0 and k2 > 0 (retrieved MEUs and IEUs), got k1={k1}, k2={k2}")
        self.index, self.encoder = index, encoder
        self.k1, self.k2, self.traversal, self.hierarchy = k1, k2, traversal, hierarchy
        self.meus, self.order = meus, order
        self.window = window or query_window
        self._free = index.unaggregated() if meus == "narrow" else None
        self.name = name or self.name

    def _allowed(self, node: int, window, question: str) -> frozenset:
        if self.traversal == "none":
            return frozenset()
        if self.traversal == "all":
            return ALL
        if self.traversal == "top5":
            return top5_relations(question)
        return direction(*self.index.span_of(node), window)

    def retrieve(
        self, questions: Sequence, k: int | None = None, *, progress: bool = True, **shared
    ) -> Retrieval:
        """The seeds (top K2 IEUs, top K1 MEUs) and their neighbours along the allowed Allen relations,
        the first ``k`` units.  No shared input applies: documents are embedded with their own encoder."""
        check_shared(shared)
        k = self.default_k if k is None else k
        texts = [q.question for q in questions]
        q_vecs = encode_questions(self.encoder, texts)
        ieu_vecs, meu_vecs = self.index.graph.vectors, self.index.forest.vectors
        n = self.index.n_ieus
        ids, lat, traces = [], [], []
        for q, qv in zip(texts, q_vecs):
            t0 = time.perf_counter()
            window = self.window(q)
            ieu_scores = ieu_vecs @ qv
            top_m: np.ndarray = np.zeros(0, dtype=np.int64)
            if self.hierarchy and self.k1 > 0 and len(meu_vecs):
                top_m = top_k_stable(meu_vecs @ qv, self.k1)
            searched = ieu_scores
            if self._free is not None and len(top_m):
                pool = self._free.copy()
                for m in top_m:
                    pool[self.index.forest.meus[int(m)].members] = True
                searched = np.where(pool, ieu_scores, -np.inf)
            top_i = top_k_stable(searched, self.k2)
            shown_m = top_m if self.meus == "lines" else np.zeros(0, dtype=np.int64)
            seeds = [int(i) for i in top_i] + [n + int(m) for m in shown_m]
            score = {i: float(ieu_scores[i]) for i in seeds if i < n}
            score.update({j: float(meu_vecs[j - n] @ qv) for j in seeds if j >= n})
            sup: dict[int, float] = {}
            for node in seeds:
                allowed = self._allowed(node, window, q)
                if not allowed:
                    continue
                nbrs = (
                    self.index.graph.neighbours(node)
                    if node < n
                    else self.index.forest.neighbours.get(node, [])
                )
                for j, rel in nbrs:
                    if rel in allowed and j not in score and j not in sup and (self.hierarchy or j < n):
                        if j >= n and self.meus == "narrow":
                            continue
                        sup[j] = float(ieu_scores[j]) if j < n else float(meu_vecs[j - n] @ qv)
            if self.order == "window":
                union = {**score, **sup}
                tier = {j: window_tier(self.index.span_of(j), window) for j in union}
                ranked = sorted(union, key=lambda j: (tier[j], -union[j]))
            else:
                ranked = seeds + sorted(sup, key=lambda j: -sup[j])
            seen: set[str] = set()
            kept = []
            for j in ranked:
                text = self.index.text(j)
                if text not in seen:
                    seen.add(text)
                    kept.append(j)
            ids.append(np.asarray(kept[:k], dtype=np.int64))
            lat.append(time.perf_counter() - t0)
            traces.append(
                {
                    "window": [window[0], window[1]],
                    "ieus": len(top_i),
                    "meus": int(len(top_m)),
                    "supplementary": len(sup),
                }
            )
        return Retrieval(ids, np.asarray(lat), traces, evidence="document_unit")

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        return [self.index.line(int(i)) for i in ids]


class VanillaRAG(Method):
    """Dense retrieval over text units (§4.2's Vanilla RAG): chunks, or the IEUs themselves."""

    name = "Vanilla RAG"
    evidence = "document_unit"
    default_k = 20  # text units when ``retrieve`` is given no k

    def __init__(self, texts: Sequence[str], vectors: np.ndarray, encoder, name: str | None = None) -> None:
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        self.texts, self.vectors, self.encoder = list(texts), vectors, encoder
        self.name = name or self.name

    def retrieve(
        self, questions: Sequence, k: int | None = None, *, progress: bool = True, **shared
    ) -> Retrieval:
        """The ``k`` (default 20) units whose vectors are closest to the question's."""
        check_shared(shared)
        k = self.default_k if k is None else k
        q_vecs = encode_questions(self.encoder, [q.question for q in questions])
        ids, lat = [], []
        for qv in q_vecs:
            t0 = time.perf_counter()
            scores = self.vectors @ qv
            ids.append(top_k_stable(scores, k))
            lat.append(time.perf_counter() - t0)
        return Retrieval(ids, np.asarray(lat), None, evidence="document_unit")

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        return [self.texts[int(i)] for i in ids]


def chunk_pieces(chunks, window_tokens: int = 200) -> tuple[list[str], np.ndarray]:
    """Consecutive ``window_tokens``-token pieces of every chunk and the chunk each belongs to.  They are
    both what a chunk's vector averages and Vanilla RAG's raw-text windows, so one embedding serves both."""
    enc = _encoding()
    pieces, owner = [], []
    for i, c in enumerate(chunks):
        toks = enc.encode(c.text, disallowed_special=())
        for a in range(0, max(1, len(toks)), window_tokens):
            pieces.append(enc.decode(toks[a : a + window_tokens]))
            owner.append(i)
    return pieces, np.asarray(owner, dtype=np.int64)


def chunk_vectors(chunks, encoder, window_tokens: int = 200) -> np.ndarray:
    """One vector per 1,200-token chunk: the normalised mean of its ~200-token windows (MiniLM reads at
    most 256 word pieces, so embedding a whole chunk would silently keep only its start)."""
    pieces, owner = chunk_pieces(chunks, window_tokens)
    vecs = encoder.encode_cached(pieces, desc="embedding chunk windows")
    out = np.zeros((len(chunks), vecs.shape[1]), dtype=np.float32)
    np.add.at(out, owner, vecs)
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def score_retrieval(method: Method, questions: Sequence, k: int) -> dict:
    """LLM-free scores of a retrieval on every question: evidence recall (every gold answer contained in
    the retrieved text, DyG-RAG's rule), evidence size in units and cl100k tokens, latency."""
    retrieval = method.retrieve(questions, k, progress=False)
    texts = ["\n".join(method.evidence_lines(ids)) for ids in retrieval.ids]
    recall = evidence_recall(texts, [q.answers for q in questions])
    tokens = np.array([cl100k_count(t) for t in texts], dtype=float)
    return {
        "retrieval": retrieval,
        "recall": recall,
        "tokens": tokens,
        "units": retrieval.sizes(),
        "latency_s": retrieval.latency_s,
    }
