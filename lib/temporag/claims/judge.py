"""Claims judged on one run's per-question records: the table a notebook's Claims section shows.

A run records per-question outcomes as ``results.json["outcomes"][f"{measure}/{arm}"] = {quid: value}``
(``Results.outcomes``) and, where a profile leaves a measurement out on purpose (no reader in smoke),
``outcomes_skipped[measure] = why``.  A claim naming an outcome the run neither recorded nor skipped is a
bad declaration: :class:`MissingOutcome` names the claim and the key, never a silent *inconclusive*.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from temporag.claims import rule
from temporag.claims.model import BEST, Claim

COLUMNS = ("paper", "claim", "where", "statement", "paper's numbers", "protocol", "kit's own", "compared",
           "measure", "verdict", "n", "effect", "ci_low", "ci_high", "mde", "best", "note")


class MissingOutcome(KeyError):
    """A claim names an outcome the run did not record."""

    def __str__(self) -> str:  # KeyError quotes its argument; this one is a sentence
        return str(self.args[0])


def skipped_reason(key: str, skipped: Mapping[str, str]) -> str | None:
    """Why the run left ``key`` out on purpose (a skipped measure covers every arm under it)."""
    for measure, why in skipped.items():
        if key == measure or key.startswith(measure + "/"):
            return why
    return None


def _vectors(claim: Claim, outcomes: Mapping[str, Mapping], skipped: Mapping[str, str]):
    """The claim's arms as aligned arrays over the questions every arm recorded, or the skip reason."""
    for key in claim.outcome_keys():
        if key not in outcomes:
            why = skipped_reason(key, skipped)
            if why is not None:
                return None, why
            recorded = sorted({k.rsplit("/", 1)[0] for k in outcomes}) or ["none"]
            raise MissingOutcome(
                f"claim {claim.id}: the run recorded no outcome {key!r} (measures recorded: "
                f"{', '.join(recorded)})"
            )
    maps = [outcomes[k] for k in claim.outcome_keys()]
    quids = [q for q in maps[0] if all(q in m for m in maps[1:])]
    vectors = {
        arm: np.array([np.nan if m[q] is None else float(m[q]) for q in quids], dtype=float)
        for arm, m in zip(claim.arms, maps)
    }
    sizes = {len(m) for m in maps}
    note = "" if sizes == {len(quids)} else f"paired on the {len(quids)} questions all arms recorded"
    return vectors, note


def judge(claim: Claim, outcomes: Mapping[str, Mapping], skipped: Mapping[str, str] | None = None,
          cost: str = "") -> dict:
    """One claims-table row: the declaration and its verdict under :mod:`temporag.claims.rule`."""
    skipped = skipped or {}
    row = {
        "paper": claim.paper, "claim": claim.key, "where": claim.where, "statement": claim.statement,
        "paper's numbers": claim.paper_numbers, "protocol": claim.protocol,
        "kit's own": "kit's own" if claim.kits_own else "", "compared": claim.compared,
        "measure": claim.measure, "n": 0, "effect": None, "ci_low": None, "ci_high": None, "mde": None,
        "best": None, "note": "",
    }
    if claim.not_testable_here is not None:
        cost_note = f"; cost {cost}" if cost else ""
        return row | {"verdict": rule.NOT_TESTABLE,
                      "note": f"{claim.not_testable_here}; test: `{claim.command}`{cost_note}"}
    vectors, note = _vectors(claim, outcomes, skipped)
    if vectors is None:
        return row | {"verdict": rule.NOT_RUN, "note": note}
    if claim.direction == BEST:
        verdict = rule.best_setting(vectors, claim.paper_arm, claim.higher_is_better)
    else:
        verdict = rule.paired(vectors[claim.arms[0]], vectors[claim.arms[1]], claim.direction)
    notes = "; ".join(x for x in (note, verdict.note) if x)
    return row | {
        "verdict": verdict.verdict, "n": verdict.n, "effect": verdict.effect, "ci_low": verdict.low,
        "ci_high": verdict.high, "mde": verdict.mde, "best": verdict.best, "note": notes,
    }


def judge_all(claims: Sequence[Claim], data: Mapping, cost: str = "") -> list[dict]:
    """Every claim judged on one run's ``results.json`` content (its ``outcomes``)."""
    outcomes = data.get("outcomes", {})
    skipped = data.get("outcomes_skipped", {})
    return [judge(c, outcomes, skipped, cost) for c in claims]


def frame(rows: Sequence[dict]):
    import pandas as pd

    return pd.DataFrame(list(rows), columns=list(COLUMNS))


def difference_claims(rows: Sequence[dict]) -> int:
    """How many judged rows test a direction (the ones chance can call *reproduced*)."""
    judged = (rule.REPRODUCED, rule.CONTRADICTED, rule.INCONCLUSIVE)
    return sum(1 for r in rows if r["verdict"] in judged and r["best"] is None)


def summary(rows: Sequence[dict]) -> str:
    """The rule's chance line for these rows."""
    judged = [r["verdict"] for r in rows if r["verdict"] not in (rule.NOT_TESTABLE, rule.NOT_RUN)]
    return rule.chance_line(judged, difference_claims(rows))


def served_cost(results_json: str | Path) -> str:
    """What a served model reading every question of this notebook costs, from the run's own accounting
    (``temporag costs``); "" when the run recorded none."""
    from temporag.run import costs  # lazy: the claims layer reads costs only for untestable claims

    try:
        p = costs.read_run(results_json).projected()
    except Exception:  # noqa: BLE001 — a cost note is a courtesy: it never fails a claims table
        return ""
    if p["calls"] is None:
        return ""
    hours = "" if p["llm_hours"] is None else f", {p['llm_hours']:.1f} LLM h at this run's s/call"
    tokens = "" if p["tokens"] is None else f", {p['tokens']:,.0f} tokens"
    return f"{p['calls']:,.0f} calls{tokens}{hours} (`temporag costs`)"


def _number(value, pattern: str = "{:+.3f}") -> str:
    return "" if value is None or value != value else pattern.format(value)


def render_markdown(rows: Sequence[dict], with_rule: bool = True) -> str:
    """The claims as a Markdown table (verdict, effect, interval, n, MDE), the rule and the chance line
    under it."""
    lines = ["| claim | where | protocol | compared | verdict | effect | 95 % interval | n | MDE |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        interval = (f"[{_number(r['ci_low'])}, {_number(r['ci_high'])}]"
                    if r["ci_low"] is not None and r["ci_low"] == r["ci_low"] else "")
        own = " (kit's own)" if r["kit's own"] else ""
        best = f" (best: {r['best']})" if r["best"] else ""
        note = f"<br>{r['note']}" if r["note"] else ""
        lines.append(
            f"| {r['statement']}{own}{note} | {r['where']} | {r['protocol']} | {r['compared']}{best} | "
            f"**{r['verdict']}** | {_number(r['effect'])} | {interval} | {r['n'] or ''} | "
            f"{_number(r['mde'], '{:.3f}')} |"
        )
    text = "\n".join(lines)
    if with_rule:
        text += f"\n\n{summary(rows)}\n\n{rule.RULE}"
    return text
