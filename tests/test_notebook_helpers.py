"""Profile resolution and the seeded stratified sample every notebook draws."""

from __future__ import annotations

from collections import Counter

import numpy as np

from temporag.notebook import resolve_defaults, start
from temporag.sampling import stratified_sample


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


def test_start_records_every_resolved_value(questions, tmp_path, tmp_cache, monkeypatch):
    import json

    monkeypatch.delenv("TEMPORAG_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("TEMPORAG_LLM_MODEL", raising=False)
    monkeypatch.setenv("TEMPORAG_SEED", "3")
    params = {
        "profile": "paper",
        "sample_size": None,
        "reader_sample": None,
        "parse_sample": None,
        "reader_style": None,
        "llm_model": None,
        "llm_base_url": None,
        "output_dir": str(tmp_path / "o"),
    }
    defaults = {
        "parse_sample": {"smoke": 2, "paper": 20},
        "reader_style": lambda profile, settings: "appendix-e" if settings.llm_base_url else "plain",
    }
    run = start("demo", params, questions=questions[:50], defaults=defaults)
    recorded = json.loads((tmp_path / "o" / "results.json").read_text())["parameters"]
    assert recorded["sample_size"] == 50  # the paper profile's None: every question, recorded as the count
    assert recorded["reader_sample"] == 200 and len(run.reader_questions) == 50  # offline reader: 200 at most
    assert recorded["seed"] == 3 and recorded["parse_sample"] == 20 and recorded["reader_style"] == "plain"
    assert recorded["llm_model"] == run.reader_model == "SmolLM2-135M-Instruct.Q4_1"
    assert recorded["llm_base_url"] is None  # None is its meaning: no endpoint, the embedded reader
    assert len(run.questions) == 50 and run.params["parse_sample"] == 20


def test_resolve_defaults_keeps_given_values():
    from temporag.config import get_settings

    resolved = resolve_defaults(
        {"parse_sample": 5, "heatmap": None},
        {"parse_sample": {"smoke": 2}, "heatmap": {"smoke": 0}},
        "smoke",
        get_settings(),
    )
    assert resolved == {"parse_sample": 5, "heatmap": 0}
