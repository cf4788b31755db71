"""Parameters are validated where they enter: ``notebook.start()``, the method constructors and calls
(the runner's check is in test_runner_reliability).  Each error is one line naming the parameter, the
value and the values allowed; before, K = 0 wrote a chain recall of 0.0 into the figures and a negative
sample size failed with numpy's "negative dimensions"."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.notebook import start
from temporag.params import ParameterError, check


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"K": 0}, "parameter K = 0 is not allowed: K must be a whole number ≥ 1"),
        ({"K": 2.5}, "parameter K = 2.5 is not allowed"),
        (
            {"sample_size": -3},
            "parameter sample_size = -3 is not allowed: sample_size must be a whole number ≥ 1",
        ),
        ({"reader_sample": -1}, "reader_sample must be a whole number ≥ 0 or None"),
        ({"seed": "abc"}, "parameter seed = 'abc' is not allowed"),
        ({"ks": [0, 5]}, "ks must be a non-empty list of whole numbers ≥ 1"),
        ({"min_support": 1.5}, "min_support must be a share in (0, 1]"),
        ({"parser": "gpt"}, "parser must be one of 'offline', 'llm'"),
        ({"profile": "full"}, "profile must be one of 'smoke', 'paper'"),
        ({"llm_base_url": "localhost:8000"}, "llm_base_url must be None or an http(s):// URL"),
        ({"questions_file": "no/such/file.json"}, "questions_file must be None or the path of an existing"),
    ],
)
def test_start_rejects_bad_values_in_one_line(questions, tmp_path, tmp_cache, bad, message):
    params = {"profile": "smoke", "K": 40, "output_dir": str(tmp_path / "out"), **bad}
    with pytest.raises(ParameterError) as info:
        start("tecqa", params, questions=questions)
    text = str(info.value)
    assert text.startswith(f"parameter {next(iter(bad))} = ") and message in text and "\n" not in text
    assert not (tmp_path / "out").exists()  # nothing written for a run that cannot be right


def test_start_accepts_good_values(questions, tmp_path, tmp_cache):
    run = start(
        "tecqa",
        {
            "profile": "smoke",
            "K": 1,
            "N": 0,
            "sample_size": 5,
            "reader_sample": 0,
            "ks": [1, 5],
            "min_support": 1.0,
            "output_dir": str(tmp_path / "out"),
        },
        questions=questions,
    )
    assert len(run.questions) == 5 and run.reader_questions == []


def test_unknown_names_pass_the_value_check():
    check(my_own_knob=-1, another="x")  # a notebook's own knobs; the runner rejects undeclared names


def test_methods_check_their_parameters(kg):
    from temporag.methods.semantic import SemanticRetriever
    from temporag.methods.star_rag import StarRAG
    from temporag.methods.tecqa import TECQA

    with pytest.raises(ParameterError, match="parameter K = 0 is not allowed"):
        TECQA(kg).chains([], np.zeros((0, 384), dtype=np.float32), k=0)  # before any vector is loaded
    with pytest.raises(ParameterError, match="parameter N = -1 is not allowed"):
        TECQA(kg).chains([], np.zeros((0, 384), dtype=np.float32), k=40, n=-1)
    with pytest.raises(ParameterError, match="parameter parser = 'gpt' is not allowed"):
        TECQA(kg, parser="gpt")
    with pytest.raises(ParameterError, match="parameter k = 0 is not allowed"):
        SemanticRetriever.retrieve(object.__new__(SemanticRetriever), ["when?"], k=0)
    with pytest.raises(ParameterError, match="parameter K1 = 0 is not allowed"):
        StarRAG(kg=kg, graph=None, semantic=None, k1=0)
