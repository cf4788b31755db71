"""Offline entity and relation linking against a temporal KG's own names — no LLM needed.

TKGQA methods start by finding the question's entities and relation in the KG schema (TECQA §4.2.1
does it with three LLM prompts).  A laptop reader such as SmolLM2-135M cannot follow those prompts, so
this module does the same job deterministically, in three steps any method can reuse:

1. **Exact, longest-match linking** over every entity name in the forms MultiTQ writes them: the KG's
   underscored name, its spaced label, and for the many ``Role (Place)`` names ("Citizen (Norway)")
   the forms questions use — "Role of Place", "Place's Role", "Place Role".  Matching is on normalised
   tokens (case, accents, dots, plural -s and "the" ignored), so "the citizens of Norway" and
   "Prime Minister of India" link exactly.
2. **Embedding grounding for the rest** (TECQA Eq. 2): name-like spans left over — capitalised runs
   and role phrases built from the KG's own role vocabulary ("the Myanmar migrants", "Danish Ministry of
   Defence and Security") — go to the entity whose label has the highest cosine similarity.
3. **Relation grounding**: what is left of the question once entities, dates and question scaffolding
   are removed ("paid a visit") is grounded to the relation label with the highest cosine ("Make a visit").

The main-entity rule of TECQA's third prompt (subject if it is a specific entity, else the focus
object) is :func:`main_entity_index`; it only needs the mentions' positions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from temporag.timeutil import extract_time_mentions

_TOKEN = re.compile(r"[^\W_]+(?:[-.'\u2019][^\W_]+)*\.?")
_ROLE_PLACE = re.compile(r"^(?P<role>.+?) \((?P<place>[^()]+)\)$")
_BREAK_CHARS = set(',?;:!()[]"')

#: Question words, auxiliaries and other tokens that never start or make up a name on their own.
FUNCTION_WORDS = frozenset(
    """a an the who whom whose which what when where why how did does do done has have had was were is are
    be been being will would could can should shall may might must after before since until during in on at
    by for from to with without into onto about against of and or than as same first last next previous
    time times year years month months day days date exact tell me you please there this that these those
    it its his her their they he she we i our your also then once ever again so not no yes""".split()
)
#: Words joining the parts of one name ("Ministry of Defence and Security", "Saud bin Faisal").
CONNECTORS = frozenset("of and for the de da do dos del la le al el bin ibn van von der 's &".split())
#: Auxiliaries: an entity right after one is the grammatical subject ("When did Kitti ... ?").
AUXILIARIES = frozenset("did does do has have had was were is are will would could can".split())
#: Words that introduce a temporal constraint: the entity after them is an anchor, not the pivot.
CONSTRAINT_WORDS = frozenset("after before as than since until".split())
#: Wh-words; an entity right after one is the subject of an embedded clause ("... when X visited Y").
WH_WORDS = frozenset("who whom whose which what when where".split())
#: Question scaffolding dropped before relation grounding (it says how to ask, not what happened).
SCAFFOLD_WORDS = FUNCTION_WORDS | frozenset(
    """country countries person people someone somebody one ones whom which entity organisation organization
    could tell exact kind type same earliest latest final initial""".split()
)


def normalise_token(token: str) -> str:
    """Casefold, strip accents and dots, unify apostrophes, and cut a plural ending (both sides alike)."""
    text = unicodedata.normalize("NFKD", token)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = text.replace("\u2019", "'").replace(".", "")
    if text == "'s":
        return text
    if len(text) > 4 and text.endswith("ies"):
        return text[:-3] + "y"
    if len(text) > 3 and text.endswith("s") and not text.endswith(("ss", "'s")):
        return text[:-1]
    return text


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int
    norm: str

    @property
    def capitalised(self) -> bool:
        return self.text[:1].isupper() or self.text[:1].isdigit()


def tokenize(text: str) -> list[Token]:
    """Word tokens with character offsets; a possessive "'s" becomes its own token."""
    out: list[Token] = []
    for m in _TOKEN.finditer(text):
        word, start = m.group(0), m.start()
        if word.endswith("."):
            # keep the dot of initials ("W."), drop a sentence-final one
            if not (len(word) == 2 and word[0].isupper()):
                word = word[:-1]
        low = word.lower().replace("\u2019", "'")
        if len(word) > 2 and low.endswith("'s"):
            out.append(Token(word[:-2], start, start + len(word) - 2, normalise_token(word[:-2])))
            out.append(Token(word[-2:], start + len(word) - 2, start + len(word), "'s"))
        else:
            out.append(Token(word, start, start + len(word), normalise_token(word)))
    return out


def name_key(text: str) -> tuple[str, ...]:
    """The matching key of a name: normalised tokens without "the"."""
    return tuple(t.norm for t in tokenize(text) if t.norm != "the")


def alias_forms(label: str) -> list[str]:
    """The surface forms questions use for a KG label (the label first)."""
    forms = [label]
    m = _ROLE_PLACE.match(label)
    if m:
        role, place = m.group("role"), m.group("place")
        forms += [
            f"{role} of {place}",
            f"{place}'s {role}",
            f"{place} {role}",
            f"{role} in {place}",
            f"{role} from {place}",
        ]
    return forms


@dataclass(frozen=True)
class Mention:
    """One entity mention: where it is, what it was grounded to and how."""

    text: str
    start: int
    end: int
    entity: int
    score: float  # 1.0 for an exact name match, the cosine otherwise
    method: str  # "exact" | "embedding"
    constraint: bool = False  # introduced by after / before / as / than: an anchor entity


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
        """Place key (its name, or an adjective derived from it) → (the place entity, its role entities)."""
        roles: dict[str, list[int]] = {}
        for eid, label in enumerate(self.kg.entity_labels):
            m = _ROLE_PLACE.match(label)
            if m:
                roles.setdefault(m.group("place"), []).append(eid)
        lookup = self.kg.label_to_entity
        out: dict[tuple[str, ...], tuple[int | None, list[int]]] = {}
        for place, ids in roles.items():
            if not place[:1].isupper() or len(ids) < MIN_PLACE_ROLES:
                continue  # "(ethnic)", one-off qualifiers: not a place of the naming scheme
            entry = (lookup.get(place), ids)
            for form in [place, *place_adjectives(place)]:
                key = name_key(form)
                if key and (key not in out or len(out[key][1]) < len(ids)):
                    out[key] = entry
        return out

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
            m = _ROLE_PLACE.match(label)
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
        """Places of the role-naming scheme (capitalised, with at least MIN_PLACE_ROLES roles)."""
        count: dict[str, int] = {}
        for label in self.kg.entity_labels:
            m = _ROLE_PLACE.match(label)
            if m:
                count[m.group("place")] = count.get(m.group("place"), 0) + 1
        return frozenset(p for p, c in count.items() if p[:1].isupper() and c >= MIN_PLACE_ROLES)

    def place_of(self, entity: int) -> str | None:
        """The place of a ``Role (Place)`` entity of the naming scheme, else None."""
        m = _ROLE_PLACE.match(self.kg.entity_labels[entity])
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
        vecs = _encode_memo(self.encoder, [_strip_article(t) for t in texts], self._span_memo)
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
                        constraint=_after_constraint(tokens, s),
                    )
                )
            out.append(_dedupe(mentions))
        return out


#: A parenthesis is a place of the role-naming scheme when at least this many roles use it.
MIN_PLACE_ROLES = 3

_MONTH_WORDS = frozenset(
    """january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec""".split()
)
_DATE_PREPOSITIONS = frozenset("in on during since until till by of from early late mid between".split())


def date_word_mask(tokens: Sequence[Token]) -> list[bool]:
    """Tokens that are parts of a date even outside a full date: numbers, and month words next to a
    number or after a preposition ("in Sept.", "3 Dec", "Jan 5") — so a month never links as a name."""
    n = len(tokens)
    is_num = [t.norm.rstrip("stndrh").isdigit() or t.norm.isdigit() for t in tokens]
    out = list(is_num)
    for i, t in enumerate(tokens):
        word = t.norm.rstrip(".")
        if word not in _MONTH_WORDS or not t.capitalised:
            continue
        near_number = (i > 0 and is_num[i - 1]) or (i + 1 < n and is_num[i + 1])
        after_prep = i > 0 and tokens[i - 1].norm in _DATE_PREPOSITIONS
        if near_number or after_prep or t.text.endswith("."):
            out[i] = True
    return out


def place_adjectives(place: str) -> list[str]:
    """Adjectives English derives from a place name by the regular suffixes ("Croatia" → "Croatian",
    "Japan" → "Japanese", "Iraq" → "Iraqi", "Sweden" → "Swedish"); irregular ones are simply not made."""
    head, _, last = place.rpartition(" ")
    low = last.lower()
    if len(low) < 4 or not low.isalpha():
        return []
    stems = {low + "n", low + "ian", low + "ese", low + "i", low + "an"}
    if low.endswith(("a", "e", "o", "y")):
        stems |= {low[:-1] + "an", low[:-1] + "ian", low[:-1] + "ese", low[:-1] + "ish"}
    if low.endswith("en"):
        stems.add(low[:-2] + "ish")
    return [f"{head} {last[:1]}{s[1:]}".strip() for s in sorted(stems)]


def _strip_article(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", text.strip(), flags=re.I)


def _after_constraint(tokens: Sequence[Token], start: int) -> bool:
    """True when the span follows 'after', 'before', 'as', 'than' ... (allowing 'the' in between),
    or 'same month of' — the entity names the reference event, not the pivot."""
    i = start - 1
    if i >= 0 and tokens[i].norm == "the":
        i -= 1
    if i < 0:
        return False
    word = tokens[i].norm
    if word in CONSTRAINT_WORDS:
        return True
    return word == "of" and i >= 2 and tokens[i - 2].norm == "same"


def _dedupe(mentions: list[Mention]) -> list[Mention]:
    """Keep the first mention of each entity (a name can be repeated in one question)."""
    seen, out = set(), []
    for m in mentions:
        if m.entity in seen:
            continue
        seen.add(m.entity)
        out.append(m)
    return out


def main_entity_index(question: str, mentions: Sequence[Mention]) -> int | None:
    """TECQA's main-entity rule: the subject if it is a specific entity, else the focus object.

    The subject is a specific entity when a mention follows an auxiliary ("When did Kitti Wasinondh
    ...", "Who did Greece appeal to") or a wh-word opening a clause ("... month when the citizens of
    Tanzania supported ..."); otherwise the subject is the interrogative and the pivot is the first
    mention that does not name the reference event of an after/before/as constraint.
    """
    if not mentions:
        return None
    tokens = tokenize(question)
    starts = {t.start: i for i, t in enumerate(tokens)}
    for idx, m in enumerate(mentions):
        i = starts.get(m.start)
        if i is None or m.constraint:
            continue
        j = i - 1
        if j >= 0 and tokens[j].norm == "the":
            j -= 1
        if j >= 0 and (tokens[j].norm in AUXILIARIES or tokens[j].norm in WH_WORDS):
            return idx
    for idx, m in enumerate(mentions):
        if not m.constraint:
            return idx
    return 0


def predicate_text(question: str, mentions: Sequence[Mention]) -> str:
    """The question without its entity mentions, dates and question scaffolding: the relation phrase."""
    cut = [(m.start, m.end) for m in mentions] + [(t.start, t.end) for t in extract_time_mentions(question)]
    words = [
        t.text
        for t in tokenize(question)
        if not any(s < t.end and t.start < e for s, e in cut)
        and t.norm not in SCAFFOLD_WORDS
        and t.norm != "'s"
    ]
    return " ".join(words)


#: The offline counterpart of the mapping rules in TECQA's relation prompt (appendix F.1): a cue word in
#: the relation phrase (matched as a word prefix) narrows the candidates to the relation labels of one
#: family before the cosine decides among them.  A family that would leave no candidate is skipped.
RELATION_CUES: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    # (cue prefixes, label prefixes or fragments, how to match the label: "start" | "contains")
    (
        ("want", "wish", "plan", "aim", "intend", "intention", "interest", "hope", "willing"),
        ("express intent",),
        "start",
    ),
    (("ask", "urge", "call", "request", "appeal", "plead"), ("appeal", "make an appeal or request"), "start"),
    (("negotiat", "talk"), ("negotiat",), "contains"),
    (("meet", "meeting"), ("meet",), "contains"),
    (("visit", "travel", "trip"), ("make a visit", "host a visit"), "start"),
    (("attack", "force"), ("force", "violence", "fight", "attack"), "contains"),
    (("criticis", "criticiz", "condemn", "denounc"), ("criticize or denounce",), "start"),
    (("cooperat",), ("cooperat",), "contains"),
)


def cue_families(text: str) -> list[tuple[tuple[str, ...], str]]:
    """The relation-label families whose cue words occur in a relation phrase."""
    norms = [t.norm for t in tokenize(text)]
    fired = []
    for cues, labels, how in RELATION_CUES:
        if any(n.startswith(c) for n in norms for c in cues):
            fired.append((labels, how))
    return fired


_IRREGULAR_PAST = {
    "make": "made",
    "give": "gave",
    "seek": "sought",
    "bring": "brought",
    "hold": "held",
    "take": "took",
    "meet": "met",
    "send": "sent",
    "threaten": "threatened",
}


def relation_paraphrases(label: str) -> list[str]:
    """Forms a question uses for a relation name, made from the name itself: the name, its leading verb
    in the past tense ("Make optimistic comment" → "made optimistic comment") and the name without its
    leading verb ("optimistic comment"), so a past-tense or nominal phrasing meets its own relation."""
    words = label.split()
    if len(words) < 2 or not words[0].isalpha():
        return [label]
    verb = words[0].lower()
    if verb in _IRREGULAR_PAST:
        past = _IRREGULAR_PAST[verb]
    elif verb.endswith("e"):
        past = verb + "d"
    elif verb.endswith("y") and verb[-2:-1] not in "aeiou":
        past = verb[:-1] + "ied"
    else:
        past = verb + "ed"
    rest = " ".join(words[1:])
    return [label, f"{past} {rest}", rest]


class RelationGrounder:
    """TECQA's Ground(r, R_KG): a relation phrase → the relation label with the highest cosine.

    ``paraphrase_vectors`` (optional, rows: one per :func:`relation_paraphrases` form, ``paraphrase_of``
    their relation) score each relation by its best form instead of its name alone."""

    def __init__(
        self,
        kg,
        encoder,
        relation_vectors: np.ndarray,
        use_cues: bool = True,
        paraphrase_vectors: np.ndarray | None = None,
        paraphrase_of: np.ndarray | None = None,
    ) -> None:
        self.kg = kg
        self.encoder = encoder
        self.relation_vectors = relation_vectors
        self.use_cues = use_cues
        self.paraphrase_vectors, self.paraphrase_of = paraphrase_vectors, paraphrase_of
        self._phrase_memo: dict[str, np.ndarray] = {}

    def score_rows(
        self,
        texts: Sequence[str],
        allowed: Sequence[np.ndarray | None] | None = None,
        cues: bool | None = None,
    ) -> np.ndarray:
        """Cosine of each text with every relation label, −inf where ``allowed`` or a cue family rules a
        relation out, and 1.0 for a text that is exactly a relation label (n_texts × n_relations).
        ``cues`` overrides the grounder's ``use_cues`` (False: the whole phrase's cosine alone decides)."""
        use_cues = self.use_cues if cues is None else cues
        if not len(texts):
            return np.zeros((0, len(self.kg.relation_labels)), dtype=np.float32)
        exact = {name_key(label): i for i, label in enumerate(self.kg.relation_labels)}
        labels = [label.casefold() for label in self.kg.relation_labels]
        vecs = _encode_memo(self.encoder, [t or "event" for t in texts], self._phrase_memo)
        sims = np.asarray(vecs @ self.relation_vectors.T, dtype=np.float32)
        if self.paraphrase_vectors is not None:
            forms = vecs @ self.paraphrase_vectors.T
            for r in range(sims.shape[1]):
                sims[:, r] = np.maximum(sims[:, r], forms[:, self.paraphrase_of == r].max(axis=1))
        for i, text in enumerate(texts):
            row = sims[i]
            ok = np.ones(len(row), dtype=bool)
            if allowed is not None and allowed[i] is not None and len(allowed[i]):
                ok[:] = False
                ok[allowed[i]] = True
            if use_cues:
                for family, how in cue_families(text):
                    hit = np.array(
                        [
                            any(lab.startswith(f) if how == "start" else f in lab for f in family)
                            for lab in labels
                        ]
                    )
                    if (ok & hit).any():
                        ok &= hit
            row[~ok] = -np.inf
            rid = exact.get(name_key(text))
            if rid is not None and np.isfinite(row[rid]):
                row[rid] = 1.0
        return sims

    def ground(
        self, texts: Sequence[str], allowed: Sequence[np.ndarray | None] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Best relation per text (exact label wins); ``allowed`` optionally limits each text's candidates."""
        ids = np.zeros(len(texts), dtype=np.int64)
        scores = np.zeros(len(texts), dtype=np.float32)
        if not len(texts):
            return ids, scores
        rows = self.score_rows(texts, allowed)
        ids[:] = rows.argmax(axis=1)
        scores[:] = rows[np.arange(len(texts)), ids]
        return ids, scores


def _encode_memo(encoder, texts: Sequence[str], memo: dict[str, np.ndarray]) -> np.ndarray:
    """Embed texts, each distinct text once per grounder: a held-out check re-grounds the same phrases
    under several settings, and the cued and uncued scores share one embedding."""
    todo = list(dict.fromkeys(t for t in texts if t not in memo))
    if todo:
        memo.update(zip(todo, encoder.encode(todo, progress=False)))
    if not len(texts):
        return np.zeros((0, encoder.dim), dtype=np.float32)
    return np.stack([memo[t] for t in texts])


def top_relations(row: np.ndarray, m: int = 1, margin: float = 0.0) -> list[int]:
    """The best relation and up to ``m`` − 1 more whose score is within ``margin`` of it (best first):
    when grounding is uncertain the subgraph unites the close candidates instead of betting on one."""
    order = np.lexsort((np.arange(len(row)), -row))
    best = float(row[order[0]])
    return [int(r) for r in order[: max(m, 1)] if np.isfinite(row[r]) and best - float(row[r]) <= margin] or [
        int(order[0])
    ]
