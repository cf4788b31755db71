"""The distributed engine: a batch on a local Dask cluster of two workers lands in the
same output layout, with the cache shared or kept per worker and merged back; and the pieces that make
that work without a shared file system (shipping a run folder back, merging caches)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import CountingEndpoint

from temporag.batch import cachesync
from temporag.batch.dask_engine import adopt, pack
from temporag.cache import save_npy, sidecar_path
from temporag.llm import ResponseCache

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "batch"
BIN = Path(sys.executable).parent


def _env(tmp_path: Path, server: CountingEndpoint, cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TEMPORAG_CACHE": str(cache),
        "PYTHONPATH": str(REPO / "lib"),
        "TEMPORAG_THREADS": "1",
        "TEMPORAG_LLM_BASE_URL": server.url,
        "TEMPORAG_LLM_MODEL": "fake-model",
    }


def _reproduce(tmp_path: Path, grid_file: Path, env: dict, *more: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "temporag.cli", "reproduce", "--grid", str(grid_file), "--engine", "dask"]
    cmd += ["--notebook-dir", str(FIXTURES), "--runs-dir", str(tmp_path / "runs"), *more]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def _grid(tmp_path: Path, prefixes: str) -> Path:
    path = tmp_path / "grid.toml"
    listed = ", ".join(f'"{p}"' for p in prefixes)
    path.write_text(f'name = "dask"\n[[run]]\nnotebooks = ["ask"]\nprefix = [{listed}]\n')
    return path


def _workers_used(stdout: str) -> set[str]:
    return set(re.findall(r"\] started on (tcp://[0-9.:]+)", stdout))


def _results(tmp_path: Path, prefix: str) -> dict:
    folder = tmp_path / "runs" / "grid" / "dask" / "ask" / f"smoke-prefix={prefix}"
    return json.loads((folder / "results.json").read_text())


@pytest.mark.slow
def test_a_grid_on_a_local_two_worker_cluster_shares_the_cache(tmp_path):
    with CountingEndpoint() as server:
        env = _env(tmp_path, server, tmp_path / "cache")
        first = _reproduce(tmp_path, _grid(tmp_path, "abc"), env, "--jobs", "2")
        assert first.returncode == 0, first.stdout + first.stderr
        assert "3 job(s), 2 at a time, dask engine" in first.stdout
        assert len(_workers_used(first.stdout)) == 2, first.stdout  # both workers ran jobs
        assert re.search(r"\[\d/3 ask smoke prefix=a\] cell 4/4", first.stdout)
        for prefix in "abc":  # the same layout as a local run
            assert _results(tmp_path, prefix)["metrics"]["ask/score"]["value"] == 1.0
        assert dict(server.requests) == {f"{p}-{i}": 1 for p in "abc" for i in range(3)}
        again = _reproduce(tmp_path, _grid(tmp_path, "abc"), env, "--jobs", "2")
        assert again.returncode == 0 and again.stdout.count("] skipped") == 3, again.stdout
        assert sum(server.requests.values()) == 9


def _start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True
    )


@pytest.mark.slow
def test_workers_with_caches_of_their_own_send_llm_answers_back_and_get_them_before_a_batch(tmp_path):
    """A scheduler and two `dask worker` processes, each worker with its own TEMPORAG_CACHE, as on two
    machines without a shared file system."""
    scheduler_file = tmp_path / "scheduler.json"
    with CountingEndpoint() as server:
        base = _env(tmp_path, server, tmp_path / "driver-cache")
        procs = [
            _start(
                [
                    str(BIN / "dask"),
                    "scheduler",
                    "--scheduler-file",
                    str(scheduler_file),
                    "--port",
                    "0",
                    "--host",
                    "127.0.0.1",
                    "--no-dashboard",
                ],
                base,
                tmp_path / "scheduler.log",
            )
        ]
        try:
            deadline = time.monotonic() + 120
            while not scheduler_file.exists():
                assert time.monotonic() < deadline, (tmp_path / "scheduler.log").read_text()
                time.sleep(0.5)
            for name in ("w1", "w2"):
                procs.append(
                    _start(
                        [
                            str(BIN / "dask"),
                            "worker",
                            "--scheduler-file",
                            str(scheduler_file),
                            "--nthreads",
                            "1",
                            "--nworkers",
                            "1",
                            "--no-dashboard",
                            "--host",
                            "127.0.0.1",
                            "--name",
                            name,
                        ],
                        {**base, "TEMPORAG_CACHE": str(tmp_path / f"cache-{name}")},
                        tmp_path / f"{name}.log",
                    )
                )
            address = json.loads(scheduler_file.read_text())["address"]
            from distributed import Client

            with Client(address, timeout="60s") as client:
                client.wait_for_workers(2, timeout=120)

            grid_file = _grid(tmp_path, "abc")
            args = ("--address", address, "--worker-cache", "local")
            first = _reproduce(tmp_path, grid_file, base, *args)
            assert first.returncode == 0, first.stdout + first.stderr
            assert len(_workers_used(first.stdout)) == 2, first.stdout
            worker_rows = [len(ResponseCache(tmp_path / f"cache-{w}" / "llm.sqlite")) for w in ("w1", "w2")]
            assert sum(worker_rows) == 9 and min(worker_rows) > 0  # each worker answered some in its cache
            driver = ResponseCache(tmp_path / "driver-cache" / "llm.sqlite")
            assert len(driver) == 9  # ... and every answer came back to the driver's cache

            # run everything again on the cluster: the driver first gives each worker the answers it lacks
            forced = _reproduce(tmp_path, grid_file, base, *args, "--force")
            assert forced.returncode == 0, forced.stdout + forced.stderr
            assert forced.stdout.count("] ok") == 3
            assert sum(server.requests.values()) == 9  # not one LLM call repeated
            for w in ("w1", "w2"):
                assert len(ResponseCache(tmp_path / f"cache-{w}" / "llm.sqlite")) == 9
        finally:
            for proc in reversed(procs):
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()


# -- without a shared file system: the pieces -------------------------------------------------------------


def test_a_run_folder_shipped_from_a_worker_is_put_in_place_once(tmp_path):
    worker = tmp_path / "worker" / "runs" / "smoke" / "tour"
    (worker / "figs").mkdir(parents=True)
    (worker / "results.json").write_text('{"metrics": {"x": 1}}')
    (worker / "figs" / "a.png").write_bytes(b"\x89PNG....")
    (worker / "_run.json").write_text(json.dumps({"fingerprint": "abc", "status": "ok"}))
    payload = pack(worker)
    here = tmp_path / "driver" / "runs" / "smoke" / "tour"
    assert adopt(here, payload, "abc") is True
    assert {p.relative_to(here).as_posix(): p.read_bytes() for p in here.rglob("*") if p.is_file()} == {
        p.relative_to(worker).as_posix(): p.read_bytes() for p in worker.rglob("*") if p.is_file()
    }
    (here / "results.json").write_text("changed here")
    assert adopt(here, payload, "abc") is False  # the same run is already here (a shared file system)
    assert (here / "results.json").read_text() == "changed here"
    assert sorted(p.name for p in here.parent.iterdir()) == ["tour"]  # no staging, no lock file left


def test_merging_a_worker_cache_adds_what_is_missing_and_leaves_out_bad_entries(tmp_path):
    import numpy as np

    worker, driver = tmp_path / "worker", tmp_path / "driver"
    record = {
        "text": "t",
        "prompt_tokens": 1,
        "completion_tokens": 1,
        "token_source": "api",
        "latency_s": 0.1,
        "model": "m",
    }
    ResponseCache(worker / "llm.sqlite").put("k1", "m", "e", record)
    ResponseCache(worker / "llm.sqlite").put("k2", "m", "e", record)
    ResponseCache(driver / "llm.sqlite").put("k2", "m", "e", {**record, "text": "kept"})
    good = save_npy(worker / "embeddings" / "good.npy", np.ones((2, 3), dtype=np.float32))
    bad = save_npy(worker / "embeddings" / "bad.npy", np.ones((2, 3), dtype=np.float32))
    bad.write_bytes(bad.read_bytes()[:-4] + b"\x00\x00\x00\x00")  # bytes no longer match the hash
    counts = cachesync.merge_cache_dirs(worker, driver)
    assert counts == {"llm_rows": 1, "files": 1, "skipped": 1}
    merged = ResponseCache(driver / "llm.sqlite")
    assert merged.get("k1")["text"] == "t" and merged.get("k2")["text"] == "kept"  # a key already here wins
    assert (driver / "embeddings" / "good.npy").read_bytes() == good.read_bytes()
    assert sidecar_path(driver / "embeddings" / "good.npy").exists()
    assert not (driver / "embeddings" / "bad.npy").exists()
    assert cachesync.merge_cache_dirs(worker, driver) == {"llm_rows": 0, "files": 0, "skipped": 1}
