"""Bad input is one line before a kernel starts, and what a run warns about inside its notebook reaches
the console in the runner's summary line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fakes import tiny_notebook

from temporag import cli, config
from temporag.cli.environment import check_environment
from temporag.run.runner import RunOutcome, run_counts
from temporag.run.summary import summary


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("TEMPORAG_LLM_TIMEOUT", "abc", "TEMPORAG_LLM_TIMEOUT='abc' is not a number > 0 (seconds per call)"),
        ("TEMPORAG_LLM_MAX_RETRIES", "-1", "TEMPORAG_LLM_MAX_RETRIES='-1' is not an integer ≥ 0"),
        ("TEMPORAG_LLM_BREAKER", "0", "TEMPORAG_LLM_BREAKER='0' is not an integer ≥ 1"),
        ("TEMPORAG_THREADS", "two", "TEMPORAG_THREADS='two' is not an integer ≥ 1"),
        ("TEMPORAG_SEED", "1.5", "TEMPORAG_SEED='1.5' is not an integer ≥ 0"),
        ("TEMPORAG_DEVICE", "gpu", "TEMPORAG_DEVICE='gpu' is not one of auto, cpu, cuda"),
        (
            "TEMPORAG_EMBED_BACKEND",
            "tf",
            "TEMPORAG_EMBED_BACKEND='tf' is not one of auto, torch, onnx, onnx-int8",
        ),
        ("TEMPORAG_DATA_STRICT", "maybe", "TEMPORAG_DATA_STRICT='maybe' is not a flag"),
        (
            "TEMPORAG_LLM_BASE_URL",
            "localhost:8000",
            "TEMPORAG_LLM_BASE_URL='localhost:8000' is not an http(s) URL",
        ),
        (
            "TEMPORAG_LLM_BASE_URL",
            "http://10.0.0.1:8000/v1",
            "TEMPORAG_LLM_BASE_URL='http://10.0.0.1:8000/v1' is plain http:// to another machine",
        ),
        ("TEMPORAG_LLM_ALLOW_HTTP", "maybe", "TEMPORAG_LLM_ALLOW_HTTP='maybe' is not a flag"),
        ("TEMPORAG_KERNEL_START_TIMEOUT", "soon", "TEMPORAG_KERNEL_START_TIMEOUT='soon' is not a number > 0"),
        # a setting whose unset value means something says what (README: 16), never "default unset"
        (
            "TEMPORAG_LLM_CONCURRENCY",
            "0",
            "TEMPORAG_LLM_CONCURRENCY='0' is not an integer ≥ 1 (requests in flight to a served endpoint); "
            "default 16 (the embedded model: 1)",
        ),
        (
            "TEMPORAG_LLM_RETRY_BUDGET",
            "soon",
            "TEMPORAG_LLM_RETRY_BUDGET='soon' is not a number ≥ 0 (seconds of failed attempts before the "
            "breaker opens); default 2 × TEMPORAG_LLM_TIMEOUT",
        ),
    ],
)
def test_every_setting_is_checked_in_one_line(monkeypatch, capsys, name, value, message):
    monkeypatch.setenv(name, value)
    with pytest.raises(config.SettingError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        check_environment()
    assert cli.main(["data", "check"]) == 2  # the command line: one line, no traceback, before any work
    err = capsys.readouterr().err
    assert err.startswith(f"temporag: {message}") and err.count("\n") == 1


def test_good_settings_pass(monkeypatch):
    for name, value in (
        ("TEMPORAG_LLM_TIMEOUT", "2.5"),
        ("TEMPORAG_DATA_STRICT", "yes"),
        ("TEMPORAG_DEVICE", "CPU"),
    ):
        monkeypatch.setenv(name, value)
    settings = check_environment()
    assert (settings.llm_timeout, settings.data_strict, settings.device) == (2.5, True, "cpu")


def test_relative_data_and_cache_resolve_against_the_callers_directory(monkeypatch, tmp_path):
    """A relative TEMPORAG_DATA (../data) names the same folder for `data check` and for a kernel started in
    notebooks/: it is made absolute against the caller's directory."""
    caller = tmp_path / "work"
    caller.mkdir()
    monkeypatch.chdir(caller)
    monkeypatch.setenv("TEMPORAG_DATA", "../data")
    monkeypatch.setenv("TEMPORAG_CACHE", "cache")
    config.export_absolute_paths()
    assert os.environ["TEMPORAG_DATA"] == str(tmp_path / "work" / ".." / "data")
    assert os.environ["TEMPORAG_CACHE"] == str(caller / "cache")
    monkeypatch.chdir(tmp_path)  # what a kernel started in notebooks/ now reads: the same folders
    settings = config.get_settings()
    assert (
        settings.data_dir.resolve() == (tmp_path / "data").resolve()
        and settings.cache_dir == caller / "cache"
    )


def test_an_empty_questions_file_is_one_line(tmp_path, shared_data):
    """A questions file holding `[]` is one line: from the loader, and from `reproduce` before any kernel."""
    from temporag.data import multitq
    from temporag.data.errors import DataFormatError
    from temporag.run.runner import reproduce

    empty = tmp_path / "none.json"
    empty.write_text("[]")
    with pytest.raises(DataFormatError, match=r"^none.json: holds no questions"):
        multitq.load_questions(questions_file=empty)
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    tiny_notebook(
        nbs / "tour.ipynb", 'profile = "smoke"\nquestions_file = None\noutput_dir = None',
        "raise SystemExit('a kernel started')",
    )
    [outcome] = reproduce(
        ["tour"],
        extra={"questions_file": str(empty)},
        notebook_dir=nbs,
        figures_dir=tmp_path / "f",
        runs_dir=tmp_path / "r",
    )
    assert outcome.status == "failed" and outcome.seconds == 0.0  # no kernel started
    assert (
        outcome.error.startswith(f"questions_file='{empty}' holds no questions ([])")
        and "\n" not in outcome.error
    )


