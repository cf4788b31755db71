"""A researcher's own MultiTQ predictions scored under the leaderboard's protocol, beside the kit's methods.

A predictions file holds one record per question: ``quid``, ``answers`` (a ranked list; the first is the
Hits@1 answer) and, where the method retrieves, ``evidence_ids`` (ranked MultiTQ fact ids, rows of
``TemporalKG``); ``method`` names the method when one file holds several (else the file's name is used).
It is JSON Lines, a JSON list, or a ``results.json`` (its ``predictions``): the leaderboard's own
predictions have this shape, so the kit's methods are scored from the committed leaderboard run on the
same questions by the same code (their answers are the LLM-free template reader's, their evidence the
first 20 ids of their native context).

The protocol is the leaderboard's (:mod:`.scores`): strict Hits@1 (MultiTQ's rule) and lenient Hits@1
(TimeR4's), answer recall@k of the evidence, each with a percentile-bootstrap 95% interval, and a
breakdown by Single / Multiple and question type.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from temporag import limits
from temporag.answer import evaluate
from temporag.data import multitq
from temporag.leaderboard.report import pivot
from temporag.leaderboard.scores import KS, with_ci


class PredictionsError(ValueError):
    """A predictions file that cannot be scored (shape, unknown question, a method twice for a question);
    a bad record is named by its file and line."""


@dataclass
class Submission:
    """One method's predictions, aligned: ``answers[i]`` and ``evidence[i]`` are for ``quids[i]``."""

    method: str
    quids: list
    answers: list[list[str]]
    evidence: list[np.ndarray] | None  # None: the method gave no evidence
    places: list[str] | None = None  # where each record is ("file line 3"), for errors; None: unknown


_HINT = "expected a JSON list of predictions, JSON Lines or a results.json"
_FACT_ID_END = 2**63  # evidence ids are int64 rows of the KG
_SPACE = " \t\r\n"


def _records(path: Path) -> tuple[list, list[str]]:
    """(records, where each one is) of a predictions file, read within the kit's caps
    (:mod:`temporag.limits`): a JSON list and JSON Lines name a record's line, a results.json its place
    in ``predictions``."""
    from temporag.data._read import json_list_records, read_capped

    text = read_capped(path, _HINT)
    if text.lstrip("\ufeff" + _SPACE).startswith("["):
        pairs = list(json_list_records(text, path, _HINT))
        return [r for _, r in pairs], [f"{path} line {w.line}" for w, _ in pairs]
    try:
        whole = limits.loads(text)
    except (json.JSONDecodeError, limits.LimitError):
        whole = None
    if isinstance(whole, dict) and "predictions" in whole:
        if not isinstance(whole["predictions"], dict):
            raise PredictionsError(f"{path}: 'predictions' should map a run to its records")
        found = [
            (r, f"{path}: predictions[{run!r}][{i}]")
            for run, records in whole["predictions"].items()
            for i, r in enumerate(records if isinstance(records, list) else [records])
        ]
        return [r for r, _ in found], [w for _, w in found]
    return _json_lines(text, path)


def _json_lines(text: str, path: Path) -> tuple[list, list[str]]:
    records, places = [], []
    depth = limits.max_json_depth()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(limits.loads(line, depth))
        except json.JSONDecodeError as exc:
            raise PredictionsError(
                f"{path} line {lineno}: neither JSON nor JSON Lines ({exc.msg}) — {_HINT}"
            ) from None
        except limits.LimitError as exc:
            raise PredictionsError(f"{path} line {lineno}: {exc}") from None
        places.append(f"{path} line {lineno}")
    return records, places


def _checked(record, place: str) -> dict:
    """``record`` when it can be scored, else a :class:`PredictionsError` naming ``place`` and the field."""
    if not isinstance(record, dict) or "quid" not in record or "answers" not in record:
        raise PredictionsError(f"{place}: a prediction needs 'quid' and 'answers', got {record!r:.200}")
    quid, answers = record["quid"], record["answers"]
    if isinstance(quid, bool) or not isinstance(quid, (int, str)):
        raise PredictionsError(f"{place}: quid {quid!r:.80} should be an integer or a string")
    if not isinstance(answers, list) or not all(
        isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in answers
    ):
        raise PredictionsError(f"{place}: 'answers' {answers!r:.80} should be a list of strings")
    evidence = record.get("evidence_ids", [])
    if not isinstance(evidence, list):
        raise PredictionsError(f"{place}: 'evidence_ids' should be a list of MultiTQ fact ids")
    for i, fact in enumerate(evidence):
        if isinstance(fact, bool) or not isinstance(fact, int) or not 0 <= fact < _FACT_ID_END:
            raise PredictionsError(
                f"{place}: evidence_ids[{i}] = {fact!r:.40} is not a MultiTQ fact id (an integer ≥ 0)"
            )
    return record


def submissions(
    records: Sequence[dict], default_method: str, places: Sequence[str] | None = None
) -> list[Submission]:
    """Records grouped by method, in the order methods first appear; ``places`` names where each record
    is (default: "prediction i") for the error a malformed one gets."""
    where = list(places) if places is not None else [f"prediction {i}" for i in range(len(records))]
    grouped: dict[str, list[tuple[dict, str]]] = {}
    for record, place in zip(records, where):
        record = _checked(record, place)
        grouped.setdefault(str(record.get("method") or default_method), []).append((record, place))
    out = []
    for method, rows in grouped.items():
        seen: set = set()
        for r, place in rows:
            if r["quid"] in seen:
                raise PredictionsError(f"{place}: {method}: question {r['quid']!r:.40} is predicted twice")
            seen.add(r["quid"])
        given = ["evidence_ids" in r for r, _ in rows]
        if any(given) and not all(given):
            place = rows[given.index(False)][1]
            raise PredictionsError(f"{place}: {method}: evidence_ids given for some questions but not all")
        quids = [r["quid"] for r, _ in rows]
        answers = [[str(a) for a in r["answers"]] for r, _ in rows]
        evidence = [np.asarray(r["evidence_ids"], dtype=np.int64) for r, _ in rows] if all(given) else None
        out.append(Submission(method, quids, answers, evidence, [p for _, p in rows]))
    return out


