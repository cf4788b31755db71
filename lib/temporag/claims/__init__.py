"""Claims as data, one verdict rule, the scorecard.

Each paper package declares its claims in ``methods/<paper>/claims.py`` (:class:`Claim`); a notebook's
last section judges them on the run's per-question records (:func:`judge_claims`); ``temporag claims``
and the book's first page judge the same declarations on any run folder.  Every verdict comes from
:mod:`temporag.claims.rule` (paired bootstrap interval of the per-question difference), printed under
every table as :data:`RULE`.  This layer imports no method package.
"""

from temporag.claims.judge import MissingOutcome, judge, judge_all, judge_claims, render_markdown
from temporag.claims.model import BEST, Claim
from temporag.claims.rule import RULE, Verdict, best_setting, paired

__all__ = [
    "BEST", "RULE", "Claim", "MissingOutcome", "Verdict", "best_setting", "judge", "judge_all",
    "judge_claims", "paired", "render_markdown",
]
