"""What the reading-group book shows for one notebook, declared beside the notebook's own code.

A method package declares its :class:`BookEntry` as ``book=`` of its registry entry
(:class:`~temporag.methods.registry.MethodEntry`); a kit notebook that is no method's declares ``BOOK``
beside its parameters (the tour in :mod:`temporag.methods.semantic.params`, the leaderboard in
:mod:`temporag.leaderboard.params`). The book (:mod:`temporag.batch.book`) finds them in the reading order,
so a new paper's first-page row is part of its package, and a notebook that declares none simply has no row.

Which number is "the comparable one" is chosen by reading the paper's committed ``results.json`` and
declared once, not guessed from key names: the LLM-free numbers (retrieval recall, the template reader's
Hits@1) are the kit's to stand behind; the reader-model number only shows the pipeline runs.  A paper's
printed headline is a :class:`PaperNumber`: the book's first page and the leaderboard's headline table
(:func:`temporag.leaderboard.report.headlines`) both read it from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporag.reported import PaperRef


@dataclass(frozen=True)
class Number:
    """One recorded number: ``metrics[metric]`` of the committed run ``figures/<run>/results.json``."""

    run: str
    metric: str
    label: str


@dataclass(frozen=True)
class PaperNumber:
    """A paper's printed headline beside the kit's: ``metrics[metric]`` of the committed
    ``figures/<ref.paper>/results.json`` is the kit under the paper's own protocol (its ``paper`` value
    the printed cell ``ref``); ``common`` is the leaderboard row that stands beside it under the common
    protocol (a MultiTQ method, or "<data set>/<method>"), ``rule`` the scoring rule of both numbers."""

    ref: PaperRef
    metric: str
    label: str
    common: str
    rule: str

    @property
    def run(self) -> str:
        """The committed run the metric is read from (a :class:`Number`'s ``run``)."""
        return self.ref.paper


@dataclass(frozen=True)
class Headline:
    """A paper's row on the book's first page."""

    comparable: tuple[Number, ...]  # LLM-free: the kit can stand behind these (recall, template reader)
    paper_number: Number | PaperNumber  # the paper's headline: this metric's recorded 'paper' value
    plumbing: Number  # the reader-model (SmolLM2) number: proves the pipeline runs, not comparable
    more: tuple[PaperNumber, ...] = ()  # further printed headlines for the leaderboard (other data sets)

    @property
    def printed(self) -> tuple[PaperNumber, ...]:
        """The paper's printed headlines the leaderboard's headline table sets the kit beside."""
        first = (self.paper_number,) if isinstance(self.paper_number, PaperNumber) else ()
        return (*first, *self.more)


@dataclass(frozen=True)
class BookEntry:
    """A notebook's pages in the book: their title and, for a paper, its first-page row (None: no row)."""

    title: str
    headline: Headline | None = None


def template_hits(method: str) -> Number:
    """The leaderboard's template-reader Hits@1 (strict) of ``method``, as its table labels the method."""
    return Number("leaderboard", f"leaderboard/{method}/template Hits@1 strict", "template-reader Hits@1")
