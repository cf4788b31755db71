"""BM25 over MultiTQ's facts, a lexical baseline beside the kit's dense one, added from outside the kit.

Each distinct ``subject relation object`` text is a BM25 document (Robertson–Spärck Jones idf, k1 = 1.2,
b = 0.75); a fact scores its triple's BM25, normalised by the question's best, plus the semantic
baseline's date bonus when its date falls in a period the question names.  Nothing here is kit code:
the package declares :data:`ENTRY` and its ``pyproject.toml`` names it under the ``temporag.methods``
entry points, which is how ``temporag reproduce``, the leaderboard and the contract test find it.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy import sparse

from temporag.methods.base import Method, Retrieval, check_shared, question_texts
from temporag.methods.registry import Contender, MethodEntry
from temporag.methods.semantic import TIME_BONUS, question_times, time_bonus
from temporag.retrieval.topk import top_k_stable

STOPWORDS = frozenset(
    "a an the of in on at to for by with and or did do does was were is are be been who whom whose what "
    "which when where how first last before after time month year day".split()
)


def tokens(text: str) -> list[str]:
    """Lower-cased words and numbers, stop words out (question words and temporal cues carry no entity)."""
    return [t for t in re.findall(r"\w+", text.lower()) if t not in STOPWORDS]


class BM25Baseline(Method):
    """BM25 over the KG's triple texts with the semantic baseline's date bonus; ``k`` facts per question."""

    name = "BM25 baseline"
    evidence = "kg_fact"
    default_k = 20  # facts per question, as the semantic baseline shows on the leaderboard

    def __init__(self, kg, *, k1: float = 1.2, b: float = 0.75, date_bonus: float = TIME_BONUS) -> None:
        self.kg, self.date_bonus = kg, date_bonus
        docs = [tokens(t) for t in kg.triple_texts()]
        self.vocabulary = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
        rows, cols, counts = [], [], []
        for row, doc in enumerate(docs):
            for word, count in Counter(doc).items():
                rows.append(row)
                cols.append(self.vocabulary[word])
                counts.append(count)
        tf = sparse.csr_matrix((counts, (rows, cols)), shape=(len(docs), len(self.vocabulary)), dtype=float)
        lengths = np.array([len(d) for d in docs], dtype=float)
        df = np.bincount(cols, minlength=len(self.vocabulary))
        idf = np.log1p((len(docs) - df + 0.5) / (df + 0.5))
        norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9))
        weights = tf.copy()
        weights.data = tf.data * (k1 + 1) / (tf.data + np.repeat(norm, np.diff(tf.indptr)))
        self.weights = sparse.csc_matrix(weights @ sparse.diags(idf))

    def triple_scores(self, question: str) -> np.ndarray:
        """BM25 of every triple text for one question, normalised by the best (0 when no word is known)."""
        words = [self.vocabulary[w] for w in tokens(question) if w in self.vocabulary]
        if not words:
            return np.zeros(self.weights.shape[0])
        scores = np.asarray(self.weights[:, words].sum(axis=1)).ravel()
        best = scores.max()
        return scores / best if best > 0 else scores

    def retrieve(
        self, questions: Sequence, k: int | None = None, *, progress: bool = True, **shared
    ) -> Retrieval:
        """The ``k`` (default 20) best facts per question.  No shared input applies: BM25 reads words."""
        check_shared(shared)
        k = self.default_k if k is None else k
        facts = np.arange(len(self.kg))
        ranked, latency = [], []
        for text in question_texts(questions):
            t0 = time.perf_counter()
            scores = self.triple_scores(text)[self.kg.triple_of_fact]
            scores = scores + time_bonus(self.kg, facts, question_times(text), self.date_bonus)
            ranked.append(top_k_stable(scores, k))
            latency.append(time.perf_counter() - t0)
        return Retrieval(ranked, latency, evidence=self.evidence)

    def evidence_lines(self, ids: Sequence[int]) -> list[str]:
        return self.kg.verbalise_many(ids)


def leaderboard_bm25(workspace):
    """The leaderboard's row: BM25 on the workspace's KG (it shares no vectors: it embeds nothing)."""
    return BM25Baseline(workspace.kg), "BM25 (k1 = 1.2, b = 0.75) over triple texts + date bonus, top 20"


ENTRY = MethodEntry(
    "bm25_baseline",
    Path(__file__).with_name("bm25_baseline.ipynb"),
    order=60,
    paper=False,
    leaderboard=(Contender("BM25 baseline", leaderboard_bm25, k=20, order=50),),
)
