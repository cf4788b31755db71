"""Training pairs for the time-aware retriever (Algorithm 1 line 1, GenerateNegatives) from the KG alone.

MultiTQ's training questions are not available here, so questions are written from facts of the KG's
train period only (the first 322,958 lines of full.txt, up to 2012-08-06) with the kit's own templates
for the six MultiTQ question types; no evaluation question is ever used.  Each example is a question,
the fact that answers it and three hard negatives (§ Time-aware Retrieval: "time incorrect, content
incorrect, and both incorrect"):

* **time incorrect** — the positive's (s, p, o) with a date outside the question's time window, on a
  side (before / after the window) drawn at random among those the train period has room for: a real
  date of the same triple on that side when there is one, else a nearby date.  Always taking a later date
  (the first generation did, since "first" questions have nothing real before them) taught the retriever
  that earlier is better, and its retrievals drifted to 2005–06;
* **content incorrect** — the positive's date with other content, one of two kinds drawn at random: a
  real train-period triple of the question's given entity with another relation (**relation changed**),
  or a real triple of the same relation with another given entity (**entity changed**); its answer slot
  is never a gold answer.  Relation-changed negatives alone keep the question's entity in every negative,
  so the model learns to match relation, object and date and to drop the subject;
* **both incorrect** — the content negative's triple with the time negative's date.

The first/last template asks both forms ("first" and "last": 95 of the 192 shared first_last questions
say "last").  Every example carries its time ``window`` (the days on which a fact satisfies the question)
and its answer set, so tests can check that each negative really is wrong in the way its name says.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass

import numpy as np

from temporag.timeutil import TimeValue, iso_day, make_time

QTYPES = ("equal", "before_after", "first_last", "equal_multi", "after_first", "before_last")
TRAIN_END = 322_958  # MultiTQ's train split: full.txt lines [0, 322958), 2005-01-01 … 2012-08-06
NEGATIVE_KINDS = ("time", "content", "both")
CONTENT_KINDS = ("relation", "entity")  # what a content negative changes (see the module docstring)


@dataclass(frozen=True)
class FactSpec:
    """A quadruple that may or may not be in the KG (negatives are often counterfactual)."""

    s: int
    r: int
    o: int
    day: int


@dataclass(frozen=True)
class TrainingExample:
    question: str
    qtype: str
    answer_slot: str  # "subject" | "object" | "time"
    answers: tuple[str, ...]
    window: tuple[int, int]  # a fact satisfies the question's time constraint iff its day is in [lo, hi]
    positive: FactSpec
    negatives: dict  # kind -> FactSpec, kinds of NEGATIVE_KINDS

    def facts(self) -> list[tuple[FactSpec, int]]:
        """(fact, Y) pairs: the positive with Y = 1, then the three negatives with Y = 0."""
        return [(self.positive, 1)] + [(self.negatives[k], 0) for k in NEGATIVE_KINDS]


class _Groups:
    """Fact ids grouped by an integer key, each group in chronological order."""

    def __init__(self, keys: np.ndarray, days: np.ndarray, ids: np.ndarray) -> None:
        order = np.lexsort((ids, days, keys))
        self.keys, self.ids = keys[order], ids[order]

    @property
    def firsts(self) -> np.ndarray:
        """The first (earliest) fact of every group."""
        starts = np.flatnonzero(np.r_[True, self.keys[1:] != self.keys[:-1]])
        return self.ids[starts]

    @property
    def lasts(self) -> np.ndarray:
        """The last (latest) fact of every group."""
        ends = np.flatnonzero(np.r_[self.keys[1:] != self.keys[:-1], True])
        return self.ids[ends]

    def __call__(self, key: int) -> np.ndarray:
        lo, hi = np.searchsorted(self.keys, key, "left"), np.searchsorted(self.keys, key, "right")
        return self.ids[lo:hi]


def _say(value: TimeValue, rng: np.random.Generator) -> str:
    """A period as questions write it: '8 May 2007' / 'May 2007' / '2007', or in ISO form."""
    iso = value.iso
    if value.granularity == "year" or rng.random() < 0.35:
        return iso
    y, m = int(iso[:4]), int(iso[5:7])
    if value.granularity == "month":
        return f"{calendar.month_name[m]} {y}"
    return f"{int(iso[8:10])} {calendar.month_name[m]} {y}"


def _period(day: int, granularity: str) -> TimeValue:
    iso = iso_day(day)
    y, m, d = int(iso[:4]), int(iso[5:7]), int(iso[8:10])
    return make_time(y, m if granularity != "year" else None, d if granularity == "day" else None)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


class ExampleBuilder:
    """Writes training examples from the train period of a KG (seeded, reproducible)."""

    def __init__(self, kg, end: int = TRAIN_END, seed: int = 0) -> None:
        self.kg = kg
        self.end = min(end, len(kg))
        self.rng = np.random.default_rng(seed)
        ids = np.arange(self.end, dtype=np.int64)
        s, r, o, d = (
            kg.s[: self.end].astype(np.int64),
            kg.r[: self.end].astype(np.int64),
            kg.o[: self.end].astype(np.int64),
            kg.t_start[: self.end].astype(np.int64),
        )
        ne, nr = kg.n_entities, kg.n_relations
        self.by_ro = _Groups(r * ne + o, d, ids)
        self.by_sr = _Groups(s * nr + r, d, ids)
        self.by_triple = _Groups(kg.triple_of_fact[: self.end].astype(np.int64), d, ids)
        self.by_r = _Groups(r, d, ids)
        self.by_entity = _Groups(np.concatenate([s, o]), np.concatenate([d, d]), np.concatenate([ids, ids]))
        self.first_day, self.last_day = int(d.min()), int(d.max())
        self._first_of_triple, self._first_of_ro = self.by_triple.firsts, self.by_ro.firsts
        self._last_of_triple, self._last_of_ro = self.by_triple.lasts, self.by_ro.lasts

    # -- helpers ----------------------------------------------------------------------------------
    def _lab(self, e: int) -> str:
        return self.kg.entity_labels[e]

    def _rel(self, r: int) -> str:
        return self.kg.relation_labels[r].lower()

    def _spec(self, f: int) -> FactSpec:
        kg = self.kg
        return FactSpec(int(kg.s[f]), int(kg.r[f]), int(kg.o[f]), int(kg.t_start[f]))

    def _days(self, facts: np.ndarray) -> np.ndarray:
        return self.kg.t_start[facts].astype(np.int64)

    def _time_negative_day(self, f: int, window: tuple[int, int]) -> int | None:
        """A day outside the window, on a side drawn among those with room: a real date of the same triple
        on that side if there is one, else a nearby day."""
        lo, hi = window
        days = np.unique(self._days(self.by_triple(int(self.kg.triple_of_fact[f]))))
        sides = []
        if lo - 1 >= self.first_day:
            sides.append((days[days < lo], max(self.first_day, lo - int(self.rng.integers(1, 91)))))
        if hi + 1 <= self.last_day:
            sides.append((days[days > hi], min(self.last_day, hi + int(self.rng.integers(1, 91)))))
        if not sides:
            return None
        real, nearby = sides[int(self.rng.integers(len(sides)))]
        return int(self.rng.choice(real)) if len(real) else int(nearby)

    def _content_negative(self, pos: FactSpec, slot: str, answer_ids: set[int]) -> tuple[int, int, int]:
        """Other content with no gold answer in the answer slot: the entity changed (same relation) or the
        relation changed (same entity), drawn at random; the other kind when the drawn one has no fact."""
        kinds = list(CONTENT_KINDS) if self.rng.random() < 0.5 else list(reversed(CONTENT_KINDS))
        for kind in kinds:
            change = self._entity_changed if kind == "entity" else self._relation_changed
            picked = change(pos, slot, answer_ids)
            if picked is not None:
                return picked
        kg = self.kg
        given = pos.s if slot in ("object", "time") else pos.o
        r = int(self.rng.choice([x for x in range(kg.n_relations) if x != pos.r]))
        other = int(self.rng.choice([x for x in range(kg.n_entities) if x not in answer_ids and x != given]))
        return (other, r, given) if slot == "subject" else (given, r, other)

    def _relation_changed(
        self, pos: FactSpec, slot: str, answer_ids: set[int]
    ) -> tuple[int, int, int] | None:
        """Another triple of the question's given entity, with another relation and no gold answer."""
        kg = self.kg
        given = pos.s if slot in ("object", "time") else pos.o
        cand = self.by_entity(given)
        cand = cand[kg.r[cand] != pos.r]
        if slot == "subject":
            cand = cand[(kg.o[cand] == given) & ~np.isin(kg.s[cand], list(answer_ids))]
        elif slot == "object":
            cand = cand[(kg.s[cand] == given) & ~np.isin(kg.o[cand], list(answer_ids))]
        else:
            cand = cand[kg.s[cand] == given]
        if not len(cand):
            return None
        f = int(self.rng.choice(cand))
        return int(kg.s[f]), int(kg.r[f]), int(kg.o[f])

    def _entity_changed(self, pos: FactSpec, slot: str, answer_ids: set[int]) -> tuple[int, int, int] | None:
        """A real triple of the same relation whose given entity (the subject of "when / whom did s …",
        the object of "who would … o") is another one, and whose answer slot is no gold answer."""
        kg = self.kg
        if slot == "time":  # the same (p, o) by another subject: only the subject tells them apart
            group = self.by_ro(int(pos.r) * kg.n_entities + int(pos.o))
            cand = group[kg.s[group] != pos.s]
            if len(cand):
                f = int(self.rng.choice(cand))
                return int(kg.s[f]), int(kg.r[f]), int(kg.o[f])
        group = self.by_r(int(pos.r))
        cand = group[self.rng.integers(0, len(group), size=min(64, len(group)))]
        if slot == "subject":
            cand = cand[(kg.o[cand] != pos.o) & ~np.isin(kg.s[cand], list(answer_ids))]
        else:
            cand = cand[(kg.s[cand] != pos.s) & ~np.isin(kg.o[cand], list(answer_ids))]
        if not len(cand):
            return None
        f = int(cand[0])
        return int(kg.s[f]), int(kg.r[f]), int(kg.o[f])

    def _example(self, question, qtype, slot, answers, answer_ids, window, f) -> TrainingExample | None:
        pos = self._spec(f)
        t_day = self._time_negative_day(f, window)
        if t_day is None:
            return None
        cs, cr, co = self._content_negative(pos, slot, answer_ids)
        negatives = {
            "time": FactSpec(pos.s, pos.r, pos.o, t_day),
            "content": FactSpec(cs, cr, co, pos.day),
            "both": FactSpec(cs, cr, co, t_day),
        }
        return TrainingExample(question, qtype, slot, tuple(answers), window, pos, negatives)

    def _who(self, f: int, window: tuple[int, int], pick) -> tuple[list[str], set[int], np.ndarray]:
        """Subjects of the (p, o) facts in the window (``pick`` narrows to first / last)."""
        kg = self.kg
        group = self.by_ro(int(kg.r[f]) * kg.n_entities + int(kg.o[f]))
        days = self._days(group)
        group = group[(days >= window[0]) & (days <= window[1])]
        group = pick(group) if pick else group
        ids = {int(x) for x in kg.s[group]}
        return sorted(self._lab(e) for e in ids), ids, group

    # -- the six templates --------------------------------------------------------------------------
    def equal(self, f: int):
        kg, rng = self.kg, self.rng
        gran = str(rng.choice(["day", "month", "year"]))
        p = _period(int(kg.t_start[f]), gran)
        when = ("on " if gran == "day" else "in ") + _say(p, rng)
        s, r, o = self._lab(int(kg.s[f])), self._rel(int(kg.r[f])), self._lab(int(kg.o[f]))
        window = (p.first_day, p.last_day)
        if rng.random() < 0.3:  # time answer: only when the triple happened in one period
            days = self._days(self.by_triple(int(kg.triple_of_fact[f])))
            if days.min() < p.first_day or days.max() > p.last_day:
                return None
            q = f"In which {gran} did {s} {r} {o}?" if gran != "day" else f"When did {s} {r} {o}?"
            return self._example(q, "equal", "time", [p.iso], set(), window, f)
        if rng.random() < 0.5:
            answers, ids, _ = self._who(f, window, None)
            q = rng.choice([f"Who would {r} {o} {when}?", f"{_cap(when)}, who would {r} {o}?"])
            return self._example(q, "equal", "subject", answers, ids, window, f)
        group = self.by_sr(int(kg.s[f]) * kg.n_relations + int(kg.r[f]))
        days = self._days(group)
        ids = {int(x) for x in kg.o[group[(days >= window[0]) & (days <= window[1])]]}
        q = rng.choice([f"Whom did {s} {r} {when}?", f"{_cap(when)}, to whom did {s} {r}?"])
        return self._example(q, "equal", "object", sorted(self._lab(e) for e in ids), ids, window, f)

    def before_after(self, f: int):
        kg, rng = self.kg, self.rng
        day = int(kg.t_start[f])
        gran = str(rng.choice(["day", "month", "year"]))
        side = str(rng.choice(["before", "after"]))
        gap = int(rng.integers(1, 120))
        p = _period(day + gap if side == "before" else day - gap, gran)
        if not (p.first_day > day if side == "before" else p.last_day < day):
            return None
        if p.first_day < self.first_day or p.last_day > self.last_day:
            return None
        window = (self.first_day, p.first_day - 1) if side == "before" else (p.last_day + 1, self.last_day)
        r, o = self._rel(int(kg.r[f])), self._lab(int(kg.o[f]))
        answers, ids, _ = self._who(f, window, None)
        said = _say(p, rng)
        q = rng.choice([f"Who would {r} {o} {side} {said}?", f"{_cap(side)} {said}, who would {r} {o}?"])
        return self._example(q, "before_after", "subject", answers, ids, window, f)

    def first_last(self, f: int):
        """ "When did s first / last p o?" / "Who was the first / last to p o?".  The event is drawn among the
        first (last) events of their triple / (p, o) pair, not among all facts: drawing facts favours busy
        pairs, whose first event is almost always in the KG's first weeks, and the retriever would learn
        "first" → January 2005 instead of reading the question.  "First" and "last" are drawn alike."""
        kg, rng = self.kg, self.rng
        order = str(rng.choice(["first", "last"]))
        if rng.random() < 0.5:  # when did s first / last ...: the answer period holds that date
            pool = self._first_of_triple if order == "first" else self._last_of_triple
            event = int(rng.choice(pool))
            s, r, o = self._lab(int(kg.s[event])), self._rel(int(kg.r[event])), self._lab(int(kg.o[event]))
            gran = str(rng.choice(["day", "month", "year"]))
            p = _period(int(kg.t_start[event]), gran)
            q = {
                "day": f"When did {s} {order} {r} {o}?",
                "month": f"In which month did {s} {order} {r} {o}?",
                "year": f"In which year did {s} {order} {r} {o}?",
            }[gran]
            return self._example(q, "first_last", "time", [p.iso], set(), (p.first_day, p.last_day), event)
        event = int(rng.choice(self._first_of_ro if order == "first" else self._last_of_ro))
        r, o = self._rel(int(kg.r[event])), self._lab(int(kg.o[event]))
        day = int(kg.t_start[event])
        window = (self.first_day, day) if order == "first" else (day, self.last_day)
        answers, ids, _ = self._who(event, window, None)
        q = rng.choice([f"Who was the {order} to {r} {o}?", f"Who {order} would {r} {o}?"])
        return self._example(q, "first_last", "subject", answers, ids, window, event)

    def equal_multi(self, f: int):
        kg, rng = self.kg, self.rng
        gran = str(rng.choice(["month", "year"]))
        p = _period(int(kg.t_start[f]), gran)
        if p.first_day < self.first_day or p.last_day > self.last_day:
            return None
        group = self.by_ro(int(kg.r[f]) * kg.n_entities + int(kg.o[f]))
        days = self._days(group)
        group = group[(days >= p.first_day) & (days <= p.last_day)]
        order = str(rng.choice(["first", "last"]))
        pos = int(group[0] if order == "first" else group[-1])
        t = int(kg.t_start[pos])
        window = (p.first_day, t) if order == "first" else (t, p.last_day)
        answers, ids, _ = self._who(pos, (t, t), None)
        r, o, said = self._rel(int(kg.r[f])), self._lab(int(kg.o[f])), _say(p, rng)
        q = rng.choice(
            [f"Who was the {order} to {r} {o} in {said}?", f"In {said}, who {order} would {r} {o}?"]
        )
        return self._example(q, "equal_multi", "subject", answers, ids, window, pos)

    def _relative(self, f: int, qtype: str):
        """after_first / before_last: the reference event is fact f; the answer is the next / previous
        (p, o) event by another subject.  Written with the date (the rewrite's form) or the subject."""
        kg, rng = self.kg, self.rng
        group = self.by_ro(int(kg.r[f]) * kg.n_entities + int(kg.o[f]))
        ref_day, ref_s = int(kg.t_start[f]), int(kg.s[f])
        days = self._days(group)
        others = kg.s[group] != ref_s
        after = qtype == "after_first"
        cand = group[(days > ref_day) & others] if after else group[(days < ref_day) & others]
        if not len(cand):
            return None
        pos = int(cand[0] if after else cand[-1])
        t = int(kg.t_start[pos])
        window = (ref_day + 1, t) if after else (t, ref_day - 1)
        answers, ids, _ = self._who(pos, (t, t), None)
        word, order = ("After", "first") if after else ("Before", "last")
        ref = _say(_period(ref_day, "day"), rng) if rng.random() < 0.75 else self._lab(ref_s)
        r, o = self._rel(int(kg.r[f])), self._lab(int(kg.o[f]))
        q = rng.choice(
            [
                f"{word} {ref}, who was the {order} to {r} {o}?",
                f"Who {order} would {r} {o} {word.lower()} {ref}?",
            ]
        )
        return self._example(q, qtype, "subject", answers, ids, window, pos)

    def after_first(self, f: int):
        return self._relative(f, "after_first")

    def before_last(self, f: int):
        return self._relative(f, "before_last")

    def build(self, n: int, tries: int = 30) -> list[TrainingExample]:
        """``n`` examples, the six question types in turn, from random train-period facts."""
        out = []
        for i in range(n):
            make = getattr(self, QTYPES[i % len(QTYPES)])
            for _ in range(tries):
                ex = make(int(self.rng.integers(0, self.end)))
                if ex is not None:
                    out.append(ex)
                    break
        return out


def build_examples(kg, n: int, seed: int = 0, end: int = TRAIN_END) -> list[TrainingExample]:
    """``n`` training examples (questions, positives, three negatives each) from facts [0, end)."""
    return ExampleBuilder(kg, end=end, seed=seed).build(n)
