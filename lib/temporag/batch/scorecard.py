"""Every claim of one or more runs, judged from their results.json: ``temporag claims`` and the book.

A run folder's ``results.json`` names its notebook; the notebook's package declares the claims
(``CLAIMS`` in ``<package>.claims``, found like its parameters); the verdicts are recomputed from the
per-question ``outcomes`` the run recorded, by the one rule, so a verdict never depends on a table typed
at run time.  A run recorded before the claims layer has no outcomes: :class:`NoRecords` says which, and
that the notebook must be re-run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from temporag.claims import rule
from temporag.claims.judge import corrected, interval_text, judge_all, mde_text, p_value, served_cost, summary
from temporag.claims.model import Claim
from temporag.methods import registry

#: verdicts a test gave (a change between two of these is flagged; "not run here" in one run is not)
JUDGED = {rule.REPRODUCED, rule.CONTRADICTED, rule.INCONCLUSIVE, rule.UNDERPOWERED, rule.NO_DIFFERENCE,
          rule.IDENTICAL, rule.HOLDS, rule.DOES_NOT_HOLD, rule.TOO_FEW, rule.PLUMBING}


class NoRecords(ValueError):
    """A run folder without the per-question outcomes its claims need."""


@dataclass(frozen=True)
class JudgedRun:
    notebook: str
    path: Path  # the results.json
    profile: str
    questions: str  # the question set the run used (split or questions_file)
    rows: list[dict]


def results_path(run: str | Path) -> Path:
    path = Path(run)
    return path / "results.json" if path.is_dir() else path


def declared(notebook: str) -> tuple[Claim, ...]:
    """The claims a notebook's package declares (none for a notebook that declares none)."""
    found = registry.find(notebook)
    return tuple((registry.declared_in((f"{found[1]}.claims",), "CLAIMS", tuple) if found else None) or ())


def _question_set(data: dict) -> str:
    params = data.get("parameters", {})
    return str(params.get("questions_file") or params.get("split") or params.get("datasets") or "")


def judge_run(run: str | Path, claims_of: Callable[[str], Sequence[Claim]] = declared) -> JudgedRun:
    """Judge every claim of one run folder (or results.json) from its recorded outcomes; a run recorded
    before the claims layer raises :class:`NoRecords` (one line: re-run this notebook)."""
    path = results_path(run)
    if not path.is_file():
        raise NoRecords(f"{run}: no results.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    notebook = data.get("notebook", path.parent.name)
    claims = tuple(claims_of(notebook))
    if claims and "outcomes" not in data:
        raise NoRecords(
            f"{path}: recorded before the claims layer (no per-question outcomes): re-run this notebook "
            f"(temporag run {notebook}) to judge its claims"
        )
    rows = judge_all(claims, data, served_cost(path), strict=False) if claims else []
    profile = str(data.get("parameters", {}).get("profile", ""))
    return JudgedRun(notebook, path, profile, _question_set(data), rows)


def across_runs(runs: Sequence[JudgedRun]) -> list[JudgedRun]:
    """The runs with Holm's correction taken over each paper's whole family, wherever its rows were run
    (a paper's "beats the baselines" row is judged on the leaderboard's run)."""
    rows = corrected([r for run in runs for r in run.rows])
    out, start = [], 0
    for run in runs:
        out.append(JudgedRun(run.notebook, run.path, run.profile, run.questions,
                             rows[start:start + len(run.rows)]))
        start += len(run.rows)
    return out


def side_by_side(first: JudgedRun, second: JudgedRun) -> list[dict]:
    """Two runs of one notebook, claim by claim: both verdicts and whether the verdict changed."""
    if first.notebook != second.notebook:
        raise ValueError(f"two runs of one notebook, not {first.notebook} and {second.notebook}")
    theirs = {r["claim"]: r for r in second.rows}
    out = []
    for mine in first.rows:
        other = theirs.get(mine["claim"])
        out.append({
            "claim": mine["claim"], "statement": mine["statement"],
            "verdict 1": mine["verdict"], "effect 1": mine["effect"], "n 1": mine["n"],
            "verdict 2": other["verdict"] if other else "—", "effect 2": other["effect"] if other else None,
            "n 2": other["n"] if other else 0,
            # a verdict that flips between judged ones; "not run here" in one run is not a change
            "changed": bool(other) and other["verdict"] != mine["verdict"]
            and {other["verdict"], mine["verdict"]} <= JUDGED,
        })
    return out


def _num(value, pattern: str = "{:+.3f}") -> str:
    return "" if value is None or value != value else pattern.format(value)


def interval(row: dict) -> str:
    return interval_text(row)


def text_table(rows: Sequence[dict], columns: Sequence[str]) -> str:
    """A plain-text table for the terminal (no pandas)."""
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    body = ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])


def verdict_lines(run: JudgedRun) -> list[dict]:
    """One run's rows as the terminal shows them."""
    return [
        {
            "tier": r["tier"], "claim": r["claim"], "where": r["where"], "verdict": r["verdict"],
            "paper's Δ": _num(r.get("paper Δ")), "effect": _num(r["effect"]), "interval": interval(r),
            "n": r["n"] or "", "MDE": mde_text(r), "p": p_value(r.get("p")),
            "p (Holm)": p_value(r.get("p_holm")), "best other": r["best"] or "",
        }
        for r in sorted(run.rows, key=lambda r: r["tier"])
    ]


def chance_summary(runs: Sequence[JudgedRun]) -> str:
    return summary([r for run in runs for r in run.rows])


RULE = rule.RULE
