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
from temporag.linking.places import ROLE_PLACE, alias_forms, place_roles, scheme_place_names
from temporag.linking.tokens import FUNCTION_WORDS, Token, date_word_mask, name_key, tokenize
from temporag.timeutil import extract_time_mentions

#: Words joining the parts of one name ("Ministry of Defence and Security", "Saud bin Faisal").
CONNECTORS = frozenset("of and for the de da do dos del la le al el bin ibn van von der 's &".split())
_BREAK_CHARS = set(',?;:!()[]"')


class EntityLinker:
    """Finds entity mentions in questions and grounds them to KG entity ids (exact, then embedding).

    ``entity_vectors`` are the normalised label vectors (``embed.kg_name_vectors``); ``encoder`` embeds
    the leftover spans.  Both are optional for exact-only use (tests, quick looks).

    Two general rules, off by default (the paper-faithful runs link without them):
    ``date_words`` recognises date words before linking — a month name or abbreviation next to a number or
    after a preposition ("in Sept.", "on 3 Dec"), and bare numbers — so they never start a name;
    ``role_scheme`` grounds a leftover span that names a place (or its adjective: "Croatian" → Croatia)
    among the KG's ``Role (Place)`` entities of that place, so "the leader of Turkmenistan" can only land
    on a Turkmen role, never on a similar role of another country.
    """

    def __init__(
        self,
        kg,
        encoder=None,
        entity_vectors: np.ndarray | None = None,
        *,
        date_words: bool = False,
        role_scheme: bool = False,
    ) -> None:
        self.kg = kg
        self.encoder = encoder
        self.entity_vectors = entity_vectors
        self.date_words = date_words
        self.role_scheme = role_scheme
        self._span_memo: dict[str, np.ndarray] = {}

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
        for eid, label in enumerate(self.kg.entity_labels):
            for rank, form in enumerate(alias_forms(label)):
                key = name_key(form)
                if not key:
                    continue
                cand = (0 if rank == 0 else 1, -int(degree[eid]), eid)
                if key not in best or cand < best[key]:
                    best[key] = cand
        return {k: v[2] for k, v in best.items()}

    @cached_property
    def max_alias_len(self) -> int:
        return max(len(k) for k in self.aliases)

    @cached_property
    def role_words(self) -> frozenset[str]:
        """Normalised words of the KG's ``Role (Place)`` roles ("citizen", "military", "envoy")."""
        words = set()
        for label in self.kg.entity_labels:
            m = ROLE_PLACE.match(label)
            if m:
                words.update(t.norm for t in tokenize(m.group("role")))
        words -= self.relation_heads
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
    def exact_matches(self, tokens: Sequence[Token], blocked: Sequence[bool]) -> list[tuple[int, int, int]]:
        """(first token, end token, entity) of greedy longest alias matches, left to right."""
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
        if self.date_words:
            blocked = [b or d for b, d in zip(blocked, date_word_mask(tokens))]
        # a comma or question mark between two tokens ends any span
        breaks = [
            i > 0 and any(ch in _BREAK_CHARS for ch in question[tokens[i - 1].end : tokens[i].start])
            for i in range(n)
        ]
        exact = self.exact_matches(tokens, blocked)
        exact_at = {i: (i, j, e) for i, j, e in exact}
        covered = [False] * n
        for i, j, _ in exact:
            for k in range(i, j):
                covered[k] = True

        def is_name(k: int) -> bool:
            t = tokens[k]
            return not blocked[k] and (covered[k] or (t.capitalised and t.norm not in FUNCTION_WORDS))

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
    def ground(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """TECQA's Ground(m, E_KG): exact alias if there is one, else the label with the best cosine."""
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
            if self.encoder is None or self.entity_vectors is None:
                raise ValueError("embedding grounding needs an encoder and entity_vectors")
            vecs = self.encoder.encode([_strip_article(texts[i]) for i in todo], progress=False)
            sims = vecs @ self.entity_vectors.T
            best = sims.argmax(axis=1)
            ids[todo] = best
            scores[todo] = sims[np.arange(len(todo)), best]
        return ids, scores

    @cached_property
    def scheme_places(self) -> frozenset[str]:
        """This KG's places of the naming scheme (:func:`~temporag.linking.places.scheme_place_names`)."""
        return scheme_place_names(self.kg.entity_labels)

    def place_of(self, entity: int) -> str | None:
        """The place of a ``Role (Place)`` entity of the naming scheme, else None."""
        m = ROLE_PLACE.match(self.kg.entity_labels[entity])
        if m and m.group("place") in self.scheme_places:
            return m.group("place")
        return None

    def ground_role_scheme(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Spans naming a place (or its adjective) plus other words, grounded among that place's
        ``Role (Place)`` entities and the place itself by cosine; −1 where no place is named."""
        ids = np.full(len(texts), -1, dtype=np.int64)
        scores = np.zeros(len(texts), dtype=np.float32)
        todo = []
        for i, text in enumerate(texts):
            norms = [t.norm for t in tokenize(text) if t.norm != "the"]
            hit = None
            for size in range(min(len(norms), 4), 0, -1):
                for a in range(len(norms) - size + 1):
                    entry = self.places.get(tuple(norms[a : a + size]))
                    rest = [w for w in norms[:a] + norms[a + size :] if w not in FUNCTION_WORDS]
                    if entry is not None and rest:
                        hit = entry
                        break
                if hit:
                    break
            if hit:
                place, roles = hit
                todo.append((i, ([place] if place is not None else []) + roles))
        if todo and self.encoder is not None and self.entity_vectors is not None:
            vecs = self.encoder.encode([_strip_article(texts[i]) for i, _ in todo], progress=False)
            for (i, cands), v in zip(todo, vecs):
                sims = self.entity_vectors[cands] @ v
                best = int(sims.argmax())
                ids[i], scores[i] = cands[best], float(sims[best])
        return ids, scores

    def alternatives(
        self, texts: Sequence[str], chosen: Sequence[int], k: int, margin: float
    ) -> list[list[tuple[int, float]]]:
        """Other readings of uncertain mentions: up to ``k`` entities whose cosine with the span is within
        ``margin`` of the chosen entity's, best first, as (entity, gap).  A chosen ``Role (Place)`` entity
        keeps its place (the alternatives are that place and its roles), so "the Prime Minister of India"
        may also read "Head of Government (India)" but never another country's role."""
        if not len(texts) or k <= 0:
            return [[] for _ in texts]
        if self.encoder is None or self.entity_vectors is None:
            raise ValueError("entity alternatives need an encoder and entity_vectors")
        vecs = encode_memo(self.encoder, [_strip_article(t) for t in texts], self._span_memo)
        out = []
        for v, eid in zip(vecs, chosen):
            place = self.place_of(int(eid)) if self.role_scheme else None
            entry = self.places.get(name_key(place)) if place is not None else None
            if entry is not None:
                pool = np.asarray(([entry[0]] if entry[0] is not None else []) + entry[1], dtype=np.int64)
                sims = self.entity_vectors[pool] @ v
            else:
                pool, sims = None, self.entity_vectors @ v
            ref = float(self.entity_vectors[int(eid)] @ v)
            order = np.argsort(-sims, kind="stable")
            picked = []
            for j in order[: k + 1]:
                e = int(pool[j]) if pool is not None else int(j)
                gap = ref - float(sims[j])
                if e == int(eid):
                    continue
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
            if self.role_scheme:
                # only a role of *another* place is overruled; a named organisation the cosine found
                # ("Japan Self-Defense Forces") is kept
                role_ids, role_scores = self.ground_role_scheme(pending)
                found = (role_ids >= 0) & np.array([self.place_of(int(e)) is not None for e in ids])
                ids[found], scores[found] = role_ids[found], role_scores[found]
        out = []
        for _q, tokens, items in per_q:
            mentions = []
            for item in items:
                s, e, text = item[:3]
                if len(item) == 4:
                    eid, score, method = int(ids[item[3]]), float(scores[item[3]]), "embedding"
                    if score == 1.0:
                        method = "exact"
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
