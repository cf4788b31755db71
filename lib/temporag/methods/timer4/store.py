"""Knowledge stores (Eqs. 1, 3, 4, 6, 7): every fact "s p o in t" as a vector, and exact top-n search.

The paper embeds each quadruple's verbalisation S(s, p, o, t).  MultiTQ has 461,329 facts but only
166,760 distinct (s, p, o) texts and 4,017 days, so a store encodes the verbalisation in two segments —
the content "s p o" and the date "on 8 May 2007 (2007-05-08)" — and a fact's vector is their
normalised sum, the date weighted by ``date_weight``:

    E_f = normalise(LM("s p o") + λ · LM(date)).

Both segments are embedded once, and the cosine of a question with every fact is computed from the two
small tables without materialising 461,329 vectors (the exact inner-product search FAISS's flat index
would do).  The time-aware retriever is trained with the same composition (``train.py``), so the
fine-tuned model is trained for the vectors it is searched with.  A store can also hold only some
triples (``triple_ids``): the smoke profile's time-aware store re-scores a candidate pool that way.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from temporag.cache import cache_path, content_hash, discard, problem, save_with_hash
from temporag.data.tkg import CSRIndex
from temporag.methods.semantic import top_k_stable
from temporag.retrieval.blas import one_blas_thread
from temporag.retrieval.embed import kg_triple_vectors
from temporag.timeutil import iso_day

DATE_WEIGHT = 0.5  # λ: the date segment's share of a fact vector (the paper leaves the fusion open)


def date_text(day: int) -> str:
    """The date segment of a fact: the written form questions use and the ISO form rewrites produce."""
    iso = iso_day(day)
    y, m, d = int(iso[:4]), int(iso[5:7]), int(iso[8:10])
    return f"on {d} {calendar.month_name[m]} {y} ({iso})"


def fact_text(kg, fact: int) -> str:
    """S(s, p, o, t): the paper's verbalisation "s p o in t", the line the reader is shown."""
    f = int(fact)
    return f"{kg.triple_text(int(kg.s[f]), int(kg.r[f]), int(kg.o[f]))} in {iso_day(int(kg.t_start[f]))}"


def compose(triple_vecs: np.ndarray, date_vecs: np.ndarray, date_weight: float) -> np.ndarray:
    """Row-wise E_f = normalise(v_triple + λ v_date) for paired rows (vectors already normalised)."""
    out = triple_vecs + date_weight * date_vecs
    return out / np.linalg.norm(out, axis=1, keepdims=True)


