"""Claims judged on one run's per-question records: the table a notebook's Claims section shows.

A run records per-question outcomes as ``results.json["outcomes"][f"{measure}/{arm}"] = {quid: value}``
(``Results.outcomes``) and, where a profile leaves a measurement out on purpose (no reader in smoke),
``outcomes_skipped[measure] = why``.  A claim naming an outcome the run neither recorded nor skipped is a
bad declaration: :class:`MissingOutcome` names the claim and the key, never a silent *inconclusive*.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from temporag.claims import rule, stats
from temporag.claims.model import BEST, KIT, LABELS, PLATEAU, PLUMBING_TIER, Claim
from temporag.llm import costs

COLUMNS = ("paper", "claim", "tier", "where", "statement", "paper's numbers", "paper Δ", "protocol",
           "kit's own", "compared", "measure", "verdict", "n", "effect", "ci_low", "ci_high", "level", "mde",
           "p", "p_holm", "test", "best", "note")
#: the tier (a) label of a reader row when the run read with a served model
SERVED_READER = "a · paper, served reader"
#: outcomes recorded under this prefix are per-question digests of the evidence an arm handed the reader
EVIDENCE = "evidence:"


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


def _vectors(claim: Claim, outcomes: Mapping[str, Mapping], skipped: Mapping[str, str], strict: bool = True):
    """The claim's arms as aligned arrays over the questions every arm recorded, or the skip reason.  Not
    ``strict`` (a committed run judged later), an outcome the run never recorded reads "not run here":
    the run predates the claim's declaration."""
    for key in claim.outcome_keys():
        if key not in outcomes:
            why = skipped_reason(key, skipped)
            if why is not None:
                return None, why
            if not strict:
                return None, f"this run recorded no {key!r} (it predates the claim): re-run the notebook"
            recorded = sorted({k.rsplit("/", 1)[0] for k in outcomes}) or ["none"]
            raise MissingOutcome(
                f"claim {claim.id}: the run recorded no outcome {key!r} (measures recorded: "
                f"{', '.join(recorded)})"
            )
    maps = [outcomes[f"{claim.measure}/{arm}"] for arm in claim.arms]
    quids = [q for q in maps[0] if all(q in m for m in maps[1:])]
    if claim.subset:
        field, value = claim.subset
        labels = outcomes[f"{LABELS}/{field}"]
        everyone = len(quids)
        quids = [q for q in quids if labels.get(q) == value]
        maps = [{q: m[q] for q in quids} for m in maps]
    vectors = {
        arm: np.array([np.nan if m[q] is None else float(m[q]) for q in quids], dtype=float)
        for arm, m in zip(claim.arms, maps)
    }
    sizes = {len(m) for m in maps}
    note = "" if sizes == {len(quids)} else f"paired on the {len(quids)} questions all arms recorded"
    if claim.subset:
        note = f"the {len(quids)} of {everyone} questions with {claim.subset[0]} = {claim.subset[1]}"
    return vectors, note


def same_evidence(claim: Claim, outcomes: Mapping[str, Mapping]) -> int | None:
    """How many questions the claim's arms handed the reader identical evidence on, when the run recorded
    evidence digests for both arms and they agree on every shared question; None otherwise."""
    if len(claim.arms) != 2:
        return None
    keys = [f"{EVIDENCE}{claim.measure}/{arm}" for arm in claim.arms]
    if not all(k in outcomes for k in keys):
        return None
    first, second = (outcomes[k] for k in keys)
    shared = [q for q in first if q in second]
    if shared and all(first[q] == second[q] for q in shared):
        return len(shared)
    return None


def tier_of(claim: Claim, served: bool) -> str:
    """The claim's tier in this run: a reader row read by a served model carries the paper's verdict."""
    return SERVED_READER if claim.tier == PLUMBING_TIER and served else claim.tier


