"""TECQA (Liu et al.): temporal evidence chains for TKGQA — one step function per part of §4.

The method in the order a notebook walks it:

* §4.2.1 structural constraint parsing → :class:`Constraints` from :class:`OfflineParser` (no LLM; the
  kit's :mod:`temporag.linking`) or :class:`LLMParser` (the paper's three prompts, appendix F.1 style);
  both ground mentions to the KG by name-embedding cosine (Eq. 2).
* §4.2.2 structure-guided subgraph F_main ∪ F_context (Eqs. 3–5) → :func:`subgraph`.
* §4.3 temporal evidence chain: explicit anchors by regex with ISO normalisation that keeps the
  granularity (:func:`explicit_anchors`), implicit anchors = dates of the top-N most similar subgraph
  facts (Eq. 6, :func:`implicit_anchors`), k-nearest temporal neighbours of every anchor
  (Eqs. 7–8, :func:`knn_temporal`), proximity serialisation (Eq. 9, :func:`serialise`).
* §4.4 reasoning → :func:`reader_lines` + :func:`read` (the kit's reader with TECQA's rules).

:class:`TECQA` runs §4.2.2–4.3 for many questions with per-question latency; :func:`pipeline` runs
everything.  The ablations of Table 2 are variants of :meth:`TECQA.chain` (``prune="semantic"`` for
w/o KNTN, ``order="random"`` for w/o PS) plus global semantic retrieval for w/o SG.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from tqdm.auto import tqdm

from temporag.linking import EntityLinker, RelationGrounder, main_entity_index, predicate_text
from temporag.params import check as check_params
from temporag.timeutil import TimeValue, extract_time_mentions

log = logging.getLogger(__name__)

DEFAULT_K = 40  # temporal neighbours per anchor (§5.1, MultiTQ and CronQuestions)
DEFAULT_N = 2  # implicit anchors (§5.1, MultiTQ; 5 for CronQuestions)


# ----------------------------------------------------------------------------------------------------
# §4.2.1 structural constraints


@dataclass(frozen=True)
class Constraints:
    """The grounded structural constraints of one question (E_q, R_q, e_main) and the raw mentions."""

    question: str
    entities: tuple[int, ...]
    relations: tuple[int, ...]
    main: int | None
    entity_mentions: tuple[str, ...] = ()
    relation_mention: str = ""
    main_mention: str | None = None
    parser: str = "offline"
    raw: dict = field(default_factory=dict, compare=False)

    @property
    def others(self) -> tuple[int, ...]:
        """E_other = E_q without the main entity (Eq. 3)."""
        return tuple(e for e in self.entities if e != self.main)

    def describe(self, kg) -> dict:
        """Readable labels, for tables and worked examples."""
        return {
            "entities": [kg.entity_labels[e] for e in self.entities],
            "relation": [kg.relation_labels[r] for r in self.relations],
            "main": kg.entity_labels[self.main] if self.main is not None else None,
            "mentions": list(self.entity_mentions),
            "relation_phrase": self.relation_mention,
        }


class OfflineParser:
    """Structural constraints without an LLM: linked entity mentions, a grounded relation, the main entity.

    ``relation_prior="kg"`` (default) grounds the relation phrase among the relations the KG attests for
    the main entity — and, when the question names another entity the main entity has facts with, among
    the relations of those shared facts — so the grounding cannot pick an edge the pivot never has;
    ``"none"`` grounds over all relation names (Eq. 2 as printed).
    """

    def __init__(
        self,
        kg,
        encoder,
        entity_vectors: np.ndarray,
        relation_vectors: np.ndarray,
        relation_prior: str = "kg",
    ) -> None:
        if relation_prior not in ("kg", "none"):
            raise ValueError(f"relation_prior must be 'kg' or 'none', got {relation_prior!r}")
        self.kg = kg
        self.linker = EntityLinker(kg, encoder, entity_vectors)
        self.grounder = RelationGrounder(kg, encoder, relation_vectors)
        self.relation_prior = relation_prior

    def candidate_relations(self, main: int | None, others: Sequence[int]) -> np.ndarray | None:
        """Relations the KG attests for the main entity (with the other entities where they meet)."""
        if self.relation_prior == "none" or main is None:
            return None
        kg = self.kg
        facts = kg.by_entity[main]
        if len(others):
            other = np.asarray(list(others))
            shared = facts[np.isin(kg.s[facts], other) | np.isin(kg.o[facts], other)]
            if len(shared):
                return np.unique(kg.r[shared])
        return np.unique(kg.r[facts])

    def parse_many(self, questions: Sequence[str], progress: bool = False) -> list[Constraints]:
        """Constraints of many questions (span and relation embeddings in batches)."""
        mentions = self.linker.link_many(list(questions))
        mains, phrases, allowed = [], [], []
        for q, ms in zip(questions, mentions):
            idx = main_entity_index(q, ms)
            main = ms[idx].entity if idx is not None else None
            mains.append((idx, main))
            phrases.append(predicate_text(q, ms))
            others = [m.entity for m in ms if m.entity != main]
            allowed.append(self.candidate_relations(main, others))
        rel_ids, rel_scores = self.grounder.ground(phrases, allowed)
        out = []
        for q, ms, (idx, main), phrase, rid, rs in zip(
            questions, mentions, mains, phrases, rel_ids, rel_scores
        ):
            out.append(
                Constraints(
                    question=q,
                    entities=tuple(m.entity for m in ms),
                    relations=(int(rid),),
                    main=main,
                    entity_mentions=tuple(m.text for m in ms),
                    relation_mention=phrase,
                    main_mention=ms[idx].text if idx is not None else None,
                    parser="offline",
                    raw={
                        "mention_scores": [round(m.score, 4) for m in ms],
                        "mention_methods": [m.method for m in ms],
                        "constraint_mentions": [m.text for m in ms if m.constraint],
                        "constraint_entities": [m.entity for m in ms if m.constraint],
                        "relation_score": round(float(rs), 4),
                    },
                )
            )
        return out

    def parse(self, question: str) -> Constraints:
        return self.parse_many([question])[0]


# The three parsing prompts (appendix F.1's structure and output formats; the kit's own wording and
# examples, none of them taken from the MultiTQ test questions).
ENTITY_PROMPT = """List the named participants of the question — people, organisations, countries, groups — \
as a Python list of strings, copied as they are written in the question. Leave out dates, question words and \
generic words such as "country" or "person". Reply with the list only, or [] if there is none.