def load(path: str | Path) -> list[Submission]:
    """Every method's predictions in a file (JSON Lines, a JSON list, or a results.json)."""
    path = Path(path)
    records, places = _records(path)
    return submissions(records, path.stem, places)


def per_question(kg, questions: Sequence, submission: Submission, ks: Sequence[int] = KS) -> dict:
    """The protocol's 0/1 series of one submission, aligned with ``questions`` (one per predicted quid)."""
    values = {
        "Hits@1 strict": evaluate.hits_at_k(submission.answers, questions, (1,), "strict")[1],
        "Hits@1 lenient": evaluate.hits_at_k(submission.answers, questions, (1,), "lenient")[1],
    }
    if submission.evidence is not None:
        for i, id_list in enumerate(submission.evidence):
            if len(id_list) and (id_list.min() < 0 or id_list.max() >= len(kg)):
                place = f"{submission.places[i]}: " if submission.places else ""
                raise PredictionsError(
                    f"{place}{submission.method}: evidence ids must be MultiTQ fact ids (0 to {len(kg) - 1})"
                )
        recall = evaluate.answer_recall_at_k(kg, submission.evidence, questions, list(ks))
        values.update({f"recall@{k}": recall[k] for k in ks})
    return values


def aligned_questions(submission: Submission, by_quid: dict) -> list:
    """The question records of a submission's quids, in its order; an unknown quid is an error."""
    unknown = [i for i, q in enumerate(submission.quids) if q not in by_quid]
    if unknown:
        place = f"{submission.places[unknown[0]]}: " if submission.places else ""
        shown = repr([submission.quids[i] for i in unknown[:3]])
        raise PredictionsError(
            f"{place}{submission.method}: {len(unknown)} question(s) not in the question set, "
            f"e.g. {shown[:120] + ('…' if len(shown) > 120 else '')}"
        )
    return [by_quid[q] for q in submission.quids]


def score(
    kg, all_questions: Sequence, subs: Sequence[Submission], ks: Sequence[int] = KS, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per method: each series' mean with its 95% interval and n; the long breakdown frame of
    strict Hits@1 by Single / Multiple and qtype, for :func:`report.pivot`)."""
    by_quid = {q.quid: q for q in all_questions}
    rows, frames = [], []
    for sub in subs:
        questions = aligned_questions(sub, by_quid)
        series = per_question(kg, questions, sub, ks)
        row: dict = {"method": sub.method, "n": len(questions)}
        for label, values in series.items():
            row[label], row[f"{label} CI low"], row[f"{label} CI high"] = with_ci(values, seed)
        rows.append(row)
        frame = evaluate.breakdown(questions, series["Hits@1 strict"], by=["qlabel", "qtype"], seed=seed)
        frame.insert(0, "method", sub.method)
        frames.append(frame)
    return pd.DataFrame(rows), pd.concat(frames, ignore_index=True)


def kit_submissions(leaderboard_results: Path, quids: Sequence) -> list[Submission]:
    """The kit's methods on exactly ``quids``, from a leaderboard run's predictions (empty when the run is
    missing or does not cover every one of them)."""
    if not Path(leaderboard_results).is_file():
        return []
    wanted = set(quids)
    records = [
        r
        for r in _records(Path(leaderboard_results))[0]
        if isinstance(r, dict) and isinstance(r.get("quid"), (int, str)) and r["quid"] in wanted
    ]
    out = []
    for sub in submissions(records, "kit"):
        if set(sub.quids) == wanted:
            order = {q: i for i, q in enumerate(sub.quids)}
            pick = [order[q] for q in quids]
            evidence = None if sub.evidence is None else [sub.evidence[i] for i in pick]
            method = f"{sub.method} (template reader)"
            out.append(Submission(method, list(quids), [sub.answers[i] for i in pick], evidence))
    return out


def display_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows as the leaderboard shows them: "mean [low, high]" per series."""
    series = [c for c in rows.columns if c not in ("method", "n") and "CI" not in c]
    out = rows[["method", "n"]].copy()
    for c in series:
        out[c] = [
            "—" if pd.isna(m) else f"{m:.3f} [{lo:.3f}, {hi:.3f}]"
            for m, lo, hi in zip(rows[c], rows[f"{c} CI low"], rows[f"{c} CI high"])
        ]
    return out


def breakdown_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Strict Hits@1 per category, one column per method (:func:`report.pivot`)."""
    return pivot(frame)


def score_file(
    path: str | Path,
    *,
    split: str = "test_sample_shared",
    questions_file: str | None = None,
    leaderboard_results: Path | None = None,
    ks: Sequence[int] = KS,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``temporag score``: the file's methods and, on the same questions, the kit's methods from the
    leaderboard run ``leaderboard_results`` (None: none) — the rows and the strict Hits@1 breakdown."""
    subs = load(path)
    kg = multitq.load_kg()
    questions = multitq.load_questions(split, questions_file=questions_file)
    if leaderboard_results is not None and len({tuple(s.quids) for s in subs}) == 1:
        subs = [*subs, *kit_submissions(leaderboard_results, subs[0].quids)]
    return score(kg, questions, subs, ks, seed)