@pytest.mark.parametrize(
    ("module", "loader", "text"),
    [
        ("tempreason", "load_questions", ""),
        ("timequestions", "load_questions", "[]"),
        ("cronquestions", "load_complex_questions", "\n"),
        ("timeqa", "load_timebench_questions", ""),
        ("timeqa", "load_dyg_rag_questions", "[ ]"),
    ],
)
def test_every_question_loader_refuses_an_empty_user_file(tmp_path, module, loader, text):
    """These five loaders used to return [] for a user's empty file (only MultiTQ and ComplexTR checked)."""
    import importlib

    from temporag.data.errors import DataFormatError

    empty = tmp_path / "mine.json"
    empty.write_text(text)
    load = getattr(importlib.import_module(f"temporag.data.{module}"), loader)
    with pytest.raises(DataFormatError, match=r"^mine.json: holds no questions") as caught:
        load(questions_file=empty)
    assert caught.value.path == str(empty) and caught.value.line is None


@pytest.mark.parametrize(
    ("module", "loader", "relative"),
    [
        ("timequestions", "load_questions", "timequestions/questions/test.json"),
        ("cronquestions", "load_complex_questions", "cronquestions/questions_complex/test.jsonl"),
    ],
)
def test_an_empty_split_file_is_refused_too(tmp_path, module, loader, relative):
    """A split's own file goes through the same check as a user's file (an empty held-out copy, say)."""
    import importlib

    from temporag.data.errors import DataFormatError

    path = tmp_path / relative
    path.parent.mkdir(parents=True)
    path.write_text("[]" if relative.endswith(".json") else "")
    load = getattr(importlib.import_module(f"temporag.data.{module}"), loader)
    with pytest.raises(DataFormatError, match=rf"^{path.name}: holds no questions"):
        load("test", data_dir=tmp_path)


def test_ctrl_c_during_reproduce_is_one_line(monkeypatch, capsys):
    from temporag import batch

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(batch, "run", interrupted)
    assert cli.main(["reproduce", "-n", "00_tour"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [cli.INTERRUPTED] and "last complete run" in err[0]


def test_run_warnings_are_counted_in_the_summary_line(tmp_path):
    """A run's data mismatches, failed and unparsed LLM calls are counted in its summary line."""
    path = tmp_path / "results.json"
    path.write_text(
        json.dumps(
            {
                "llm_calls": {"calls": 10, "failed": 6, "unparsed": 2},
                "data_mismatches": {"full.txt": "4,000 bytes, the pinned release has 5,000"},
            }
        )
    )
    counts = run_counts(path)
    assert counts == "data mismatch: full.txt; 6/10 LLM calls failed; 2 unparsed replies"
    path.write_text(json.dumps({"llm_calls": {"calls": 3, "failed": 0}}))  # no `unparsed` key: fine
    assert run_counts(path) == ""
    outcome = RunOutcome("tour", "ok", 1.0, None, output_dir=Path("/r/tour"), counts=counts)
    assert outcome.shown == f"ok ({counts})"
    assert f"tour          ok ({counts})     1.0  /r/tour" in summary([outcome])
    assert RunOutcome.from_dict(outcome.to_dict()) == outcome


def test_results_record_data_mismatches_of_their_run(tmp_path, monkeypatch):
    from temporag.data import paths
    from temporag.notebook.results import Results

    monkeypatch.setitem(
        paths._PINNED, (str(tmp_path / "full.txt"), 4, 0), "4 bytes, the pinned release has 5"
    )
    res = Results("demo", {}, out_dir=tmp_path / "demo")
    data = json.loads((tmp_path / "demo" / "results.json").read_text())
    assert data["data_mismatches"] == {"full.txt": "4 bytes, the pinned release has 5"}
    assert run_counts(res.dir / "results.json") == "data mismatch: full.txt"


# A notebook that reads a data file the registry pins (cut short) through the kit's check.
CUT_DATA = """
from temporag.data.paths import check_pinned
from temporag.notebook.results import Results
res = Results("cut_data", {"profile": profile, "output_dir": output_dir}, out_dir=output_dir)
check_pinned("multitq/kg/relation2id.json", path)
res.metric("x", 1.0)
"""


@pytest.mark.slow
def test_a_data_mismatch_inside_a_notebook_reaches_the_summary_line(tmp_path, capsys):
    """A KG file cut short, read inside a notebook, shows as `ok (data mismatch: …)` in `reproduce`'s
    progress line and summary."""
    import gzip

    from temporag.run.runner import reproduce

    good = Path(config.get_settings().data_dir) / "multitq" / "kg" / "relation2id.json.gz"
    cut = tmp_path / "relation2id.json"
    text = gzip.decompress(good.read_bytes()).decode("utf-8")
    cut.write_text(text[: len(text) // 2], encoding="utf-8")  # cut short
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    parameters = f'profile = "smoke"\npath = {str(cut)!r}\noutput_dir = None'
    tiny_notebook(nbs / "cut_data.ipynb", parameters, CUT_DATA)
    [outcome] = reproduce(["cut_data"], notebook_dir=nbs, figures_dir=tmp_path / "f", runs_dir=tmp_path / "r")
    assert outcome.status == "ok" and outcome.counts == "data mismatch: relation2id.json"
    assert "[ok (data mismatch: relation2id.json)] cut_data" in capsys.readouterr().out
    assert "ok (data mismatch: relation2id.json)" in summary([outcome])