Question: When did the Prime Minister of Japan last criticise the South Korean navy?
Entities: ['Prime Minister of Japan', 'South Korean navy']

Question: Who was the last to host Angela Merkel before Brazil did?
Entities: ['Angela Merkel', 'Brazil']

Question: In March 2009, which country threatened Georgia?
Entities: ['Georgia']

Question: {question}
Entities:"""

RELATION_PROMPT = """Choose the ONE relation from the relation list that names the action the question asks \
about; the entities are given for context. Reply with the relation name exactly as it is listed, nothing else.

Hints: want / wish / plan / intend → "Express intent to ..."; ask / urge / call on / request → \
"Appeal for ..." or "Make an appeal or request"; talks / negotiate → "Engage in negotiation" or "Express \
intent to meet or negotiate"; visit / travel to → "Make a visit", and the visited side "Host a visit"; \
attack / fight / use force → "Use ... force"; criticise / condemn / blame → "Criticize or denounce" or \
"Accuse".

Question: When did the Prime Minister of Japan last criticise the South Korean navy?
Entities: ['Prime Minister of Japan', 'South Korean navy']
Relation: Criticize or denounce

Question: Who was the last to host Angela Merkel before Brazil did?
Entities: ['Angela Merkel', 'Brazil']
Relation: Host a visit

Relation list: {relations}

Question: {question}
Entities: {entities}
Relation:"""

MAIN_PROMPT = """Name the ONE main entity of the question from the list. If the grammatical subject \
is a specific entity, the main entity is the subject. If the subject is a question word (who, which country, \
what), the main entity is the object the action is directed at. Reply with the name only.

Question: When did the Prime Minister of Japan last criticise the South Korean navy?
List: ['Prime Minister of Japan', 'South Korean navy']
Main entity: Prime Minister of Japan

Question: Who was the last to host Angela Merkel before Brazil did?
List: ['Angela Merkel', 'Brazil']
Main entity: Angela Merkel

