"""Claims as data, one verdict rule, the scorecard.

Each paper package declares its claims in ``methods/<paper>/claims.py`` (:class:`Claim`) and computes the
per-question outcomes they read there (``claims.outcomes``: :class:`Outcomes` by measure), which its
``record.outcomes`` stores (:func:`record_outcomes`); a notebook's last section judges the claims on the
run's per-question records (:func:`judge_claims`; both in :mod:`.record`, the layer's one writer);
``temporag claims`` and the book's first page judge the same declarations on any run folder.  Every
verdict comes from :mod:`temporag.claims.rule` (exact McNemar / Newcombe for 0/1 outcomes, paired
bootstrap for fractional ones, equivalence for plateaus, Holm within each paper), printed under every
table as :data:`RULE`.  This layer imports no method package.
"""

from temporag.claims.judge import MissingOutcome, judge, judge_all, render_markdown
from temporag.claims.model import BEST, PLATEAU, Claim, Measured, Outcomes
from temporag.claims.record import judge_claims, record_outcomes
from temporag.claims.rule import RULE, Verdict, best_setting, paired, plateau

__all__ = [
    "BEST", "PLATEAU", "RULE", "Claim", "Measured", "MissingOutcome", "Outcomes", "Verdict", "best_setting",
    "judge", "judge_all", "judge_claims", "paired", "plateau", "record_outcomes", "render_markdown",
]
