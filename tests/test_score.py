"""``temporag score``: a researcher's own predictions under the leaderboard's protocol, beside the kit's.

A hand-made predictions file on four shared questions has scores worked out by hand; scoring the
committed leaderboard run's own predictions gives back the numbers that run recorded."""

from __future__ import annotations

import json

import numpy as np
import pytest

from temporag import cli
from temporag.leaderboard import submission
from temporag.leaderboard.roster import method_names
from temporag.notebook.outputs import FIGURES_DIR
from temporag.timeutil import day_of

COMMITTED = FIGURES_DIR / "leaderboard" / "results.json"


def _facts(kg, keep) -> list[int]:
    return np.flatnonzero(keep)[:3].tolist()


@pytest.fixture()
def hand_made(kg, tmp_path):
    """Four shared questions: a strict hit whose gold fact is second, a month answer to a year question
    (a strict hit at year granularity) with a 2005 fact first, a lenient-only hit, and a miss."""
    names = ("Jack Straw", "China", "Association of Southeast Asian Nations")
    straw, china, asean = (kg.label_to_entity[name] for name in names)
    no_straw = _facts(kg, (kg.s != straw) & (kg.o != straw))
    with_straw = _facts(kg, kg.s == straw)
    year_2005 = _facts(kg, (kg.t_start >= day_of("2005-01-01")) & (kg.t_end <= day_of("2005-12-31")))
    no_china = _facts(kg, ~np.isin(kg.s, [china, asean]) & ~np.isin(kg.o, [china, asean]))
    records = [
        {"quid": 3000000, "answers": ["Jack Straw", "Iran"], "evidence_ids": no_straw[:1] + with_straw},
        {"quid": 3000006, "answers": ["2005-03"], "evidence_ids": year_2005},
        {"quid": 3000018, "answers": ["Government of China"], "evidence_ids": no_china},
        {"quid": 3000036, "answers": ["Korea"], "evidence_ids": []},
    ]
    path = tmp_path / "my_method.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_hand_made_predictions_score_as_worked_out(hand_made, tmp_path, shared_data):
    out = tmp_path / "scores.json"
    assert cli.main(["score", str(hand_made), "--dataset", "multitq", "--no-kit", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    (row,) = data["rows"]
    assert row["method"] == "my_method" and row["n"] == 4
    expected = {"Hits@1 strict": 2 / 4, "Hits@1 lenient": 3 / 4, "recall@1": 1 / 4, "recall@5": 2 / 4}
    for column, value in {**expected, "recall@10": 2 / 4, "recall@20": 2 / 4}.items():
        assert row[column] == pytest.approx(value), column
        assert row[f"{column} CI low"] <= value <= row[f"{column} CI high"], column
    assert row["Hits@1 strict CI low"] < row["Hits@1 strict CI high"]
    by = {(r["group"], r["category"]): (r["n"], r["mean"]) for r in data["breakdown"]}
    assert by[("overall", "all")] == (4, 0.5)
    assert by[("qlabel", "Multiple")] == (1, 1.0) and by[("qlabel", "Single")] == (3, pytest.approx(1 / 3))
    assert by[("qtype", "first_last")] == (1, 1.0) and by[("qtype", "equal")] == (1, 0.0)


def test_the_kits_methods_are_scored_beside_on_the_same_questions(hand_made, kg, questions):
    subs = submission.load(hand_made)
    subs += submission.kit_submissions(COMMITTED, subs[0].quids)
    rows, by_category = submission.score(kg, questions, subs)
    assert rows.method.tolist() == ["my_method"] + [f"{m} (template reader)" for m in method_names()]
    assert (rows.n == 4).all()
    table = submission.breakdown_table(by_category)
    assert table.columns.tolist()[:3] == ["category", "n", "my_method"]


def test_the_committed_leaderboard_predictions_score_to_its_recorded_numbers(kg, questions):
    """The protocol is the leaderboard's: its own predictions (template-reader answers, first 20 ids)
    give back its recorded Hits@1, recall@k and intervals on all 954 shared questions."""
    committed = json.loads(COMMITTED.read_text())
    picked = ("TimeR4", "SAR (offline policy)")
    records = [r for r in committed["predictions"]["leaderboard"] if r["method"] in picked]
    rows, _ = submission.score(kg, questions, submission.submissions(records, "kit"))
    for row in rows.to_dict("records"):
        for column, recorded in (("Hits@1 strict", "template Hits@1 strict"), ("recall@20", "recall@20")):
            metric = committed["metrics"][f"leaderboard/{row['method']}/{recorded}"]
            assert row["n"] == metric["n"] == 954
            assert row[column] == pytest.approx(metric["value"], abs=1e-12)
            assert [row[f"{column} CI low"], row[f"{column} CI high"]] == pytest.approx(metric["ci95"])


def test_malformed_predictions_are_refused(tmp_path, kg, questions):
    with pytest.raises(submission.PredictionsError, match="needs 'quid' and 'answers'"):
        submission.submissions([{"quid": 1}], "m")
    with pytest.raises(submission.PredictionsError, match="predicted twice"):
        submission.submissions([{"quid": 1, "answers": []}, {"quid": 1, "answers": []}], "m")
    unknown = submission.submissions([{"quid": -5, "answers": ["x"]}], "m")
    with pytest.raises(submission.PredictionsError, match="not in the question set"):
        submission.score(kg, questions, unknown)
