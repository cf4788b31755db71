"""Per-question outcomes recorded in results.json, and judged from it without re-running anything."""

from __future__ import annotations

import json

import numpy as np

from temporag.claims import Claim, Outcomes, judge_all, judge_claims, record_outcomes
from temporag.claims.rule import NOT_RUN, REPRODUCED
from temporag.notebook.results import Results


def test_outcomes_are_stored_per_question_one_line_per_vector(tmp_path, tmp_cache):
    res = Results("demo", {}, out_dir=tmp_path / "demo")
    vectors = {"A": [1.0, 0.0, np.nan], "B": {"q2": 0.0, "q1": 1.0}}
    res.outcomes("recall@10", vectors, quids=["q1", "q2", "q3"])
    res.skip_outcomes("hits@1", "no reader in smoke")
    text = (tmp_path / "demo" / "results.json").read_text()
    data = json.loads(text)
    assert data["outcomes"] == {
        "recall@10/A": {"q1": 1.0, "q2": 0.0, "q3": None},
        "recall@10/B": {"q2": 0.0, "q1": 1.0},
    }
    assert data["outcomes_skipped"] == {"hits@1": "no reader in smoke"}
    assert sum('"recall@10/' in line for line in text.splitlines()) == 2


def test_a_packages_measured_outcomes_are_stored_in_order(tmp_path, tmp_cache):
    """``claims.outcomes`` returns what to store; ``record_outcomes`` stores it as the direct calls did."""
    direct = Results("demo", {}, out_dir=tmp_path / "direct")
    direct.outcomes("recall@10", {"A": [1.0, 0.0], "B": [0.0, 1.0]}, quids=["q1", "q2"])
    direct.skip_outcomes("hits@1", "no reader in smoke")
    direct.outcomes("fig5", {"A": {"q2": 1.0}})
    stored = Results("demo", {}, out_dir=tmp_path / "stored")
    measured = {
        "recall@10": Outcomes({"A": [1.0, 0.0], "B": [0.0, 1.0]}, quids=["q1", "q2"]),
        "hits@1": "no reader in smoke",
        "fig5": Outcomes({"A": {"q2": 1.0}}),
    }
    record_outcomes(stored, measured)
    for key in ("outcomes", "outcomes_skipped"):
        assert json.dumps(stored.data[key]) == json.dumps(direct.data[key])


def test_judge_claims_records_the_table_with_the_rule_under_it(tmp_path, tmp_cache):
    res = Results("demo", {}, out_dir=tmp_path / "demo")
    quids = [f"q{i}" for i in range(100)]
    res.outcomes("recall@10", {"A": [1.0] * 100, "B": [0.0] * 40 + [1.0] * 60}, quids=quids)
    res.skip_outcomes("hits@1", "no reader in smoke")
    claims = [
        Claim("demo", "gain", "Table 1", "A beats B", measure="recall@10", arms=("A", "B")),
        Claim("demo", "read", "Table 1", "A reads better", measure="hits@1", arms=("A", "B")),
    ]
    judge_claims(res, claims, show=False)
    data = json.loads((tmp_path / "demo" / "results.json").read_text())
    rows = data["tables"]["claims"]["records"]
    assert [r["verdict"] for r in rows] == [REPRODUCED, NOT_RUN]
    assert rows[0]["effect"] == 0.4 and rows[0]["n"] == 100
    assert "exact McNemar" in data["tables"]["claims"]["caption"]
    assert [r["verdict"] for r in judge_all(claims, data)] == [REPRODUCED, NOT_RUN]  # recomputed
