"""Atomic cache writes survive a crash mid-write; results.json records what a run showed."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from temporag.cache import atomic_write, content_hash, save_npy
from temporag.notebook.results import Results


def test_content_hash_is_stable_and_sensitive():
    a = content_hash("model", ["x", "y"], np.arange(3))
    assert a == content_hash("model", ["x", "y"], np.arange(3))
    assert a != content_hash("model", ["y", "x"], np.arange(3))
    assert a != content_hash("model", ["x", "y"], np.arange(3).astype(np.int64) + 1)


def test_failed_write_leaves_old_file_and_no_temp(tmp_path):
    target = tmp_path / "v.npy"
    save_npy(target, np.ones(3))

    def boom(tmp):
        tmp.write_bytes(b"partial")
        raise KeyboardInterrupt  # a killed run

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, boom)
    assert np.load(target).tolist() == [1.0, 1.0, 1.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.npy", "v.npy.mac"]  # no temp file left


def test_results_record_everything(tmp_path, tmp_cache):
    res = Results("demo", {"profile": "smoke", "k": 20}, out_dir=tmp_path / "demo")
    res.metric("recall@20", 0.5, paper=0.68)
    res.table("t", pd.DataFrame({"a": [1, 2], "b": [0.25, 0.5]}), "caption")
    res.predictions("semantic", [{"quid": 1, "facts": np.array([3, 4])}])
    data = json.loads((tmp_path / "demo" / "results.json").read_text())
    assert data["parameters"] == {"profile": "smoke", "k": 20}
    assert data["metrics"]["recall@20"] == {"value": 0.5, "paper": 0.68}
    assert data["tables"]["t"]["records"][1] == {"a": 2, "b": 0.5}
    assert data["predictions"]["semantic"][0]["facts"] == [3, 4]
    assert data["settings"]["cache_dir"] == str(tmp_cache)
    assert "| 0.250 |" in (tmp_path / "demo" / "tables.md").read_text()
    assert (tmp_path / "demo" / "t.csv").exists()


def test_tables_show_counts_with_a_missing_row_as_whole_numbers(tmp_path, tmp_cache):
    # a count column with one None is float to pandas; tables.md must not print it as 527516.000,
    # while a rate column (or a count column without gaps) keeps the float format
    res = Results("demo", {}, out_dir=tmp_path / "demo")
    frame = pd.DataFrame(
        {"edges": [527516, 94483, None], "recall": [0.649, 0.651, None], "zero": [0.0, 0.0, 0.0]}
    )
    res.table("t", frame, "caption")
    text = (tmp_path / "demo" / "tables.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert [c.strip() for c in rows[2].strip("|").split("|")] == ["527,516", "0.649", "0.000"]
    assert [c.strip() for c in rows[4].strip("|").split("|")] == ["", "", "0.000"]


def test_tables_show_a_column_named_as_a_count_as_whole_numbers(tmp_path, tmp_cache):
    # SAR's Table 1 printed n as "20.000": pandas had made the column float although no row lacks a value
    res = Results("demo", {}, out_dir=tmp_path / "demo")
    res.table("t", pd.DataFrame({"n": [20.0, 954.0], "hits@1": [0.05, 1.0]}), "caption")
    text = (tmp_path / "demo" / "tables.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert [c.strip() for c in rows[2].strip("|").split("|")] == ["20", "0.050"]
    assert [c.strip() for c in rows[3].strip("|").split("|")] == ["954", "1.000"]


def test_results_hold_no_machine_paths_and_stay_compact(tmp_path, tmp_cache, monkeypatch):
    # a stand-in checkout under tmp_path: the test never writes into the repository's figures/
    repo = tmp_path / "checkout" / "temporag"
    monkeypatch.setattr("temporag.notebook.results.REPO_ROOT", repo)
    out = repo / "figures" / "_test_portable"
    res = Results("demo", {"output_dir": str(out), "data": str(repo.parent / "shared" / "data")}, out_dir=out)
    res.table("t", pd.DataFrame({"file": [str(repo.parent / "shared" / "x.txt")]}), "c")
    res.predictions("p", [{"quid": i, "facts": list(range(20))} for i in range(3)])
    text = (out / "results.json").read_text()
    assert str(repo) not in text and str(repo.parent) not in text
    data = json.loads(text)
    assert data["parameters"] == {"output_dir": "./figures/_test_portable", "data": "../shared/data"}
    assert data["predictions"]["p"][2] == {"quid": 2, "facts": list(range(20))}
    assert text.count("\n") < 75  # one line per prediction record, not one per id (that is 60 more)
    assert "../shared/x.txt" in (out / "t.csv").read_text()


def test_results_record_the_data_folder_relative_to_the_checkout(tmp_path, tmp_cache, monkeypatch):
    """A run from a git worktree two levels below the shared data records it as ../../shared/data however
    TEMPORAG_DATA spells it (relative from elsewhere, absolute, with ..), one beside it as ../shared/data."""
    from temporag.config import get_settings
    from temporag.notebook.results import repo_relative

    project = tmp_path / "project"
    worktree, main = project / "wt" / "paper-run", project / "main"
    data = project / "shared" / "data"
    monkeypatch.chdir(tmp_path)  # a relative setting is read against the working folder
    spellings = {
        worktree: [worktree / ".." / ".." / "shared" / "data", data, "project/shared/data"],
        main: [data],
    }
    for i, (checkout, spelled) in enumerate((c, s) for c, ss in spellings.items() for s in ss):
        monkeypatch.setattr("temporag.notebook.results.REPO_ROOT", checkout)
        out = tmp_path / f"out{i}"
        Results("demo", {}, out_dir=out, settings=get_settings(data_dir=spelled))
        recorded = json.loads((out / "results.json").read_text())["settings"]["data_dir"]
        assert recorded == ("../../shared/data" if checkout == worktree else "../shared/data"), spelled
    assert repo_relative(main / "data", root=main) == "data"  # inside the checkout
    far = tmp_path / "elsewhere"  # three levels above a checkout is no longer "near": kept absolute
    assert repo_relative(far, root=worktree / "sub") == str(far)


def test_compare_records_the_row_and_extra_context(tmp_path, tmp_cache):
    from temporag.reported import PaperRef

    res = Results("demo", {}, out_dir=tmp_path / "demo")
    ref = PaperRef("tecqa", "§1 text", "Structure-guided subgraph", "Answer Recall")
    row = res.compare("subgraph/answer_recall", 0.9675, ref, n=954, ci95=[0.957, 0.978])
    assert row == {
        "metric": "subgraph/answer_recall",
        "kit": 0.9675,
        "paper": 0.9933,
        "n": 954,
        "reader": None,
        "rule": None,
        "paper_source": "§1 text: Structure-guided subgraph / Answer Recall (MultiTQ)",
        "note": "",
    }
    saved = json.loads((tmp_path / "demo" / "results.json").read_text())["metrics"]["subgraph/answer_recall"]
    assert saved["value"] == 0.9675 and saved["paper"] == 0.9933 and saved["ci95"] == [0.957, 0.978]
    assert "ci95" not in row


def test_portable_paths_rewrite_whole_paths_only(monkeypatch):
    """The checkout's parent is rewritten where it is a path, never inside a name that starts the same
    (a checkout under a one-folder parent must leave ``methods/wsgi.py`` alone)."""
    from pathlib import Path

    from temporag.notebook import results as results_module

    monkeypatch.setattr(results_module, "REPO_ROOT", Path("/ws/repo"))
    text = '["methods/wsgi.py", "/ws/repo/figures/sar", "/ws/shared/data", "/wsgi/x", "/ws"]'
    expected = '["methods/wsgi.py", "./figures/sar", "../shared/data", "/wsgi/x", ".."]'
    assert results_module.portable(text) == expected


def test_one_content_hash_serves_cache_keys_and_artifact_digests():
    """A cache key is the artifact digest shortened; both hash an array by dtype, shape and bytes."""
    import hashlib

    import numpy as np

    from temporag.cache import content_hash
    from temporag.methods import artifacts

    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = hashlib.sha256(
        b"float32(2, 3)" + array.tobytes() + b"\x00" + b'{"b": [1, 2], "tau": 0.8}' + b"\x00"
    ).hexdigest()
    assert artifacts.digest(array, {"tau": 0.8, "b": [1, 2]}) == expected
    assert content_hash(array, {"tau": 0.8, "b": [1, 2]}) == expected[:16]


def test_a_run_on_a_question_file_records_it_and_labels_the_papers_numbers(tmp_path, tmp_cache):
    """A run on ``questions_file`` recorded ``"split": "test_sample_shared"`` (the default it did not read)
    and showed its recall beside the paper's number as if measured on the same questions."""
    from temporag.reported import PaperRef

    ref = PaperRef("tecqa", "§1 text", "Structure-guided subgraph", "Answer Recall")
    questions = tmp_path / "held_out.json"
    params = {"profile": "smoke", "split": "test_sample_shared", "questions_file": str(questions)}
    res = Results("demo", params, out_dir=tmp_path / "demo")
    row = res.compare("subgraph/answer_recall", 0.9675, ref, n=954)
    assert (row["kit"], row["paper"], row["n"]) == (0.9675, 0.9933, 954)  # the numbers do not move
    assert row["paper_source"] == (
        "§1 text: Structure-guided subgraph / Answer Recall (MultiTQ) (on the paper's questions; this run "
        "read another question set: questions_file:held_out.json)"
    )
    saved = json.loads((tmp_path / "demo" / "results.json").read_text())
    assert saved["parameters"]["split"] == "questions_file:held_out.json"
    assert saved["parameters"]["questions_file"] == str(questions)
    assert saved["metrics"]["subgraph/answer_recall"]["paper_source"] == row["paper_source"]
    from temporag.batch.index import headline

    assert headline(saved)[0]["other_questions"] is True  # the index labels its paper numbers too
    plain = Results("plain", {"profile": "smoke", "split": "test_sample_shared", "questions_file": None},
                    out_dir=tmp_path / "plain")
    assert plain.compare("x", 0.5, ref)["paper_source"] == ref.label()  # a normal run: as before
    recorded = json.loads((tmp_path / "plain" / "results.json").read_text())
    assert recorded["parameters"]["split"] == "test_sample_shared" and "other_questions" not in str(
        headline(recorded)
    )
