"""Parameters are validated where they enter: ``notebook.start()``, the runner (every notebook's
declared parameters, before any kernel starts), the method constructors and calls.  Each error is one
line naming the parameter, the value and the values allowed: unchecked, K = 0 wrote a chain recall of
0.0 into the figures and a negative sample size failed with numpy's "negative dimensions"."""

from __future__ import annotations

import json

import numpy as np
import pytest

from temporag.methods import registry
from temporag.methods.params import ParameterError, check
from temporag.methods.registry import check_given, declarations
from temporag.notebook import start
from temporag.run import runner
from temporag.run.runner import reproduce


@pytest.mark.parametrize(
    ("notebook", "bad", "message"),
    [
        ("tecqa", {"K": 0}, "parameter K = 0 is not allowed: K must be a whole number ≥ 1"),
        ("tecqa", {"K": 2.5}, "parameter K = 2.5 is not allowed"),
        (
            "tecqa",
            {"sample_size": -3},
            "parameter sample_size = -3 is not allowed: sample_size must be a whole number ≥ 1",
        ),
        ("tecqa", {"reader_sample": -1}, "reader_sample must be a whole number ≥ 0 or None"),
        ("tecqa", {"seed": "abc"}, "parameter seed = 'abc' is not allowed"),
        ("00_tour", {"ks": [0, 5]}, "ks must be a non-empty list of whole numbers ≥ 1"),
        ("star_rag", {"min_support": 1.5}, "min_support must be a share in (0, 1]"),
        ("tecqa", {"parser": "gpt"}, "parser must be one of 'offline', 'llm'"),
        ("tecqa", {"profile": "full"}, "profile must be one of 'smoke', 'paper'"),
        ("tecqa", {"llm_base_url": "localhost:8000"}, "llm_base_url must be None or an http(s):// URL"),
        (
            "tecqa",
            {"questions_file": "no/such/file.json"},
            "questions_file must be None or the path of an existing",
        ),
        ("sar", {"max_steps": 0}, "max_steps must be a whole number ≥ 1"),
        ("timer4", {"tks_index": "half"}, "tks_index must be one of None, 'full', 'pool'"),
    ],
)
def test_start_rejects_bad_values_in_one_line(questions, tmp_path, tmp_cache, notebook, bad, message):
    params = {"profile": "smoke", "output_dir": str(tmp_path / "out"), **bad}
    with pytest.raises(ParameterError) as info:
        start(notebook, params, questions=questions)
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
            "output_dir": str(tmp_path / "out"),
        },
        questions=questions,
    )
    assert len(run.questions) == 5 and run.reader_questions == []
    assert run.params["K"] == 1 and run.params["parse_sample"] == 2  # given, and TECQA's smoke default


def test_start_collects_the_parameters_cell_from_the_notebooks_globals(questions, tmp_path, tmp_cache):
    """The setup cell passes ``globals()``: every declared name is read from it (the rest ignored), the
    notebook's own profile table wins over the kit's, and what ran is recorded."""
    namespace = {
        "__name__": "__main__",
        "np": np,
        "profile": "paper",
        "sample_size": 30,
        "K": 12,
        "parse_sample": None,
        "reader_sample": None,
        "output_dir": str(tmp_path / "out"),
    }
    run = start("tecqa", namespace, questions=questions)
    recorded = json.loads((tmp_path / "out" / "results.json").read_text())["parameters"]
    assert set(recorded) == set(declarations("tecqa").names)
    assert recorded["K"] == 12 and recorded["N"] == 2  # given; the cell's value
    assert recorded["parse_sample"] == 10 and recorded["sample_size"] == 30
    assert recorded["reader_sample"] == 40 and len(run.reader_questions) == 30  # TECQA's paper 40 (not
    # the kit's 200), at most the 30 drawn


def test_sar_reader_sample_is_its_agent_sample(questions, tmp_path, tmp_cache):
    run = start(
        "sar",
        {"profile": "smoke", "reader_sample": 6, "output_dir": str(tmp_path / "o")},
        questions=questions,
    )
    assert run.params["reader_sample"] == 6 and "agent_sample" not in run.params
    assert run.params["sweep_sample"] == 1 and run.params["n_max_llm"] == 2


def test_the_value_check_reads_declared_names_and_keeps_the_others_as_given():
    """A notebook's declarations check the values of the names they declare and keep any other name as
    given (the runner's name check rejects it before a kernel starts); the kit's own vocabulary is
    checked wherever it is declared."""
    tecqa = declarations("tecqa")
    resolved = tecqa.resolve({"profile": "smoke", "my_own_knob": -1, "ks": [0]})
    assert (resolved["my_own_knob"], resolved["ks"]) == (-1, [0])  # undeclared by TECQA: kept as given
    assert resolved["parse_sample"] == 2 and resolved["sample_size"] == 40  # declared: the smoke defaults
    with pytest.raises(ParameterError, match="K = 0 is not allowed: K must be a whole number ≥ 1"):
        tecqa.resolve({"K": 0})  # a declared value is checked in the same call
    with pytest.raises(ParameterError, match="ks = \\[0\\] is not allowed"):
        check(ks=[0], my_own_knob=-1)  # the kit's ks, declared by the kit: checked
    with pytest.raises(ParameterError, match="unknown parameter 'my_own_knob' for notebook tecqa"):
        tecqa.check_given({"my_own_knob": -1}, "tecqa")


