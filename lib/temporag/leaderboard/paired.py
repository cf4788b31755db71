"""Every leaderboard row against the semantic baseline, on the same questions, with the claims' rule.

A leaderboard of means cannot say whether a method beats the baseline or ties it within sampling noise;
the paired test of the per-question difference can (``temporag.claims.rule``: exact McNemar with
Newcombe's interval for 0/1 outcomes, the paired bootstrap for fractional ones, as for every claim), with
the smallest effect the questions could detect.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from temporag.claims import rule

BASELINE = "Semantic baseline"
MEASURES = ("recall (whole context)", "template Hits@1 strict")


def vs_baseline(method_scores: Sequence, baseline: str = BASELINE, measures: Sequence[str] = MEASURES):
    """One row per (method, measure): the paired effect over the baseline, its 95 % interval, n, MDE, p and
    the verdict the claims' rule gives "the method scores higher than the baseline" (uncorrected: each row
    is one comparison of its own)."""
    by_name = {s.name: s.per_question() for s in method_scores}
    if baseline not in by_name:
        raise KeyError(f"no {baseline!r} row among {list(by_name)}")
    rows = []
    for name, values in by_name.items():
        if name == baseline:
            continue
        for measure in measures:
            v = rule.paired(values[measure], by_name[baseline][measure], +1)
            rows.append({"method": name, "measure": measure, "effect": v.effect, "ci_low": v.low,
                         "ci_high": v.high, "n": v.n, "mde": v.mde, "p": v.p,
                         "verdict vs baseline": v.verdict})
    return pd.DataFrame(rows)