def judge(claim: Claim, outcomes: Mapping[str, Mapping], skipped: Mapping[str, str] | None = None,
          cost: str = "", served: bool = False, strict: bool = True) -> dict:
    """One claims-table row: the declaration and its verdict under :mod:`temporag.claims.rule`, before the
    family's Holm correction (:func:`judge_all` applies it)."""
    skipped = skipped or {}
    row = {
        "paper": claim.paper, "claim": claim.key, "tier": tier_of(claim, served), "where": claim.where,
        "statement": claim.statement, "paper's numbers": str(claim.paper_numbers),
        "paper Δ": claim.paper_delta, "protocol": claim.protocol,
        "kit's own": "kit's own" if claim.kits_own else "", "compared": claim.compared,
        "measure": claim.measure, "n": 0, "effect": None, "ci_low": None, "ci_high": None, "level": None,
        "mde": None, "p": None, "p_holm": None, "test": "", "best": None, "note": "",
        "if_significant": None, "otherwise": None, "why_otherwise": "",
    }
    if claim.not_testable_here is not None:
        cost_note = f"; cost {cost}" if cost else ""
        return row | {"verdict": rule.NOT_TESTABLE,
                      "note": f"{claim.not_testable_here}; test: `{claim.command}`{cost_note}"}
    vectors, note = _vectors(claim, outcomes, skipped, strict)
    if vectors is None:
        return row | {"verdict": rule.NOT_RUN, "note": note}
    margin = rule.MARGIN if claim.margin is None else claim.margin
    if claim.direction == BEST:
        verdict = rule.best_setting(vectors, claim.paper_arm, claim.higher_is_better, margin)
    elif claim.direction == PLATEAU:
        verdict = rule.plateau(vectors[claim.arms[0]], vectors[claim.arms[1]], margin)
    else:
        verdict = rule.paired(vectors[claim.arms[0]], vectors[claim.arms[1]], claim.direction,
                              claim.paper_delta)
    identical = same_evidence(claim, outcomes)
    if identical is not None:
        verdict = replace(verdict, verdict=rule.IDENTICAL, p=None, if_significant=None, note=(
            f"the arms handed the reader the same evidence on all {identical} questions (recorded digests)"))
    notes = "; ".join(x for x in (note, verdict.note) if x)
    return row | {
        "verdict": verdict.verdict, "n": verdict.n, "effect": verdict.effect, "ci_low": verdict.low,
        "ci_high": verdict.high, "level": verdict.level, "mde": verdict.mde, "p": verdict.p,
        "p_holm": verdict.p_holm, "test": verdict.test, "best": verdict.best, "note": notes,
        "if_significant": verdict.if_significant, "otherwise": verdict.otherwise,
        "why_otherwise": verdict.why_otherwise,
    }


#: the words of the kit's own rows
_KIT_WORDS = {rule.REPRODUCED: rule.HOLDS, rule.CONTRADICTED: rule.DOES_NOT_HOLD}


def corrected(rows: Sequence[dict]) -> list[dict]:
    """Holm's correction within each paper's family: tier (a) rows form the paper's family, the kit's own
    rows their own; plumbing rows get no verdict.  The adjusted p decides each tested row's word.  Rows
    already corrected may be corrected again over a larger family (several runs of one paper)."""
    out = [dict(r) for r in rows]
    families: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(out):
        if r["tier"] == PLUMBING_TIER:
            if r["verdict"] not in (rule.NOT_RUN, rule.NOT_TESTABLE):
                r["verdict"], r["p_holm"] = rule.PLUMBING, None
            continue
        if r.get("if_significant") is not None:
            family = "kit" if r["tier"] == KIT else "paper"
            families.setdefault((r["paper"], family), []).append(i)
    for indices in families.values():
        adjusted = stats.holm([out[i]["p"] for i in indices])
        for i, p in zip(indices, adjusted):
            r = out[i]
            r["p_holm"] = p
            r["verdict"] = r["if_significant"] if p < rule.ALPHA else r["otherwise"]
    for r in out:
        if r["verdict"] == rule.UNDERPOWERED and r["why_otherwise"] and r["why_otherwise"] not in r["note"]:
            r["note"] = "; ".join(x for x in (r["note"], r["why_otherwise"]) if x)
        if r["tier"] == KIT:
            r["verdict"] = _KIT_WORDS.get(r["verdict"], r["verdict"])
    return out


