"""A paper's claim, declared once as data in its package (``methods/<paper>/claims.py``).

Why data and not code: the same declaration is judged in the notebook's Claims section, by
``temporag claims`` on any run folder, and on the book's first page, always by the one rule of
:mod:`temporag.claims.rule`; a claim can only choose *what* is compared (a measurement over
per-question records and two arms on the same questions), never *how* it is judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: the claimed direction of an "about best" claim (a peak at the paper's setting: depth, K1)
BEST = "best setting"
#: the claimed direction of a plateau claim: no further gain from the second arm's setting to the first's
PLATEAU = "plateau"
PROTOCOLS = ("paper", "fair")
#: the three tiers of a claims table (see :attr:`Claim.tier`)
PROXY, PLUMBING_TIER, KIT = "a · paper, LLM-free", "b · plumbing", "c · kit's own"


class PaperNumbers(str):
    """The paper's numbers as printed (a str), keeping the values in their declared order so the
    paper's own Δ (first − second) is computed, never typed."""

    values: tuple[float, ...] = ()

    def __new__(cls, text: str, values: Sequence[float] = ()):
        obj = super().__new__(cls, text)
        obj.values = tuple(float(v) for v in values)
        return obj


@dataclass(frozen=True)
class Claim:
    """One claim of one paper.

    ``measure`` names an outcome family the run records per question (``Results.outcomes``); the outcome
    of arm ``a`` is ``f"{measure}/{a}"``.  A difference claim has two ``arms`` (the method, then what the
    paper compares it with) and ``direction`` +1 (the first arm scores higher) or -1; a best-setting claim
    has every setting the run sweeps as ``arms``, ``direction=BEST`` and ``paper_arm`` the paper's own.
    A plateau claim (``direction=PLATEAU``) has two arms, the higher setting first, and is judged as
    equivalence within ``margin`` (the kit-wide :data:`~temporag.claims.rule.MARGIN` unless the paper
    states one).  ``reader`` marks a measure read by an LLM (the embedded 135M model offline: a
    *plumbing* row without a verdict; a served model's rows carry the paper's verdict).
    ``kits_own`` rows judge the kit's improvements and are never evidence for the paper's claim.
    ``subset`` = (label, value), e.g. ``("qlabel", "Multiple")``, judges the claim on the questions the
    run's recorded labels (:func:`question_labels`) give that value.
    ``not_testable_here`` (the reason) marks a claim that needs a served model: ``command`` is the exact
    command that tests it and ``costs`` the notebook whose run ``temporag costs`` projects."""

    paper: str  # the package / notebook name ("star_rag")
    key: str  # short, stable id within the paper ("rule-graph")
    where: str  # where the paper states it ("Table 4", "Fig. 5", "§4.2")
    statement: str
    paper_numbers: str = ""  # the paper's own numbers for this claim, as printed
    measure: str = ""  # outcome family (e.g. "answer_recall@10"); "" for a claim not testable here
    arms: tuple[str, ...] = ()
    direction: int | str = 1
    protocol: str = "fair"  # "paper": the paper's protocol; "fair": the kit's equal-budget test
    kits_own: bool = False
    paper_arm: str | None = None  # best-setting claims: the paper's setting
    higher_is_better: bool = True  # best-setting claims: which end of the measure is "best"
    section: str = ""  # the notebook section that measures it (the book links there)
    not_testable_here: str | None = None
    command: str = ""
    reader: bool = False  # the measure comes from an LLM reader or agent
    margin: float | None = None  # plateau / about-best: δ, where the paper's text gives one
    stands_in: str = ""  # tier (a): what the LLM-free measurement stands in for
    paper_delta_override: float | None = None  # the paper's Δ where no two printed values give it
    subset: tuple[str, str] | None = None  # (label, value): judge only the questions with that label

    def __post_init__(self) -> None:
        name = f"claim {self.paper}/{self.key}"
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"{name}: protocol {self.protocol!r} is not one of {PROTOCOLS}")
        if self.not_testable_here is not None:
            if not self.command:
                raise ValueError(f"{name}: a claim not testable here names the command that tests it")
            return
        if not self.measure:
            raise ValueError(f"{name}: names no measure")
        if self.direction == BEST:
            if self.paper_arm not in self.arms or len(self.arms) < 2:
                raise ValueError(f"{name}: a best-setting claim lists ≥ 2 settings including paper_arm")
        elif self.direction in (1, -1, PLATEAU):
            if len(self.arms) != 2:
                raise ValueError(f"{name}: a difference claim compares exactly two arms, got {self.arms}")
        else:
            raise ValueError(f"{name}: direction must be +1, -1, PLATEAU or BEST, got {self.direction!r}")

    @property
    def tier(self) -> str:
        """(a) the paper's claim on an LLM-free measurement, (b) plumbing (an LLM reader), (c) the kit's."""
        if self.kits_own:
            return KIT
        return PLUMBING_TIER if self.reader else PROXY

    @property
    def paper_delta(self) -> float | None:
        """The paper's own Δ (first arm − second) from its printed numbers; None when it prints no pair."""
        if self.paper_delta_override is not None:
            return self.paper_delta_override
        values = getattr(self.paper_numbers, "values", ())
        if self.direction in (1, -1, PLATEAU) and len(values) == 2:
            return values[0] - values[1]
        return None

    @property
    def id(self) -> str:
        return f"{self.paper}/{self.key}"

    def outcome_keys(self) -> tuple[str, ...]:
        """The per-question outcome vectors this claim reads (its arms, then its subset's labels)."""
        labels = (f"{LABELS}/{self.subset[0]}",) if self.subset else ()
        return tuple(f"{self.measure}/{arm}" for arm in self.arms) + labels

    @property
    def compared(self) -> str:
        """The comparison in words, for tables."""
        if self.not_testable_here is not None:
            return "—"
        if self.direction == BEST:
            return f"{self.paper_arm} vs the best other of {', '.join(self.arms)}"
        if self.direction == PLATEAU:
            return f"{self.arms[0]} ≈ {self.arms[1]}"
        sign = ">" if self.direction == 1 else "<"
        return f"{self.arms[0]} {sign} {self.arms[1]}"


