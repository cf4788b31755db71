"""Each notebook's parameters are declared once (its package's ``PARAMETERS``): its parameters cell is
that declaration written out, papermill lists every parameter with its type, and the paper profile
resolves to exactly the parameters of the committed run in ``figures/<paper>/results.json``."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import nbformat
import papermill
import pytest

from temporag.config import REPO_ROOT, get_settings
from temporag.methods import timer4
from temporag.methods.params import KIT
from temporag.methods.registry import declarations
from temporag.methods.timer4 import experiments as timer4_experiments
from temporag.notebook.outputs import output_name

NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
NAMES = [p.stem for p in NOTEBOOKS]
#: parameters a committed run recorded that are now constants of the package, with the value it used
RETIRED = {
    "timer4": {
        "fig3_ns": list(timer4_experiments.FIG3_NS),
        "reader_top_k": timer4_experiments.READER_TOP_K,
        "code_loss": True,  # the code-loss model is always trained now
        "pool": timer4.POOL,  # the rerank's candidates: TimeR4's own default
    }
}


def _parameters_cell(path) -> str:
    nb = nbformat.read(path, as_version=4)
    [cell] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    return cell.source


def test_every_notebook_is_declared():
    assert NAMES == sorted(["00_tour", "ia_rag", "leaderboard", "sar", "star_rag", "tecqa", "timer4"])
    assert all(declarations(name) is not None for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_parameters_cell_is_the_declaration(name):
    cell = _parameters_cell(REPO_ROOT / "notebooks" / f"{name}.ipynb")
    assert cell == declarations(name).cell()
    assert max(len(line) for line in cell.splitlines()) <= 100
    assert len(cell.splitlines()) <= 20  # a knob past that is a constant of the package


@pytest.mark.parametrize("name", NAMES)
def test_papermill_lists_every_parameter_with_its_type(name):
    listed = papermill.inspect_notebook(REPO_ROOT / "notebooks" / f"{name}.ipynb")
    declared = declarations(name)
    assert list(listed) == declared.names
    for parameter in declared:
        seen = listed[parameter.name]
        assert seen["inferred_type_name"] == parameter.type
        assert ast.literal_eval(seen["default"]) == parameter.default
        assert seen["help"].startswith(parameter.help)


def test_help_notebook_shows_no_unknown_type():
    out = subprocess.run(
        [sys.executable, "-m", "papermill", "--help-notebook", str(REPO_ROOT / "notebooks" / "timer4.ipynb")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Unknown type" not in out
    assert "pool_triples: Optional[int] (default None)" in out
    assert "triples per question of a pool index (smoke 100, paper 30)" in out
    assert out.count("(default ") == len(declarations("timer4").names) == 19


@pytest.mark.parametrize("name", NAMES)
def test_the_cell_runs_and_holds_the_declared_values(name):
    namespace: dict = {}
    exec(_parameters_cell(REPO_ROOT / "notebooks" / f"{name}.ipynb"), namespace)
    declared = declarations(name)
    assert {n: namespace[n] for n in declared.names} == declared.cell_values()


@pytest.mark.parametrize("name", NAMES)
def test_kit_vocabulary_has_one_rule_per_name(name):
    for parameter in declarations(name):
        if parameter.name in KIT:
            kit = KIT[parameter.name]
            assert (parameter.type, parameter.rule) == (kit.type, kit.rule), parameter.name


@pytest.mark.parametrize("name", NAMES)
def test_every_default_obeys_its_own_rule(name):
    offline, served = get_settings(llm_base_url=None), get_settings(llm_base_url="http://x:1/v1")
    for parameter in declarations(name):
        assert parameter.rule.ok(parameter.default), parameter.name
        for profile in ("smoke", "paper"):
            for settings in (offline, served):
                value = parameter.resolve(parameter.default, profile, settings)
                assert parameter.rule.ok(value), parameter.name
        assert ("Optional[" in parameter.type) == parameter.rule.ok(None), parameter.name


@pytest.mark.parametrize("name", [n for n in NAMES if (REPO_ROOT / "figures" / output_name(n)).is_dir()])
def test_paper_profile_resolves_to_the_committed_parameters(name, questions, monkeypatch):
    """The declarations give the committed run's parameters back; only what a run resolves from its
    environment differs: ``sample_size`` None (every shared question: the count), ``llm_model`` None
    (the embedded reader) and ``output_dir`` None (figures/<paper>)."""
    monkeypatch.delenv("TEMPORAG_LLM_BASE_URL", raising=False)
    folder = output_name(name)
    committed = json.loads((REPO_ROOT / "figures" / folder / "results.json").read_text())["parameters"]
    for retired, value in RETIRED.get(name, {}).items():
        assert committed.pop(retired, value) == value, retired
    resolved = declarations(name).resolve({"profile": "paper"}, get_settings())
    assert set(resolved) == set(committed)
    assert resolved["output_dir"] is None and committed["output_dir"] == f"./figures/{folder}"
    assert resolved["llm_model"] is None and committed["llm_model"] == "SmolLM2-135M-Instruct.Q4_1"
    if resolved["sample_size"] is None and committed["sample_size"] is not None:
        assert committed["sample_size"] == len(questions) == 954  # every shared MultiTQ question
    else:
        assert resolved["sample_size"] == committed["sample_size"]
    same = {k: v for k, v in resolved.items() if k not in ("output_dir", "llm_model", "sample_size")}
    assert same == {k: committed[k] for k in same}


def test_a_served_model_reads_every_question_where_the_notebook_says_so():
    offline, served = get_settings(llm_base_url=None), get_settings(llm_base_url="http://x:1/v1")
    paper = {"profile": "paper"}
    assert declarations("tecqa").resolve(paper, offline)["reader_sample"] == 40  # its table, not the kit's
    assert declarations("tecqa").resolve(paper, served)["reader_sample"] is None  # all
    assert declarations("00_tour").resolve(paper, offline)["reader_sample"] == 200
    assert declarations("sar").resolve(paper, served)["reader_sample"] == 20  # the agent's sample
    assert declarations("star_rag").resolve(paper, served)["reader_style"] == "appendix-e"
    assert declarations("star_rag").resolve({"profile": "smoke"}, offline)["reader_style"] == "plain"
    given = {"profile": "paper", "reader_sample": 7}
    assert declarations("tecqa").resolve(given, served)["reader_sample"] == 7


def test_temporag_list_shows_each_notebook_its_parameters_and_profile_defaults(capsys):
    from temporag import cli

    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(f"\n{name}  (notebooks/{name}.ipynb" in out for name in NAMES)
    sar = out.split("\nsar  ")[1].split("\n\n")[0].splitlines()[1:]
    rows = {line.split()[0]: line.split() for line in sar}
    assert rows["parameter"][:4] == ["parameter", "type", "smoke", "paper"]
    assert rows["reader_sample"][:4] == ["reader_sample", "Optional[int]", "2", "20"]
    assert rows["max_steps"][:4] == ["max_steps", "int", "6", "6"] and "turns per reasoning" in out
    assert "reader_sample   Optional[int]  4                     40, served all" in out  # TECQA's