def served_run(data: Mapping) -> bool:
    """Whether the run read with a served model (an endpoint), not the embedded offline reader."""
    return bool((data.get("settings") or {}).get("llm_base_url"))


def judge_all(claims: Sequence[Claim], data: Mapping, cost: str = "", strict: bool = True) -> list[dict]:
    """Every claim judged on one run's ``results.json`` content (its ``outcomes``), Holm-corrected within
    each paper's family.  ``strict`` (the notebook judging its own run): a claim naming an outcome the run
    did not record is a bad declaration and raises :class:`MissingOutcome`."""
    outcomes = data.get("outcomes", {})
    skipped = data.get("outcomes_skipped", {})
    served = served_run(data)
    return corrected([judge(c, outcomes, skipped, cost, served, strict) for c in claims])


def frame(rows: Sequence[dict]):
    import pandas as pd

    return pd.DataFrame(list(rows), columns=list(COLUMNS))


def tested_claims(rows: Sequence[dict]) -> int:
    """How many rows a test decided (the ones Holm's correction covers)."""
    return sum(1 for r in rows if r.get("p_holm") is not None)


def counts(rows: Sequence[dict]) -> dict[str, dict[str, int]]:
    """Rows per tier and verdict, in the tiers' order."""
    out: dict[str, dict[str, int]] = {}
    for r in sorted(rows, key=lambda r: r["tier"]):
        by_verdict = out.setdefault(r["tier"], {})
        by_verdict[r["verdict"]] = by_verdict.get(r["verdict"], 0) + 1
    return out


def summary(rows: Sequence[dict]) -> str:
    """Counts per tier and verdict, and what Holm's correction guarantees for these rows."""
    judged = [r["verdict"] for r in rows if r["verdict"] not in (rule.NOT_TESTABLE, rule.NOT_RUN,
                                                                 rule.PLUMBING)]
    tiers = "; ".join(f"{tier}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
                      for tier, c in counts(rows).items())
    return f"{tiers}.\n\n{rule.chance_line(judged, tested_claims(rows))}"


def served_cost(results_json: str | Path) -> str:
    """What a served model reading every question of this notebook costs, from the run's own accounting
    (``temporag costs``); "" when the run recorded none."""
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


def p_value(value) -> str:
    """A p-value for tables: three significant digits, '<0.001' below."""
    if value is None or value != value:
        return ""
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def mde_text(row: dict) -> str:
    """The MDE for tables; "—" where no paired difference varies (no question differs, or all differ
    alike): an SD of zero gives an MDE of 0, which would read as "perfectly powered"."""
    return "—" if row.get("mde") == 0 else _number(row.get("mde"), "{:.3f}")


def interval_text(row: dict) -> str:
    """'[low, high]' with its level when it is not 95 %."""
    if row["ci_low"] is None or row["ci_low"] != row["ci_low"]:
        return ""
    level = row.get("level") or rule.LEVEL
    tag = "" if abs(level - rule.LEVEL) < 1e-9 else f" ({level:.0%})"
    return f"[{_number(row['ci_low'])}, {_number(row['ci_high'])}]{tag}"


def render_markdown(rows: Sequence[dict], with_rule: bool = True) -> str:
    """The claims as a Markdown table (verdict, effect, interval, n, MDE), the rule and the chance line
    under it."""
    lines = ["| tier | claim | where | compared | verdict | paper's Δ | effect | interval | n | MDE | p | "
             "p (Holm) |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: r["tier"]):
        best = f" (best other: {r['best']})" if r["best"] else ""
        note = f"<br>{r['note']}" if r["note"] else ""
        lines.append(
            f"| {r['tier']} | {r['statement']}{note} | {r['where']} | {r['compared']}{best} | "
            f"**{r['verdict']}** | {_number(r.get('paper Δ'))} | {_number(r['effect'])} | "
            f"{interval_text(r)} | {r['n'] or ''} | {mde_text(r)} | {p_value(r.get('p'))} | "
            f"{p_value(r.get('p_holm'))} |"
        )
    text = "\n".join(lines)
    if with_rule:
        text += f"\n\n{summary(rows)}\n\n{rule.RULE}"
    return text