@dataclass
class KnowledgeStore:
    """FKS or TKS: triple and date vectors of one encoder, composed per fact on the fly.

    ``triple_vectors`` has one row per distinct triple (``kg.triple_of_fact``), or one row per entry of
    ``triple_ids`` for a partial store (a candidate pool, searched exhaustively); ``date_vectors`` one
    row per day from ``first_day``.  A full store searches like the released code: a FAISS inverted-file
    index over the triple vectors (``nlist`` cells, ``nprobe`` probed; Dec 2024 code: 1024 / 128) gives the
    ``top_triples`` best triples, and every fact of those triples is scored exactly with its date;
    ``exact=True`` scores all 461,329 facts instead (tests and the agreement check); a store built with
    ``exact_search=True`` always does (the TKS of the reported recall: the IVF cut keeps the best triples
    by content alone, before the date is added, and a time-aware model's best facts can fall outside it).
    """

    kg: object
    triple_vectors: np.ndarray
    date_vectors: np.ndarray
    first_day: int
    date_weight: float = DATE_WEIGHT
    name: str = "store"
    encoder: object = None
    triple_ids: np.ndarray | None = None
    nlist: int = 1024
    nprobe: int = 128
    top_triples: int = 256
    cache_dir: object = None
    exact_search: bool = False
    _row: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        n_rows = self.kg.n_triples if self.triple_ids is None else len(self.triple_ids)
        if len(self.triple_vectors) != n_rows:
            raise ValueError(f"{self.name}: {len(self.triple_vectors)} triple vectors for {n_rows} triples")
        days = self.kg.t_start - self.first_day
        if days.min() < 0 or days.max() >= len(self.date_vectors):
            raise ValueError(f"{self.name}: date vectors do not cover the KG's days")
        if self.triple_ids is not None:
            self.triple_ids = np.asarray(self.triple_ids, dtype=np.int64)
            self._row = np.full(self.kg.n_triples, -1, dtype=np.int64)
            self._row[self.triple_ids] = np.arange(len(self.triple_ids))

    @property
    def key(self) -> tuple:
        """Identity for memo keys: name, model, date weight and the triples held."""
        model = getattr(self.encoder, "cache_id", getattr(self.encoder, "model_name", None))
        pool = None if self.triple_ids is None else content_hash(self.triple_ids)
        return (self.name, model, self.date_weight, pool, self.exact_search)

    @property
    def partial(self) -> bool:
        return self.triple_ids is not None

    @cached_property
    def facts_of_triple(self) -> CSRIndex:
        return CSRIndex.build(self.kg.triple_of_fact, self.kg.n_triples)

    @cached_property
    def facts(self) -> np.ndarray:
        """The facts this store can score: all, or every fact of a partial store's triples."""
        if not self.partial:
            return np.arange(len(self.kg), dtype=np.int64)
        return self.facts_of_triple.many(self.triple_ids).astype(np.int64)

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per fact of ``facts``: triple row, date row and 1 / |v_triple + λ v_date|
        (|a + λb|² = 1 + λ² + 2λ a·b), computed once in chunks."""
        tri = self.kg.triple_of_fact[self.facts]
        rows = (tri if self._row is None else self._row[tri]).astype(np.int64)
        days = (self.kg.t_start[self.facts] - self.first_day).astype(np.int64)
        inv = np.empty(len(rows), dtype=np.float32)
        lam = self.date_weight
        for start in range(0, len(rows), 65536):
            sl = slice(start, start + 65536)
            cross = np.einsum("ij,ij->i", self.triple_vectors[rows[sl]], self.date_vectors[days[sl]])
            inv[sl] = 1.0 / np.sqrt(1.0 + lam * lam + 2.0 * lam * cross)
        return rows, days, inv

    @cached_property
    def index(self):
        """The inverted-file index over the triple vectors (trained once, cached on disk)."""
        import faiss

        nlist = min(self.nlist, max(1, len(self.triple_vectors) // 39))
        # cache_path checks the entry against the signature made when it was written (removed when it
        # differs or is missing); checked again here, where a read-only cache could not remove it
        path = cache_path("timer4_ivf", content_hash(self.triple_vectors, nlist), ".faiss", self.cache_dir)
        index = None
        if problem(path) is None:
            try:
                index = faiss.read_index(str(path))
            except RuntimeError as exc:  # cut short or garbled: rebuilt, not an error on every re-run
                discard(path, f"faiss cannot read it ({str(exc).strip().splitlines()[-1][:200]})")
        if index is None:
            quantizer = faiss.IndexFlatIP(self.triple_vectors.shape[1])
            dim = self.triple_vectors.shape[1]
            index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
            index.train(self.triple_vectors)
            index.add(self.triple_vectors)
            save_with_hash(path, lambda tmp: faiss.write_index(index, str(tmp)))
        index.nprobe = min(self.nprobe, nlist)
        return index

    def scores(self, q_vec: np.ndarray) -> np.ndarray:
        """cos(E_q, E_f) for every fact of ``facts`` (Eq. 3 / Eq. 7), exhaustively."""
        rows, days, inv = self._arrays
        a = (self.triple_vectors @ q_vec)[rows]
        a += self.date_weight * (self.date_vectors @ q_vec)[days]
        a *= inv
        return a

    def search(self, q_vec: np.ndarray, n: int, exact: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Top-n fact ids and cosines (Eq. 4 / Algorithm 1 line 15)."""
        if self.partial or exact or self.exact_search:
            sims = self.scores(q_vec)
            order = top_k_stable(sims, n)
            return self.facts[order], sims[order]
        return self._indexed(q_vec, n)

    def _indexed(self, q_vec: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-n facts of the IVF search: every fact of the ``top_triples`` best triples, scored exactly."""
        query = np.ascontiguousarray(q_vec[None], dtype=np.float32)
        tri_scores, tri_rows = self.index.search(query, self.top_triples)
        keep = tri_rows[0] >= 0
        tri_rows, tri_scores = tri_rows[0][keep], tri_scores[0][keep]
        facts, counts = self._facts_of_rows(tri_rows)
        _, days, inv = self._arrays
        sims = np.repeat(tri_scores, counts) + self.date_weight * (self.date_vectors @ q_vec)[days[facts]]
        sims *= inv[facts]
        order = top_k_stable(sims, n)
        return facts[order], sims[order].astype(np.float32)

    def agreement(self, q_vecs: np.ndarray, n: int = 15) -> float:
        """Mean share of the exact top-n that the indexed search returns (1.0 for a partial store; for an
        ``exact_search`` store, what its IVF index would return)."""
        if self.partial or not len(q_vecs):
            return 1.0
        with one_blas_thread():
            shares = [
                len(set(self._indexed(v, n)[0].tolist()) & set(self.search(v, n, exact=True)[0].tolist())) / n
                for v in q_vecs
            ]
        return float(np.mean(shares))

    def _facts_of_rows(self, tri_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The facts of the given triples, triple by triple, and how many each triple has."""
        offsets = self.facts_of_triple.offsets
        starts, counts = offsets[tri_rows], offsets[tri_rows + 1] - offsets[tri_rows]
        within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        return self.facts_of_triple.ids[np.repeat(starts, counts) + within].astype(np.int64), counts

    def exhaustive(self) -> KnowledgeStore:
        """The same store (vectors shared) searched exactly: for recall that no index cut skews."""
        import dataclasses

        return dataclasses.replace(self, exact_search=True)

    def restrict(self, triple_ids: np.ndarray) -> KnowledgeStore:
        """The same store over a candidate pool of triples (rows copied from this store)."""
        triple_ids = np.unique(np.asarray(triple_ids, dtype=np.int64))
        rows = triple_ids if self._row is None else self._row[triple_ids]
        return KnowledgeStore(
            self.kg,
            self.triple_vectors[rows],
            self.date_vectors,
            self.first_day,
            self.date_weight,
            self.name,
            self.encoder,
            triple_ids,
        )


def kg_days(kg) -> tuple[int, int]:
    return int(kg.t_start.min()), int(kg.t_start.max())


def build_store(kg, encoder, name: str, date_weight: float = DATE_WEIGHT, triple_ids=None) -> KnowledgeStore:
    """A store for ``encoder``: all distinct triples (cached on disk), or only ``triple_ids``."""
    first, last = kg_days(kg)
    dates = encoder.encode_cached([date_text(d) for d in range(first, last + 1)], desc="embedding dates")
    if triple_ids is None:
        triples = kg_triple_vectors(kg, encoder)
    else:
        triple_ids = np.unique(np.asarray(triple_ids, dtype=np.int64))
        texts = kg.triple_texts()
        triples = encoder.encode_cached(
            [texts[t] for t in triple_ids], desc=f"{name}: embedding candidate triples"
        )
    return KnowledgeStore(kg, triples, dates, first, date_weight, name, encoder, triple_ids)