def printed(paper: str, source: str, column: str, rows: dict[str, str], dataset: str | None = None,
            pattern: str = "{:.3f}") -> PaperNumbers:
    """The paper's numbers for a claim, read from ``temporag.reported`` (never typed in): e.g.
    ``"STAR-RAG 0.305 · no-rule 0.183 (Table 4, Acc.)"``; ``rows`` maps a short label to the row."""
    from temporag.reported.queries import lookup  # lazy: declarations import fast

    numbers = [lookup(paper, source, row, column, dataset) for row in rows.values()]
    values = " · ".join(f"{label} {pattern.format(v)}" for label, v in zip(rows, numbers))
    return PaperNumbers(f"{values} ({source}, {column}{', ' + dataset if dataset else ''})", numbers)


@dataclass(frozen=True)
class Outcomes:
    """One measure's per-question outcomes, as a package's ``claims.outcomes`` computes them and
    :func:`temporag.claims.record_outcomes` stores them (``Results.outcomes``): ``values`` maps each arm
    to ``{quid: value}`` or to a sequence aligned with ``quids``."""

    values: Mapping[str, Any]
    quids: Sequence | None = None


#: the measure under which a run records each question's labels (``labels/qlabel``: {quid: "Multiple"})
LABELS = "labels"


def question_labels(questions: Sequence, fields: Sequence[str] = ("qlabel", "qtype")) -> Outcomes:
    """Each question's labels (one "arm" per field), recorded beside the outcomes so a claim about a kind
    of question (``Claim.subset``) is judged on exactly those questions."""
    return Outcomes({f: [str(getattr(q, f, "")) for q in questions] for f in fields},
                    [q.quid for q in questions])


#: what a package's ``claims.outcomes`` returns, in recording order: each measure's outcomes, or the
#: reason this run leaves the measure out (``Results.skip_outcomes``)
Measured = dict[str, Outcomes | str]
