"""Entity linking: a question's entity mentions, found in the KG's own names and grounded to entity ids.

Exact, longest-match linking over every name in the forms questions use comes first; name-like spans
left over (capitalised runs, role phrases built from the KG's role vocabulary) are grounded by cosine
(TECQA Eq. 2).  See :mod:`temporag.linking` for the whole pipeline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from temporag.linking.mentions import Mention, first_mention_per_entity, follows_constraint
from temporag.linking.phrase_vectors import encode_memo
from temporag.linking.places import ROLE_PLACE, alias_forms, place_roles
from temporag.linking.tokens import CALENDAR_WORDS, FUNCTION_WORDS, Token, date_word_mask, name_key, tokenize
from temporag.timeutil import extract_time_mentions

#: Words joining the parts of one name ("Ministry of Defence and Security", "Saud bin Faisal").
CONNECTORS = frozenset("of and for the de da do dos del la le al el bin ibn van von der 's &".split())
_BREAK_CHARS = set(',?;:!()[]"')
#: The grounding score's weight on an entity's KG degree (:meth:`EntityLinker.score`), chosen by 5-fold
#: cross-validation on the shared MultiTQ questions (every fold chose it; see the linker's crossval).
DEGREE_WEIGHT = 0.3


class EntityLinker:
    """Finds entity mentions in questions and grounds them to KG entity ids (exact, then embedding).

    ``entity_vectors`` are the normalised label vectors (``embed.kg_name_vectors``); ``encoder`` embeds
    the leftover spans.  Both are optional for exact-only use (tests, quick looks).

    Every rule comes from the KG's own vocabulary or from general English (see :mod:`temporag.linking`):

    * the timestamp vocabulary (numbers, month and weekday words) never makes an entity on its own; only
      a longer KG name holding other words may include it ("Theresa May");
    * a span that names a place (or its adjective: "Croatian" → Croatia) is grounded among the entities
      whose names hold that place — its ``Role (Place)`` entities, the place itself, its named
      organisations — so "the leader of Turkmenistan" can only land on a Turkmen entity;
    * a person's surname alone links to the person (the busiest one when several share it);
    * every choice among candidates is one score (:meth:`score`): an exact KG name first (a label
      before a derived form, a full name before a surname), else the span's cosine with the label plus
      ``degree_weight`` × the entity's normalised log degree in the KG (a busier entity is the likelier
      reading of a vague span).  ``degree_weight`` is the linker's one number; it is chosen by
      cross-validation (:func:`temporag.methods.tecqa.analysis.parser_crossval`).
    """

    def __init__(
        self,
        kg,
        encoder=None,
        entity_vectors: np.ndarray | None = None,
        *,
        degree_weight: float = DEGREE_WEIGHT,
    ) -> None:
        self.kg = kg
        self.encoder = encoder
        self.entity_vectors = entity_vectors
        self.degree_weight = degree_weight
        self._span_memo: dict[str, np.ndarray] = {}

    @cached_property
    def prior(self) -> np.ndarray:
        """Each entity's log degree in the KG, scaled to [0, 1] (the busiest entity: 1)."""
        degree = np.log1p(np.diff(self.kg.by_entity.offsets).astype(np.float64))
        return (degree / max(float(degree.max()), 1e-9)).astype(np.float32)

    def score(self, sims: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """The grounding score of candidates (all entities when None) given their cosines with a span:
        cosine + ``degree_weight`` × :attr:`prior`."""
        prior = self.prior if candidates is None else self.prior[candidates]
        return sims + self.degree_weight * prior

    @cached_property
    def places(self) -> dict[tuple[str, ...], tuple[int | None, list[int]]]:
        """This KG's :func:`~temporag.linking.places.place_roles`: place key → (place entity, its roles)."""
        return place_roles(self.kg.entity_labels, self.kg.label_to_entity)

    # -- the name tables -------------------------------------------------------------------------
    @cached_property
    def aliases(self) -> dict[tuple[str, ...], int]:
        """Normalised alias key → entity id; a label beats a derived form, then the busier entity wins."""
        degree = np.diff(self.kg.by_entity.offsets)
        best: dict[tuple[str, ...], tuple[int, int, int]] = {}

        def offer(key: tuple[str, ...], specificity: int, eid: int) -> None:
            cand = (specificity, -int(degree[eid]), eid)
            if key and (key not in best or cand < best[key]):
                best[key] = cand

        for eid, label in enumerate(self.kg.entity_labels):
            for rank, form in enumerate(alias_forms(label)):
                offer(name_key(form), 0 if rank == 0 else 1, eid)
        for eid, surname in self.surnames.items():
            offer((surname,), 2, eid)
        return {k: v[2] for k, v in best.items()}

    @cached_property
    def surnames(self) -> dict[int, str]:
        """Entity → the surname a question may name it by: the last word of a personal name, i.e. a label
        without a parenthesis of two to four capitalised words (name particles allowed) none of which
        is a word of the KG's roles, relations or institutions (so "Labour Party", "Harvard University"
        are not persons) and that is not a place of the naming scheme."""
        common = self.role_vocabulary | self.relation_words | self.institution_words
        out = {}
        for eid, label in enumerate(self.kg.entity_labels):
            if "(" in label or "/" in label or label.endswith(".") or name_key(label) in self.places:
                continue  # a role, or a place of the naming scheme ("South Korea")
            tokens = tokenize(label)
            words = [t for t in tokens if t.norm not in CONNECTORS]
            if not 2 <= len(words) <= 4 or not all(
                t.text[:1].isupper() and t.text[:1].isalpha() for t in words
            ):
                continue
            if any(t.norm in common or t.norm in FUNCTION_WORDS for t in words):
                continue
            last = words[-1].norm
            if len(last) > 2 and last not in CALENDAR_WORDS:
                out[eid] = last
        return out

    @cached_property
    def institution_words(self) -> frozenset[str]:
        """Capitalised words of the KG's names built with a connector ("University of Tokyo", "Bank for
        International Settlements"): institution vocabulary, never a surname."""
        words = set()
        for label in self.kg.entity_labels:
            tokens = tokenize(label.split(" (")[0])
            if any(t.norm in CONNECTORS and not t.text[:1].isupper() for t in tokens):
                words.update(t.norm for t in tokens if t.text[:1].isupper())
        return frozenset(words)

    @cached_property
    def role_vocabulary(self) -> frozenset[str]:
        """Every normalised word of the roles of the KG's ``Role (Place)`` names."""
        return frozenset(
            t.norm
            for label in self.kg.entity_labels
            if (m := ROLE_PLACE.match(label))
            for t in tokenize(m.group("role"))
        )

    @cached_property
    def max_alias_len(self) -> int:
        return max(len(k) for k in self.aliases)

    @cached_property
    def role_words(self) -> frozenset[str]:
        """Normalised words of the KG's ``Role (Place)`` roles ("citizen", "military", "envoy")."""
        words = set(self.role_vocabulary) - self.relation_heads
        return frozenset(w for w in words if w not in FUNCTION_WORDS and w not in CONNECTORS and len(w) > 2)

    @cached_property
    def relation_words(self) -> frozenset[str]:
        """Every word of the relation labels ("visit", "request", "agreement")."""
        return frozenset(t.norm for label in self.kg.relation_labels for t in tokenize(label))

    @cached_property
    def relation_heads(self) -> frozenset[str]:
        """First words of the relation labels ("appeal", "host", "use"): actions, never part of a name."""
        return frozenset(t[0].norm for label in self.kg.relation_labels if (t := tokenize(label)))

    # -- step 1: exact longest match --------------------------------------------------------------
    def exact_matches(
        self, tokens: Sequence[Token], blocked: Sequence[bool], dated: Sequence[bool] | None = None
    ) -> list[tuple[int, int, int]]:
        """(first token, end token, entity) of greedy longest alias matches, left to right; a match made
        only of ``dated`` tokens (the timestamp vocabulary) is no name."""
        dated = dated if dated is not None else [False] * len(tokens)
        out = []
        i, n = 0, len(tokens)
        while i < n:
            hit = None
            if not blocked[i] and tokens[i].norm != "the":
                for j in range(min(n, i + self.max_alias_len + 2), i, -1):
                    if any(blocked[i:j]) or tokens[j - 1].norm == "the":
                        continue
                    key = tuple(t.norm for t in tokens[i:j] if t.norm != "the")
                    eid = self.aliases.get(key)
                    if eid is None:
                        continue
                    span = tokens[i:j]
                    if not any(t.capitalised and t.norm not in FUNCTION_WORDS for t in span):
                        continue  # lower-case words ("the first person") are not names
                    if all(dated[i:j]):
                        continue  # "May", "Monday", "2009": a date, never an entity
                    hit = (i, j, eid)
                    break
            if hit:
                out.append(hit)
                i = hit[1]
            else:
                i += 1
        return out

    # -- step 2: name-like spans ------------------------------------------------------------------
    def spans(self, question: str) -> list[tuple[int, int, int | None]]:
        """Mention spans as (first token, end token, exact entity or None) plus the tokens."""
        return self._spans(question)[1]

    def _spans(self, question: str):
        tokens = tokenize(question)
        n = len(tokens)
        time_spans = [(m.start, m.end) for m in extract_time_mentions(question)]
        blocked = [any(s < t.end and t.start < e for s, e in time_spans) for t in tokens]
        dated = date_word_mask(tokens)
        # a comma or question mark between two tokens ends any span
        breaks = [
            i > 0 and any(ch in _BREAK_CHARS for ch in question[tokens[i - 1].end : tokens[i].start])
            for i in range(n)
        ]
        exact = self.exact_matches(tokens, blocked, dated)
        exact_at = {i: (i, j, e) for i, j, e in exact}
        covered = [False] * n
        for i, j, _ in exact:
            for k in range(i, j):
                covered[k] = True

        def is_name(k: int) -> bool:
            t = tokens[k]
            return not blocked[k] and (
                covered[k] or (t.capitalised and t.norm not in FUNCTION_WORDS and not dated[k])
            )

        def is_conn(k: int) -> bool:
            return not blocked[k] and tokens[k].norm in CONNECTORS

        def is_role(k: int) -> bool:
            return not blocked[k] and not tokens[k].capitalised and tokens[k].norm in self.role_words

        relation_heads = self.relation_heads

        def is_head_noun(k: int) -> bool:
            # the noun after a bare demonym or unknown name ("Myanmar migrants", "Swedish businessman")
            t = tokens[k]
            return (
                not blocked[k]
                and not dated[k]
                and not t.capitalised
                and t.norm not in FUNCTION_WORDS
                and t.norm not in relation_heads
                and not t.norm.endswith(("ed", "ing"))
            )

        # runs of name tokens joined by connectors
        runs = []
        k = 0
        while k < n:
            if not is_name(k):
                k += 1
                continue
            start = end = k
            j = k + 1
            while j < n and not breaks[j] and (is_name(j) or is_conn(j)):
                if is_name(j):
                    end = j
                j += 1
            runs.append([start, end + 1])
            k = end + 1
        out = []
        for start, end in runs:
            # (a) "Myanmar migrants", (c) "International's media staff": roles after the name
            j = end
            if j < n and tokens[j].norm == "'s" and j + 1 < n and is_role(j + 1) and not breaks[j + 1]:
                j += 1
            if j < n and is_role(j) and not breaks[j]:
                while j < n and is_role(j) and not breaks[j]:
                    j += 1
                end = j
            elif end - start == 1 and not covered[start] and j < n and not breaks[j] and is_head_noun(j):
                end = j + 1
            # (b) "citizens of Norway", "the envoy of the United States": roles before "of"
            i = start
            if i > 0 and not breaks[i] and tokens[i - 1].norm == "the":
                i -= 1
            if i > 1 and not breaks[i] and tokens[i - 1].norm in ("of", "from") and not breaks[i - 1]:
                if is_role(i - 2):
                    i -= 2
                    while i > 0 and is_role(i - 1) and not breaks[i]:
                        i -= 1
                    start = i
                elif is_head_noun(i - 2) and tokens[i - 2].norm not in self.relation_words:
                    start = i - 2
            inner = [e for s, e2, e in exact if start <= s and e2 <= end]
            whole = exact_at.get(start)
            if whole is not None and whole[1] == end:
                out.append((start, end, whole[2]))
            elif inner and all(covered[k] or is_conn(k) for k in range(start, end)):
                # a run made only of exact names ("Tony Blair"): keep each exact match
                out.extend((s, e2, eid) for s, e2, eid in exact if start <= s and e2 <= end)
            else:
                out.append((start, end, None))
        return tokens, out

    # -- step 3: grounding ------------------------------------------------------------------------
    @cached_property
    def place_pools(self) -> dict[tuple[str, ...], np.ndarray]:
        """Place key (a place of the naming scheme, or its adjective) → the entities whose names hold
        that place: the place, its ``Role (Place)`` entities and its named organisations."""
        by_word: dict[str, list[int]] = {}
        keys = [name_key(label) for label in self.kg.entity_labels]
        for eid, key in enumerate(keys):
            for w in set(key):
                by_word.setdefault(w, []).append(eid)
        pools: dict[tuple[str, ...], np.ndarray] = {}
        for place_key, (_place, roles) in self.places.items():
            name = name_key(self.kg.entity_labels[roles[0]].rpartition("(")[2].rstrip(")"))
            ids = [
                e
                for e in by_word.get(name[0], [])
                if any(keys[e][i : i + len(name)] == name for i in range(len(keys[e]) - len(name) + 1))
            ]
            pools[place_key] = np.asarray(sorted(set(ids) | set(roles)), dtype=np.int64)
        return pools

    def pool_of(self, text: str) -> np.ndarray | None:
        """The candidates of a span that names a place (the longest place key in it): :attr:`place_pools`;
        None (every entity) when it names none."""
        norms = [t.norm for t in tokenize(text) if t.norm != "the"]
        for size in range(min(len(norms), 4), 0, -1):
            for a in range(len(norms) - size + 1):
                pool = self.place_pools.get(tuple(norms[a : a + size]))
                if pool is not None:
                    return pool
        return None

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        if self.encoder is None or self.entity_vectors is None:
            raise ValueError("embedding grounding needs an encoder and entity_vectors")
        return encode_memo(self.encoder, [_strip_article(t) for t in texts], self._span_memo)

    def ranked(self, text: str, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(candidates, their scores, their cosines) of one span, best score first."""
        pool = self.pool_of(text)
        sims = self.entity_vectors @ vector if pool is None else self.entity_vectors[pool] @ vector
        cands = np.arange(len(sims)) if pool is None else pool
        scores = self.score(sims, None if pool is None else pool)
        order = np.lexsort((cands, -scores))
        return cands[order], scores[order], sims[order]

    def ground(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """TECQA's Ground(m, E_KG): the exact alias if there is one, else the candidate with the best
        :meth:`score` (among the named place's entities when the span names a place); returns the ids
        and the chosen entity's cosine (1.0 for an exact name)."""
        ids = np.full(len(texts), -1, dtype=np.int64)
        scores = np.zeros(len(texts), dtype=np.float32)
        todo = []
        for i, text in enumerate(texts):
            eid = self.aliases.get(name_key(text))
            if eid is not None:
                ids[i], scores[i] = eid, 1.0
            elif text.strip():
                todo.append(i)
        if todo:
            vecs = self._vectors([texts[i] for i in todo])
            for i, v in zip(todo, vecs):
                cands, _, sims = self.ranked(texts[i], v)
                ids[i], scores[i] = cands[0], min(float(sims[0]), 0.9999)
        return ids, scores

    def alternatives(
        self, texts: Sequence[str], chosen: Sequence[int], k: int, margin: float
    ) -> list[list[tuple[int, float]]]:
        """Other readings of uncertain mentions: up to ``k`` candidates whose :meth:`score` is within
        ``margin`` of the chosen entity's, best first, as (entity, gap).  A span naming a place keeps
        its place's entities, so "the Prime Minister of India" may also read "Head of Government
        (India)" but never another country's role."""
        if not len(texts) or k <= 0:
            return [[] for _ in texts]
        vecs = self._vectors(texts)
        out = []
        for text, v, eid in zip(texts, vecs, chosen):
            cands, scores, _ = self.ranked(text, v)
            where = np.flatnonzero(cands == int(eid))
            ref = float(scores[where[0]]) if len(where) else float(scores[0])
            picked = []
            for e, sc in zip(cands[: k + 1].tolist(), scores[: k + 1].tolist()):
                if e == int(eid):
                    continue
                gap = ref - sc
                if gap > margin or len(picked) == k:
                    break
                picked.append((e, round(max(gap, 0.0), 4)))
            out.append(picked)
        return out

    def link(self, question: str) -> list[Mention]:
        """Entity mentions of one question, in order, each grounded; see :meth:`link_many`."""
        return self.link_many([question])[0]

    def link_many(self, questions: Sequence[str]) -> list[list[Mention]]:
        """Mentions of many questions; all leftover spans are embedded in one batch."""
        per_q = []
        pending: list[str] = []
        for q in questions:
            tokens, spans = self._spans(q)
            items = []
            for s, e, eid in spans:
                text = q[tokens[s].start : tokens[e - 1].end]
                if eid is None:
                    items.append((s, e, text, len(pending)))
                    pending.append(text)
                else:
                    items.append((s, e, text, eid, 1.0))
            per_q.append((q, tokens, items))
        if pending:
            ids, scores = self.ground(pending)
        out = []
        for _q, tokens, items in per_q:
            mentions = []
            for item in items:
                s, e, text = item[:3]
                if len(item) == 4:
                    eid, score = int(ids[item[3]]), float(scores[item[3]])
                    method = "exact" if score == 1.0 else "embedding"
                else:
                    eid, score, method = int(item[3]), 1.0, "exact"
                mentions.append(
                    Mention(
                        text,
                        tokens[s].start,
                        tokens[e - 1].end,
                        eid,
                        score,
                        method,
                        constraint=follows_constraint(tokens, s),
                    )
                )
            out.append(first_mention_per_entity(mentions))
        return out


def _strip_article(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", text.strip(), flags=re.I)