Question: {question}
List: {entities}
Main entity:"""


def _first_line(text: str) -> str:
    for line in (text or "").splitlines():
        line = line.strip().strip("'\"`*").strip()
        if line:
            for prefix in ("Relation:", "Main entity:", "Answer:", "A:"):
                if line.lower().startswith(prefix.lower()):
                    line = line[len(prefix) :].strip().strip("'\"`*").strip()
            return line
    return ""


class LLMParser:
    """The paper's parse (Eq. 1): three LLM calls per question, then Eq. 2 grounding of every mention.

    Grounding reuses the offline parser's name tables: an exact KG name wins, otherwise the label with
    the best cosine.  Every raw reply is kept in ``Constraints.raw`` for audits.
    """

    def __init__(self, kg, llm, offline: OfflineParser) -> None:
        self.kg = kg
        self.llm = llm
        self.linker = offline.linker
        self.grounder = offline.grounder

    def _chat(self, prompts: Sequence[str], max_tokens: int, desc: str, progress: bool):
        return self.llm.chat_many(
            [[{"role": "user", "content": p}] for p in prompts],
            max_tokens=max_tokens,
            desc=desc,
            progress=progress,
        )

    def parse_many(self, questions: Sequence[str], progress: bool = True) -> list[Constraints]:
        from temporag.readers import parse_ranked_answers

        questions = list(questions)
        replies = self._chat(
            [ENTITY_PROMPT.format(question=q) for q in questions], 64, "parse: entities", progress
        )
        raw_entities = [parse_ranked_answers(r.text, top_k=8) for r in replies]
        relations = "; ".join(self.kg.relation_labels)
        rel_replies = self._chat(
            [
                RELATION_PROMPT.format(relations=relations, question=q, entities=repr(ents))
                for q, ents in zip(questions, raw_entities)
            ],
            24,
            "parse: relation",
            progress,
        )
        main_replies = self._chat(
            [MAIN_PROMPT.format(question=q, entities=repr(ents)) for q, ents in zip(questions, raw_entities)],
            24,
            "parse: main entity",
            progress,
        )
        rel_texts = [_first_line(r.text) for r in rel_replies]
        main_texts = [_first_line(r.text) for r in main_replies]
        flat = [m for ents in raw_entities for m in ents]
        ent_ids, _ = self.linker.ground(flat) if flat else (np.empty(0, dtype=np.int64), None)
        main_ids, _ = self.linker.ground(main_texts)
        rel_ids, _ = self.grounder.ground(rel_texts)
        out, pos = [], 0
        for i, q in enumerate(questions):
            ents = [int(e) for e in ent_ids[pos : pos + len(raw_entities[i])] if e >= 0]
            pos += len(raw_entities[i])
            main = int(main_ids[i]) if main_texts[i] and main_ids[i] >= 0 else (ents[0] if ents else None)
            if main is not None and main not in ents:
                ents = [main, *ents]
            out.append(
                Constraints(
                    question=q,
                    entities=tuple(dict.fromkeys(ents)),
                    relations=(int(rel_ids[i]),) if rel_texts[i] else (),
                    main=main,
                    entity_mentions=tuple(raw_entities[i]),
                    relation_mention=rel_texts[i],
                    main_mention=main_texts[i] or None,
                    parser="llm",
                    raw={
                        "entity_reply": replies[i].text,
                        "relation_reply": rel_replies[i].text,
                        "main_reply": main_replies[i].text,
                        "errors": [r.error for r in (replies[i], rel_replies[i], main_replies[i]) if r.error],
                    },
                )
            )
        return out

    def parse(self, question: str) -> Constraints:
        return self.parse_many([question], progress=False)[0]


# ----------------------------------------------------------------------------------------------------
# §4.2.2 subgraph


def subgraph_parts(kg, constraints: Constraints) -> tuple[np.ndarray, np.ndarray]:
    """(F_main, F_context) of Eqs. 4–5 as sorted fact ids, from the KG's entity index."""
    empty = np.empty(0, dtype=np.int32)
    rels = np.asarray(constraints.relations, dtype=np.int32)
    if constraints.main is None or not len(rels):
        return empty, empty
    facts = kg.by_entity[constraints.main]
    f_main = facts[np.isin(kg.r[facts], rels)] if len(rels) > 1 else facts[kg.r[facts] == rels[0]]
    f_main = np.unique(f_main)
    others = np.asarray(constraints.others, dtype=np.int32)
    if len(others) == 0:
        return f_main, empty
    cand = kg.by_entity.many(others) if len(others) > 1 else np.unique(kg.by_entity[int(others[0])])
    keep = np.isin(kg.s[cand], others) & np.isin(kg.o[cand], others) & np.isin(kg.r[cand], rels)
    return f_main, cand[keep]


