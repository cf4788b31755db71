"""Profile resolution and the seeded stratified sample every notebook draws."""

from __future__ import annotations

from collections import Counter

import numpy as np

from temporag.methods.params import KIT, Parameter, Parameters, Served, at_least, choice
from temporag.notebook import start
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
    declared = Parameters(
        *(KIT[n] for n in ("profile", "sample_size", "reader_sample", "seed", "llm_model", "llm_base_url")),
        KIT["output_dir"],
        Parameter(
            "parse_sample", "Optional[int]", None, "", at_least(0, optional=True), {"smoke": 2, "paper": 20}
        ),
        Parameter(
            "reader_style",
            "Optional[str]",
            None,
            "",
            choice(None, "plain", "appendix-e"),
            {"paper": Served(offline="plain", served="appendix-e")},
        ),
    )
    params = {"profile": "paper", "output_dir": str(tmp_path / "o")}  # seed: TEMPORAG_SEED
    run = start("demo", params, questions=questions[:50], declared=declared)
    recorded = json.loads((tmp_path / "o" / "results.json").read_text())["parameters"]
    assert recorded["sample_size"] == 50  # the paper profile's None: every question, recorded as the count
    assert recorded["reader_sample"] == 200 and len(run.reader_questions) == 50  # offline reader: 200 at most
    assert recorded["seed"] == 3 and recorded["parse_sample"] == 20 and recorded["reader_style"] == "plain"
    assert recorded["llm_model"] == run.reader_model == "SmolLM2-135M-Instruct.Q4_1"
    assert recorded["llm_base_url"] is None  # None is its meaning: no endpoint, the embedded reader
    assert len(run.questions) == 50 and run.params["parse_sample"] == 20


def test_a_served_model_reads_every_question_of_the_paper_profile(questions, tmp_path, tmp_cache):
    """The kit's declared default for ``reader_sample``: 200 with the embedded reader, all when served."""
    params = {"profile": "paper", "llm_base_url": "http://127.0.0.1:9/v1", "output_dir": str(tmp_path / "o")}
    run = start("tour", params, questions=questions[:300])
    assert run.params["reader_sample"] == 300 == len(run.reader_questions)
