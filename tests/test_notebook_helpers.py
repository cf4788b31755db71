"""Profile resolution and the seeded stratified sample every notebook draws."""

from __future__ import annotations

from collections import Counter

import numpy as np

from temporag.notebook import start, stratified_sample


def test_stratified_sample_is_exact_seeded_and_proportional(questions):
    a = stratified_sample(questions, 40, np.random.default_rng(0))
    b = stratified_sample(questions, 40, np.random.default_rng(0))
    assert len(a) == 40 and [q.quid for q in a] == [q.quid for q in b]
    counts = Counter(q.qtype for q in a)
    # shares of 954: equal 315 → 13.2, first_last 192 → 8.1, before_after 185 → 7.8, ...
    assert counts["equal"] == 13 and counts["first_last"] == 8 and counts["before_after"] == 8
    assert sum(counts.values()) == 40
    assert len(stratified_sample(questions, 6, np.random.default_rng(1))) == 6
    assert stratified_sample(questions, None, np.random.default_rng(0)) == questions


def test_start_resolves_profile_defaults(questions, tmp_path, tmp_cache):
    run = start(
        "demo",
        {
            "profile": "smoke",
            "sample_size": None,
            "reader_sample": 3,
            "seed": 2,
            "output_dir": str(tmp_path / "o"),
        },
        questions=questions,
    )
    assert run.params["sample_size"] == 40 and len(run.questions) == 40
    assert len(run.reader_questions) == 3 and set(run.reader_questions) <= set(run.questions)
    assert run.settings.seed == 2
    assert (tmp_path / "o" / "results.json").exists()