def test_a_parameter_resolves_none_to_its_profile_default():
    parse = declarations("tecqa")["parse_sample"]
    assert parse.resolve(None, "smoke") == 2 and parse.resolve(None, "paper") == 10
    assert parse.resolve(5, "paper") == 5 and parse.resolve(0, "paper") == 0  # a value given is kept


def test_a_registered_methods_parameters_are_found_through_the_registry(tmp_path, monkeypatch):
    """A method the kit does not ship, registered by an entry point: its notebook's declarations are
    ``PARAMETERS`` of the package the entry point names, found by notebook or method name."""
    package = tmp_path / "demo_method"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from temporag.methods.registry import MethodEntry\n"
        "ENTRY = MethodEntry('demo_method', 'demo_nb', order=99)\n"
    )
    (package / "params.py").write_text(
        "from temporag.methods.params import KIT, Parameter, Parameters, at_least\n"
        "PARAMETERS = Parameters(KIT['profile'], Parameter('depth', 'int', 2, 'hops', at_least(1)))\n"
    )
    dist = tmp_path / "demo_method-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-method\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[temporag.methods]\ndemo_method = demo_method\n")
    assert declarations("demo_nb") is None  # not registered yet
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.refresh()
    try:
        assert registry.package("demo_method") == "demo_method"
        assert declarations("demo_nb").names == ["profile", "depth"] == declarations("demo_method").names
        with pytest.raises(ParameterError, match="depth must be a whole number ≥ 1"):
            check_given("demo_nb", {"depth": 0}, ["profile", "depth"])  # its own rule, before any kernel
    finally:
        registry.refresh()


# -- the runner: every -p value checked against the notebook's declarations, before any kernel --------


@pytest.mark.parametrize(
    ("notebook", "given", "message"),
    [
        ("sar", {"max_steps": 0}, "parameter max_steps = 0 is not allowed: max_steps must be a whole"),
        ("sar", {"agent_sample": 4}, "unknown parameter 'agent_sample' for notebook sar; its parameters"),
        ("timer4", {"code_loss": True}, "unknown parameter 'code_loss' for notebook timer4"),
        ("timer4", {"mu": 1.5}, "parameter mu = 1.5 is not allowed: mu must be a number in [0, 1]"),
        ("ia_rag", {"datasets": ["TimeQA", "MultiTQ"]}, "datasets must be None (all three) or a non-empty"),
        ("ia_rag", {"tightening": "fast"}, "tightening must be one of 'offline', 'llm', 'none'"),
        ("leaderboard", {"require_paper_runs": 1}, "require_paper_runs must be True or False or None"),
        ("star_rag", {"reader_style": "verbose"}, "reader_style must be one of None, 'plain', 'appendix-e'"),
    ],
)
def test_runner_checks_every_notebook_parameter_before_a_kernel(tmp_path, notebook, given, message):
    [outcome] = reproduce(
        [notebook], extra=given, figures_dir=tmp_path / "figures", runs_dir=tmp_path / "runs"
    )
    assert outcome.status == "failed" and outcome.seconds == 0.0 and outcome.executed is None
    assert outcome.error.startswith(("parameter ", "unknown parameter")) and message in outcome.error
    assert "\n" not in outcome.error and not (tmp_path / "runs").exists()


def test_runner_accepts_the_shared_reader_sample_for_sar(tmp_path):
    """``temporag reproduce -n sar -p reader_sample=4``: the kit's name for SAR's agent sample."""
    source, parameters, out_dir = runner._prepare(
        "sar", {"profile": "smoke", "reader_sample": 4}, runner.NOTEBOOK_DIR, tmp_path / "f", tmp_path / "r"
    )
    assert source.name == "sar.ipynb" and parameters["reader_sample"] == 4
    assert out_dir == tmp_path / "r" / "smoke" / "sar"


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


def test_with_kit_wraps_a_notebooks_own_parameters_in_the_kits_block():
    """Every notebook's cell opens and closes with the same kit entries, declared once in ``with_kit``."""
    from temporag.methods.params import KIT, Parameter, at_least, with_kit

    depth = Parameter("depth", "int", 2, "hops", at_least(1))
    extra = Parameter("extra", "int", 0, "more", at_least(0))
    plain = with_kit(depth)
    assert plain.names == [
        "profile", "split", "questions_file", "sample_size", "reader_sample", "seed",
        "depth",
        "llm_model", "llm_base_url", "output_dir",
    ]  # fmt: skip
    assert plain["seed"] is KIT["seed"]
    placed = with_kit(depth, split=KIT["datasets"], reader_sample=(KIT["reader_sample"].but(help="h"), extra))
    assert placed.names[:7] == [
        "profile", "datasets", "questions_file", "sample_size", "reader_sample", "extra", "seed"
    ]  # fmt: skip
    assert placed["reader_sample"].help == "h" and placed["reader_sample"].rule is KIT["reader_sample"].rule
    with pytest.raises(ValueError, match=r"\['ks'\] are not in the kit's opening or closing block"):
        with_kit(depth, ks=KIT["ks"])


def test_every_declared_notebook_opens_and_closes_with_the_kit():
    """The seven notebooks and the BM25 example all go through ``with_kit`` (a notebook written out by hand
    would drift: one once lacked ``seed``)."""
    from temporag.methods.params import CLOSING

    for name in ["00_tour", "ia_rag", "leaderboard", "sar", "star_rag", "tecqa", "timer4"]:
        names = declarations(name).names
        assert names[0] == "profile" and "seed" in names, name
        tail = names[-len(CLOSING) :] if name != "tecqa" else names[-len(CLOSING) - 2 : -2]
        assert tail == list(CLOSING), name
