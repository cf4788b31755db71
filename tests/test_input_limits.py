"""Bad input is one line and an exit code, never a traceback: a questions file nested 100,000 levels deep,
a file past the size cap, malformed predictions records (each named by its line) and an oversized LLM
reply (a failed call, not a crash)."""

from __future__ import annotations

import json

import pytest
from fakes import ScriptedBackend, tiny_notebook

from temporag import cli, limits
from temporag.config import get_settings
from temporag.data.errors import DataFormatError, InputLimitError
from temporag.leaderboard import submission
from temporag.llm import LLM, LLMError, parse_json_reply

DEEP = "[" * 100_000 + "]" * 100_000


def _one_line(message: str, *names: str) -> None:
    assert "\n" not in message and all(n in message for n in names), message


@pytest.mark.parametrize(
    ("module", "loader", "name", "line"),
    [
        ("multitq", "load_questions", "deep.json", None),  # one JSON document
        ("timequestions", "load_questions", "deep.json", 1),  # a JSON list, record by record
        ("cronquestions", "load_complex_questions", "deep.jsonl", 2),  # JSON Lines
    ],
)
def test_a_deeply_nested_questions_file_is_one_line_naming_it(tmp_path, module, loader, name, line):
    import importlib

    path = tmp_path / name
    path.write_text(f"\n{DEEP}\n" if name.endswith(".jsonl") else f"[{DEEP}]" if line else DEEP)
    load = getattr(importlib.import_module(f"temporag.data.{module}"), loader)
    with pytest.raises(InputLimitError, match="nested more than 64 levels deep") as caught:
        load(questions_file=path)
    _one_line(str(caught.value), name, "TEMPORAG_MAX_JSON_DEPTH", str(path))
    assert caught.value.line == line


def test_a_file_past_the_size_cap_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from temporag.data import multitq

    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"quid": i} for i in range(100)]))
    monkeypatch.setenv("TEMPORAG_MAX_INPUT_BYTES", "1000")
    with pytest.raises(InputLimitError, match=r"^big.json: the file is [\d,]+ bytes, more than the 1,000"):
        multitq.load_questions(questions_file=path)


def test_a_deep_questions_file_fails_its_run_in_one_line_before_a_kernel(tmp_path, capsys, caplog):
    """The runner's own look at the file used to raise RecursionError, which stopped the whole batch."""
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    tiny_notebook(
        nbs / "tour.ipynb", 'profile = "smoke"\nquestions_file = None\noutput_dir = None',
        "raise SystemExit('a kernel started')",
    )
    argv = ["reproduce", "-n", "tour", "--notebook-dir", str(nbs), "--runs-dir", str(tmp_path / "runs")]
    assert cli.main([*argv, "-p", f"questions_file={deep}"]) == 1
    shown = "".join(capsys.readouterr()) + caplog.text
    assert "Traceback" not in shown and "RecursionError" not in shown
    [error] = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    _one_line(error, f"questions_file='{deep}': deep.json: nested more than 64 levels deep")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"quid": [1], "answers": ["x"]}', "line 2: quid [1] should be an integer or a string"),
        ('{"quid": 7, "answers": ["x"], "evidence_ids": [3, "4"]}', "line 2: evidence_ids[1] = '4' is not"),
        ('{"quid": 7, "answers": ["x"], "evidence_ids": [1e400]}', "line 2: evidence_ids[0] = inf is not"),
        (
            '{"quid": 7, "answers": ["x"], "evidence_ids": [' + "1" + "0" * 400 + "]}",
            "line 2: evidence_ids[0]",
        ),
        ('{"quid": 7, "answers": "x"}', "line 2: 'answers' 'x' should be a list of strings"),
        ('{"quid": 7, "answers": ["x"], "evidence_ids": 5}', "line 2: 'evidence_ids' should be a list"),
        ('{"quid": 7, "answers": [' + "9" * 5000 + "]}", "line 2: a number too long to read"),
        (DEEP, "line 2: nested more than 64 levels deep"),
        ('{"quid": 1, "answers": []}', "line 2: m: question 1 is predicted twice"),
    ],
)
def test_every_malformed_predictions_record_is_named_by_its_line(tmp_path, capsys, line, problem):
    path = tmp_path / "m.jsonl"
    path.write_text('{"quid": 1, "answers": ["a"], "evidence_ids": [0]}\n' + line + "\n")
    with pytest.raises(submission.PredictionsError) as caught:
        submission.load(path)
    _one_line(str(caught.value), f"{path} {problem}")
    assert cli.main(["score", str(path), "--no-kit"]) == 2  # before the KG is loaded
    err = capsys.readouterr().err
    assert err.strip() == str(caught.value)


def test_a_json_list_of_predictions_names_the_line_a_record_starts_on(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('[\n {"quid": 1, "answers": ["a"]},\n\n {"quid": {"a": 1},\n  "answers": []}\n]\n')
    with pytest.raises(submission.PredictionsError, match=f"^{path} line 4: quid {{'a': 1}} should be"):
        submission.load(path)


def test_predictions_scored_before_are_read_the_same(tmp_path):
    records = [{"quid": 1, "answers": ["a", 2]}, {"quid": "2", "answers": [], "method": "other"}]
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    mine, other = submission.load(path)
    assert (mine.method, mine.quids, mine.answers, mine.evidence) == ("m", [1], [["a", "2"]], None)
    assert (other.method, other.quids, other.places) == ("other", ["2"], [f"{path} line 2"])


def test_an_oversized_llm_reply_is_a_failed_call_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("TEMPORAG_LLM_MAX_REPLY_BYTES", "1000")
    backend = ScriptedBackend(lambda u: "x" * 1001 if "big" in u else "small")
    settings = get_settings(cache_dir=tmp_path / "cache", llm_max_retries=0)
    client = LLM(settings, backend=backend)
    big, small = client.chat_many(
        [[{"role": "user", "content": "big"}], [{"role": "user", "content": "fine"}]], progress=False
    )
    assert small.ok and small.text == "small"
    assert not big.ok and "sent a reply of 1,001 bytes, more than the 1,000" in big.error
    assert "TEMPORAG_LLM_MAX_REPLY_BYTES" in big.error and "\n" not in big.error


def test_a_reply_too_long_or_too_deep_holds_no_json():
    with pytest.raises(LLMError, match="nested more than 64 levels deep"):
        parse_json_reply("Here: " + DEEP)
    with pytest.raises(LLMError, match=r"more than the 1,048,576 the kit reads"):
        parse_json_reply('{"a": "' + "é" * 600_000 + '"}')  # 1.2 MB of UTF-8, 600,000 characters
    assert parse_json_reply('ok ```json\n{"a": [[1]]}\n```') == {"a": [[1]]}


def test_a_bad_cap_setting_is_one_line(monkeypatch, capsys):
    monkeypatch.setenv("TEMPORAG_MAX_JSON_DEPTH", "deep")
    assert cli.main(["data", "check"]) == 2
    assert capsys.readouterr().err.startswith("temporag: TEMPORAG_MAX_JSON_DEPTH='deep' is not an integer")


def test_nesting_is_measured_without_recursion():
    value: list = []
    for _ in range(100_000):
        value = [value]
    assert limits.nested_deeper(value, 64) and not limits.nested_deeper([[{"a": [1]}]], 4)
    assert limits.nested_deeper([[{"a": [1]}]], 3) and not limits.nested_deeper("[[[", 1)
    with pytest.raises(DataFormatError):  # what every caller catches
        raise InputLimitError("f.json", None, "x")
