"""The leaderboard notebook's declarations: its parameters (MultiTQ's samples, the document data sets'
samples, and whether the committed paper runs must all be there: the headline table reads them) and
its pages' title in the book (no first-page row: it compares the papers rather than reproducing one)."""

from __future__ import annotations

from temporag.methods.book_entry import BookEntry
from temporag.methods.params import KIT, Parameter, at_least, flag, with_kit

PARAMETERS = with_kit(
    KIT["ks"],
    KIT["datasets"],
    Parameter("document_sample", "Optional[int]", None, "questions per document data set",
              at_least(1, optional=True), {"smoke": 8, "paper": None}),
    Parameter("document_reader_sample", "Optional[int]", None, "questions read per method and set",
              at_least(0, optional=True), {"smoke": 1, "paper": 2}),
    Parameter("require_paper_runs", "Optional[bool]", None, "fail if a paper run is absent",
              flag(optional=True), {"smoke": False, "paper": True}),
    reader_sample=KIT["reader_sample"].but(help="MultiTQ questions read per method",
                                           profiles={"smoke": 1, "paper": 10}),
)

BOOK = BookEntry("Leaderboard: every method on one protocol")
