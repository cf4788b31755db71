"""Batch reproduction: grids, parallel jobs sharing the caches, one build per cache entry, and a
batch killed with SIGKILL that resumes without re-running finished notebooks or repeating an LLM call.

The notebook is tests/fixtures/batch/ask.ipynb: it asks a fake OpenAI-compatible endpoint on 127.0.0.1
(``fakes.CountingEndpoint``) a few questions through the kit's LLM client, so every LLM call is counted
at the server.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from fakes import CountingEndpoint

from temporag import cli
from temporag.batch import grid

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "batch"
LIB = REPO / "lib"


def _grid(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


def _expand(path: Path, tmp_path: Path):
    return grid.expand(
        path, notebook_dir=FIXTURES, figures_dir=tmp_path / "figures", runs_dir=tmp_path / "runs"
    )


# -- grids -----------------------------------------------------------------------------------------------


def test_grid_expands_into_one_folder_per_parameter_set(tmp_path):
    path = _grid(
        tmp_path / "readers.toml",
        'name = "readers"\n'
        "[[run]]\n"
        'notebooks = ["ask"]\n'
        'profile = ["smoke", "paper"]\n'
        'prefix = ["a", "b", "c"]\n'
        "calls = 2\n"
        "[[run]]\n"
        'notebooks = "ask"\n'
        'prefix = "a"\n'
        "calls = 2\n"  # the same run as smoke/a above: listed once
        "[[run]]\n"
        'notebooks = ["ask"]\n'
        'url = "http://127.0.0.1:9/a/very/long/path/that/would/make/a/long/folder/name/v1"\n',
    )
    jobs = _expand(path, tmp_path)
    root = tmp_path / "runs" / "grid" / "readers" / "ask"
    folders = [Path(j.parameters["output_dir"]) for j in jobs]
    assert folders[:6] == [
        root / f"{profile}-prefix={prefix}-calls=2" for profile in ("smoke", "paper") for prefix in "abc"
    ]
    assert len(jobs) == 7  # 3 × 2, the duplicate once, and the long-URL run
    assert folders[6].parent == root and len(folders[6].name) <= grid.MAX_FOLDER
    assert re.fullmatch(r"smoke-url=http-127.0.0.1-9-a-very~[0-9a-f]{8}", folders[6].name), folders[6].name
    assert jobs[0].parameters == {
        "profile": "smoke",
        "prefix": "a",
        "calls": 2,
        "output_dir": str(folders[0]),
    }
    assert [j.label for j in jobs[:2]] == ["ask smoke prefix=a", "ask smoke prefix=b"]
    assert all(not str(f).startswith(str(tmp_path / "figures")) for f in folders)  # never the committed runs


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[[run]]\nnotebooks = ["ask"]\nprefix = a\n', r"is not valid TOML: .*at line 3, column 10"),
        ('name = "x"\n', r"no \[\[run\]\] block"),
        (
            '[[run]]\nnotebooks = ["nope"]\n',
            r"block 1 \(line 1\): no such notebook\(s\) \['nope'\]; available: \['ask'\]",
        ),
        (
            '[[run]]\nnotebooks = ["ask"]\n\n[[run]]\nnotebooks = ["ask"]\nprefx = ["a"]\n',
            r"block 2 \(line 4\): unknown parameter 'prefx' for notebook ask; its parameters are: prof",
        ),
        (
            '[[run]]\nnotebooks = ["ask"]\nprofile = ["smoke", "fast"]\n',
            r"parameter profile = 'fast' is not allowed",
        ),
        ('[[run]]\nnotebooks = ["ask"]\noutput_dir = "x"\n', r"`output_dir` cannot be set in a grid"),
        ('K = [1]\n[[run]]\nnotebooks = ["ask"]\n', r"unknown top-level key\(s\) \['K'\]"),
        ('[[run]]\nnotebooks = ["ask"]\nprefix = []\n', r"an empty list of alternatives"),
    ],
)
def test_grid_errors_name_the_file_the_block_and_the_fix(tmp_path, body, message):
    path = _grid(tmp_path / "bad.toml", body)
    with pytest.raises(grid.GridError, match=message) as err:
        _expand(path, tmp_path)
    assert str(err.value).startswith(f"grid file {path}")


def test_cli_refuses_a_bad_grid_before_running_anything(tmp_path, capsys):
    path = _grid(tmp_path / "bad.toml", '[[run]]\nnotebooks = ["ask"]\nprefx = "a"\n')
    argv = [
        "reproduce",
        "--grid",
        str(path),
        "--notebook-dir",
        str(FIXTURES),
        "--runs-dir",
        str(tmp_path / "r"),
    ]
    assert cli.main(argv) == 2
    assert "unknown parameter 'prefx'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
    assert cli.main([*argv, "-p", "calls=2"]) == 2  # a grid names its own parameters
    assert "drop -n/-p/--profile" in capsys.readouterr().err


# -- one build per expensive cache entry -----------------------------------------------------------------


def _encode_in_child(cache_dir: str, texts: list[str], out_file: str, built) -> None:
    from temporag.config import get_settings
    from temporag.retrieval import embed

    embed.CHUNK = 2  # 4 chunks of 2 texts

    class SlowEncoder(embed.Encoder):
        dim = 4

        def encode(self, texts, progress=None):
            with built.get_lock():
                built.value += 1
            time.sleep(0.4)  # long enough for the other process to find the chunk being built
            vecs = np.array([[len(t), 1.0, 2.0, 3.0] for t in texts], dtype=np.float32)
            return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)

    vectors = SlowEncoder(get_settings(cache_dir=cache_dir)).encode_cached(texts)
    np.save(out_file, vectors)


def run_twice_at_once(target, args) -> int:
    """Run ``target(*args(i), built)`` in two forked processes at once; how many builds they counted."""
    ctx = multiprocessing.get_context("fork")
    built = ctx.Value("i", 0)
    children = [ctx.Process(target=target, args=(*args(i), built)) for i in range(2)]
    for child in children:
        child.start()
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    return built.value


def test_two_runs_needing_the_same_embeddings_build_each_chunk_once(tmp_path):
    texts = [f"fact number {i}" for i in range(8)]
    built = run_twice_at_once(
        _encode_in_child, lambda i: (str(tmp_path / "cache"), texts, str(tmp_path / f"{i}.npy"))
    )
    assert built == 4  # 4 chunks, each embedded by one of the two runs, none twice
    first, second = np.load(tmp_path / "0.npy"), np.load(tmp_path / "1.npy")
    assert np.array_equal(first, second) and first.shape == (8, 4)
    entries = sorted((tmp_path / "cache" / "embeddings").iterdir())
    assert len([p for p in entries if p.suffix == ".npy"]) == 4
    assert not [p for p in entries if p.name.endswith(".building")]  # build locks are cleaned up


# -- parallel jobs through the CLI -------------------------------------------------------------------------


def _env(tmp_path: Path, server: CountingEndpoint, **extra: str) -> dict[str, str]:
    """A batch's environment: its own cache, this checkout's library, the fake endpoint as the LLM."""
    return {
        **os.environ,
        "TEMPORAG_CACHE": str(tmp_path / "cache"),
        "PYTHONPATH": str(LIB),
        "TEMPORAG_THREADS": "1",
        "TEMPORAG_LLM_BASE_URL": server.url,
        "TEMPORAG_LLM_MODEL": "fake-model",
        **extra,
    }


def _reproduce_cmd(grid_file: Path, tmp_path: Path, *more: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "temporag.cli",
        "reproduce",
        "--grid",
        str(grid_file),
        "--notebook-dir",
        str(FIXTURES),
        "--runs-dir",
        str(tmp_path / "runs"),
        *more,
    ]


@pytest.mark.slow
def test_parallel_jobs_share_the_llm_cache_and_report_progress_per_job(tmp_path):
    with CountingEndpoint() as server:
        # two jobs ask the same three questions at the same time; a third asks others
        path = _grid(
            tmp_path / "g.toml",
            'name = "par"\n[[run]]\nnotebooks = ["ask"]\nprefix = "s"\ncalls = [3, 4]\n'
            '[[run]]\nnotebooks = ["ask"]\nprefix = "t"\n',
        )
        t0 = time.monotonic()
        first = subprocess.run(
            _reproduce_cmd(path, tmp_path, "--jobs", "2"),
            env=_env(tmp_path, server),
            capture_output=True,
            text=True,
        )
        assert first.returncode == 0, first.stdout + first.stderr
        assert time.monotonic() - t0 < 300
        assert dict(server.requests) == {"s-0": 1, "s-1": 1, "s-2": 1, "s-3": 1, "t-0": 1, "t-1": 1, "t-2": 1}
        out = first.stdout
        assert "3 job(s), 2 at a time, local engine" in out
        for i, label in enumerate(["ask smoke calls=3", "ask smoke calls=4", "ask smoke"], 1):
            assert f"[{i}/3 {label}] started" in out
            assert f"[{i}/3 {label}] cell 4/4" in out  # three code cells and the injected parameters
            assert re.search(rf"\[{i}/3 {label}\] ok [0-9.]+ s → ", out), out
        root = tmp_path / "runs" / "grid" / "par" / "ask"
        folders = [p for p in root.iterdir() if not p.name.startswith(".")]  # (.<name>.failed beside)
        assert sorted(p.name for p in folders) == [
            "smoke-prefix=s-calls=3",
            "smoke-prefix=s-calls=4",
            "smoke-prefix=t",
        ]
        for folder in folders:
            data = json.loads((folder / "results.json").read_text())
            assert data["metrics"]["ask/score"]["value"] == 1.0, folder
            assert json.loads((folder / "_run.json").read_text())["status"] == "ok"
        again = subprocess.run(
            _reproduce_cmd(path, tmp_path, "--jobs", "2"),
            env=_env(tmp_path, server),
            capture_output=True,
            text=True,
        )
        assert again.returncode == 0 and again.stdout.count("] skipped 0.0 s") == 3, again.stdout
        assert sum(server.requests.values()) == 7  # nothing asked again


# -- kill and resume -------------------------------------------------------------------------------------


def _kill_batch(proc: subprocess.Popen, pid_dir: Path) -> list[str]:
    """SIGKILL the batch process alone (as `kill -9 PID` does) and give its job processes and their kernels
    30 s to notice and go by themselves; returns what was still alive then (killed anyway)."""
    import psutil

    jobs = psutil.Process(proc.pid).children(recursive=True)
    kernels = []
    for pid_file in pid_dir.glob("*.pid"):  # kernels of finished jobs are gone already
        try:
            kernels.append(psutil.Process(int(pid_file.read_text())))
        except (psutil.NoSuchProcess, ValueError):
            pass
    proc.kill()
    proc.wait(30)
    deadline = time.monotonic() + 30
    alive = jobs + kernels
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = [p for p in alive if _running(p)]
    described = [f"{p.pid} {p.name()}" for p in alive if _running(p)]
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    return described


def _running(process) -> bool:
    import psutil

    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
def test_a_batch_killed_half_way_resumes_without_rerunning_or_repeating_llm_calls(tmp_path):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    with CountingEndpoint(hold="c-1") as server:
        path = _grid(
            tmp_path / "kill.toml",
            'name = "kill"\n[[run]]\nnotebooks = ["ask"]\nprefix = ["a", "b", "c", "d"]\n',
        )
        env = _env(tmp_path, server, TEST_PID_DIR=str(pid_dir))
        log = open(tmp_path / "first.log", "w")
        proc = subprocess.Popen(
            _reproduce_cmd(path, tmp_path, "--jobs", "2"), env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            # jobs a and b run first (two at a time); c's second question is held: kill the batch there
            assert server.held.wait(240), (tmp_path / "first.log").read_text()
        finally:
            orphans = _kill_batch(proc, pid_dir)
            log.close()
        assert orphans == []  # job processes and kernels went with the batch
        root = tmp_path / "runs" / "grid" / "kill" / "ask"
        finished = {
            p.name: json.loads((p / "_run.json").read_text())["finished"]
            for p in root.iterdir()
            if (p / "_run.json").exists()
        }
        assert {"smoke-prefix=a", "smoke-prefix=b"} <= set(finished)
        assert "smoke-prefix=c" not in finished  # killed mid-run: nothing published
        before = dict(server.answered)
        assert before["c-0"] == 1 and "c-1" not in before
        server.release.set()  # the held request's caller is dead; later requests are answered

        resumed = subprocess.run(
            _reproduce_cmd(path, tmp_path, "--jobs", "2"), env=env, capture_output=True, text=True
        )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    out = resumed.stdout
    for prefix in "ab":
        assert f"ask smoke prefix={prefix}] skipped" in out, out
        assert (
            json.loads((root / f"smoke-prefix={prefix}" / "_run.json").read_text())["finished"]
            == finished[f"smoke-prefix={prefix}"]
        )
    assert "ask smoke prefix=c] ok" in out
    prompts = [f"{p}-{i}" for p in "abcd" for i in range(3)]
    assert dict(server.answered) == dict.fromkeys(prompts, 1)  # every answer delivered once: none repeated
    assert server.requests["c-1"] == 2  # the one call in flight at the kill, never answered, asked again
    assert {p: n for p, n in server.requests.items() if p != "c-1"} == dict.fromkeys(
        [p for p in prompts if p != "c-1"], 1
    )
    for prefix in "abcd":
        data = json.loads((root / f"smoke-prefix={prefix}" / "results.json").read_text())
        assert data["metrics"]["ask/score"]["value"] == 1.0
    print(
        f"kill-and-resume: {sum(before.values())} calls answered before the kill, "
        f"{sum(server.answered.values()) - sum(before.values())} after; "
        f"requests {sum(server.requests.values())}"
    )


def _rule_graph_in_child(cache_file: str, out_file: str, built) -> None:
    import types

    from temporag.methods.star_rag import graph

    def slow_build(kg, params, progress=False):
        with built.get_lock():
            built.value += 1
        time.sleep(1.0)  # the other run arrives while this one builds
        return types.SimpleNamespace(edges=[1, 2, 3], timings={})

    graph.graph_cache_path = lambda kg, params=None: Path(cache_file)
    graph.build_rule_graph = slow_build
    graph.RuleGraph, graph.GRAPH_TYPES = types.SimpleNamespace, (types.SimpleNamespace,)  # a stand-in graph
    graph.graph_digest = lambda rule_graph: "a stand-in graph"  # what the run records of the graph it used
    rule_graph = graph.load_or_build(kg=None)
    Path(out_file).write_text(json.dumps([rule_graph.edges, rule_graph.timings["loaded_from_cache"]]))


def test_two_runs_needing_the_same_rule_graph_build_it_once(tmp_path):
    cache_file = tmp_path / "cache" / "star_rag" / "graph.npz"
    cache_file.parent.mkdir(parents=True)
    built = run_twice_at_once(_rule_graph_in_child, lambda i: (str(cache_file), str(tmp_path / f"{i}.json")))
    assert built == 1  # one run built it, the other waited on its build lock and loaded it
    results = sorted(json.loads((tmp_path / f"{i}.json").read_text()) for i in range(2))
    assert results == [[[1, 2, 3], 0.0], [[1, 2, 3], 1.0]]