def subgraph(kg, constraints: Constraints) -> np.ndarray:
    """F_q = F_main ∪ F_context (Eq. 3): the high-recall candidate pool, sorted fact ids."""
    f_main, f_ctx = subgraph_parts(kg, constraints)
    if not len(f_ctx):
        return f_main
    return np.union1d(f_main, f_ctx).astype(np.int32)


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


def rank_by_similarity(sims: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k most similar facts; ties (facts of one triple) keep chronological order."""
    if k <= 0 or not len(sims):
        return np.empty(0, dtype=np.int64)
    order = np.lexsort((np.arange(len(sims)), -sims))
    return order[:k]


def implicit_anchors(kg, facts: np.ndarray, sims: np.ndarray, n: int) -> tuple[list[TimeValue], np.ndarray]:
    """T_imp (Eq. 6): the days of the top-N facts by similarity, and those facts' ids."""
    top = facts[rank_by_similarity(sims, n)]
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


def reader_lines(kg, facts: Sequence[int]) -> list[str]:
    """Facts as '[subject, relation, object, date]' lines, the form of the paper's reasoning prompt."""
    return [f"[{s}, {r}, {o}, {d}]" for s, r, o, d in kg.as_quadruples(facts)]


class TECQA:
    """§4.2.2–4.3 for many questions: subgraph, anchors, pruning, serialisation, with latency.

    ``triple_vectors`` are the normalised vectors of the KG's distinct triple texts
    (``embed.kg_triple_vectors``); they are loaded from the cache on first use unless given.
    """

    def __init__(self, kg, encoder=None, triple_vectors: np.ndarray | None = None) -> None:
        self.kg = kg
        self._encoder = encoder
        self._triple_vectors = triple_vectors

    @cached_property
    def encoder(self):
        from temporag.embed import Encoder

        return self._encoder or Encoder()

    @cached_property
    def triple_vectors(self) -> np.ndarray:
        if self._triple_vectors is not None:
            return self._triple_vectors
        from temporag.embed import kg_triple_vectors

        return kg_triple_vectors(self.kg, self.encoder)

    def embed_questions(self, questions: Sequence[str]) -> np.ndarray:
        return self.encoder.encode(list(questions))

    def chain(
        self,
        constraints: Constraints,
        q_vec: np.ndarray,
        k: int = DEFAULT_K,
        n: int = DEFAULT_N,
        *,
        pool: np.ndarray | None = None,
        prune: str = "temporal",
        order: str = "proximity",
        rng: np.random.Generator | None = None,
    ) -> EvidenceChain:
        """One question's evidence chain.

        ``pool`` replaces the structure-guided subgraph (w/o SG: global semantic top-K); ``prune``
        is "temporal" (KNTN, Eqs. 7–8) or "semantic" (top-K by similarity: w/o KNTN); ``order`` is
        "proximity" (Eq. 9) or "random" (w/o PS, shuffled with ``rng``).
        """
        kg = self.kg
        facts = subgraph(kg, constraints) if pool is None else np.asarray(pool, dtype=np.int32)
        sims = fact_similarity(kg, self.triple_vectors, q_vec, facts)
        explicit = explicit_anchors(constraints.question)
        implicit, anchor_facts = implicit_anchors(kg, facts, sims, n)
        anchors = list(dict.fromkeys([*explicit, *implicit]))
        if prune == "temporal":
            kept = knn_temporal(kg, facts, anchors, k)
        elif prune == "semantic":
            kept = np.sort(facts[rank_by_similarity(sims, k)])
        else:
            raise ValueError(f"prune must be 'temporal' or 'semantic', got {prune!r}")
        ordered, delta = serialise(kg, kept, anchors, fact_similarity(kg, self.triple_vectors, q_vec, kept))
        if order == "random":
            perm = (rng or np.random.default_rng(0)).permutation(len(ordered))
            ordered, delta = ordered[perm], delta[perm]
        elif order != "proximity":
            raise ValueError(f"order must be 'proximity' or 'random', got {order!r}")
        variant = "tecqa" if (pool is None and prune == "temporal" and order == "proximity") else "variant"
        return EvidenceChain(
            constraints.question,
            constraints,
            facts,
            explicit,
            implicit,
            anchor_facts,
            ordered,
            delta,
            variant,
        )

    def build(
        self,
        constraints: Sequence[Constraints],
        q_vecs: np.ndarray,
        k: int = DEFAULT_K,
        n: int = DEFAULT_N,
        *,
        pools: Sequence[np.ndarray] | None = None,
        prune: str = "temporal",
        order: str = "proximity",
        seed: int = 0,
        progress: bool = True,
        desc: str = "TECQA chains",
    ) -> tuple[list[EvidenceChain], np.ndarray]:
        """Chains for many questions and per-question retrieval latency in seconds (parsing and question
        embedding excluded, like the semantic baseline's)."""
        check_params(K=k, N=n)
        _ = self.triple_vectors  # load before timing
        rng = np.random.default_rng(seed)
        chains, latency = [], np.zeros(len(constraints))
        for i, (c, v) in enumerate(
            tqdm(list(zip(constraints, q_vecs)), desc=desc, disable=not progress or len(constraints) < 50)
        ):
            t0 = time.perf_counter()
            chains.append(
                self.chain(
                    c, v, k, n, pool=None if pools is None else pools[i], prune=prune, order=order, rng=rng
                )
            )
            latency[i] = time.perf_counter() - t0
        return chains, latency


# ----------------------------------------------------------------------------------------------------
# §4.4 reasoning

READER_RULES = (
    "Answer only from the facts above; each is [subject, relation, object, date] and they are ordered "
    "by closeness in time to the question's reference date. Apply the question's time constraint first "
    "(before / after / in / same month as); for 'first' pick the earliest remaining fact, for 'last' the "
    "latest. For an entity answer give the subject or object the question asks for; for a time answer "
    "write the date at the granularity the question asks (YYYY, YYYY-MM or YYYY-MM-DD). Remove duplicates."
)


def read(
    llm,
    kg,
    questions: Sequence,
    chains: Sequence[Sequence[int]],
    top_k: int = 5,
    progress: bool = True,
    desc: str = "TECQA reader",
):
    """§4.4: the reader LLM answers each question from its serialised chain (a ranked Python list).

    ``questions`` are records with ``question`` and ``answer_type``; returns the reader's results."""
    from temporag.readers import read_many

    return read_many(
        llm,
        [q.question for q in questions],
        [reader_lines(kg, facts) for facts in chains],
        answer_types=[q.answer_type for q in questions],
        top_k=top_k,
        instructions=READER_RULES,
        progress=progress,
        desc=desc,
    )


# ----------------------------------------------------------------------------------------------------
# everything at once


def make_offline_parser(kg, encoder=None, relation_prior: str = "kg") -> OfflineParser:
    """The offline parser with the cached entity / relation name vectors."""
    from temporag.embed import Encoder, kg_name_vectors

    encoder = encoder or Encoder()
    ent_vecs, rel_vecs = kg_name_vectors(kg, encoder)
    return OfflineParser(kg, encoder, ent_vecs, rel_vecs, relation_prior=relation_prior)


def pipeline(
    kg,
    questions: Sequence,
    k: int = DEFAULT_K,
    n: int = DEFAULT_N,
    llm=None,
    parser: str = "offline",
    encoder=None,
    top_k: int = 5,
) -> list[dict]:
    """TECQA end to end: parse → subgraph → anchors → KNTN → serialise → (if an LLM is given) read.

    ``parser="llm"`` uses the three-prompt LLM parse (needs ``llm``); "offline" needs no LLM."""
    from temporag.embed import Encoder

    encoder = encoder or Encoder()
    offline = make_offline_parser(kg, encoder)
    texts = [q.question for q in questions]
    if parser == "llm":
        if llm is None:
            raise ValueError("parser='llm' needs an llm")
        constraints = LLMParser(kg, llm, offline).parse_many(texts)
    elif parser == "offline":
        constraints = offline.parse_many(texts)
    else:
        raise ValueError(f"parser must be 'offline' or 'llm', got {parser!r}")
    tecqa = TECQA(kg, encoder)
    chains, latency = tecqa.build(constraints, tecqa.embed_questions(texts), k, n)
    records = [
        {"quid": q.quid, **c.record(), "retrieval_s": float(t), **c.constraints.describe(kg)}
        for q, c, t in zip(questions, chains, latency)
    ]
    if llm is not None:
        results = read(llm, kg, questions, [c.facts for c in chains], top_k=top_k)
        for rec, res in zip(records, results):
            rec["answers"] = list(res.answers)
            rec["error"] = res.error
    return records
