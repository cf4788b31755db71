"""What the claims layer writes into a run's results: the per-question outcomes a package measured and
the judged claims table.

The one module of the layer that writes into a :class:`~temporag.notebook.results.Results`, like each
package's ``record.py``; :mod:`.judge` only reads what was recorded and judges it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from temporag.claims import rule
from temporag.claims.judge import frame, judge_all, render_markdown, served_cost, summary
from temporag.claims.model import Claim, Measured


def record_outcomes(results, measured: Measured) -> None:
    """Store what a package's ``claims.outcomes`` measured, in its order: each measure's per-question
    vectors (``Results.outcomes``), or why this run leaves the measure out (``Results.skip_outcomes``).
    The packages' ``record.outcomes`` call it, so the claims are recorded the same way everywhere."""
    for measure, got in measured.items():
        if isinstance(got, str):
            results.skip_outcomes(measure, got)
        else:
            results.outcomes(measure, got.values, quids=got.quids)


def judge_claims(results, claims: Sequence[Claim], show: bool = True):
    """A notebook's Claims section in one call: judge ``claims`` on the run's recorded outcomes, record
    the table ``claims`` (the rule as its caption) and show it with the rule and the chance line under it.
    Raises :class:`~temporag.claims.judge.MissingOutcome` for a claim naming an outcome the run did not
    record."""
    rows = judge_all(claims, results.data, served_cost(Path(results.dir) / "results.json"))
    table = frame(rows)
    results.table("claims", table, caption=f"{rule.RULE}\n\n{summary(rows)}")
    if show:
        from IPython.display import Markdown, display

        display(Markdown(render_markdown(rows)))
    return None
