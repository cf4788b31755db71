"""The served path against a real OpenAI-compatible server (issue 35), not the kit's stub: llama-cpp-python's
server (the ``serve`` extra) over the packaged SmolLM2 GGUF, started on 127.0.0.1 by
``python -m temporag.llm.serve``.  The tour's smoke run through ``TEMPORAG_LLM_BASE_URL`` with 4 requests in
flight records exactly the replies the embedded reader gives on the same prompts (the launcher makes the
server decode as the in-process reader does: see :mod:`temporag.llm.serve`).  ``make served-check`` runs
it."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ALIAS = "smollm2-served"
START_S = 600  # a loaded 2-core machine took ~100 s to import the server and load the model

pytestmark = [pytest.mark.slow, pytest.mark.notebook]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def served(tmp_path):
    """The launcher's server on a free port of 127.0.0.1: ``(url, log path)``; stopped afterwards."""
    missing = [
        m for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette") if importlib.util.find_spec(m) is None
    ]
    if missing:
        why = f"the serve extra is not installed ({', '.join(missing)} missing): `make served-check` has it"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    port = _free_port()
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "temporag.llm.serve", "--port", str(port), "--alias", ALIAS],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_S
        while True:
            assert server.poll() is None, (
                f"the server exited ({server.returncode}): {log.read_text()[-2000:]}"
            )
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5) as reply:
                    assert [m["id"] for m in json.load(reply)["data"]] == [ALIAS]
                    break
            except OSError:
                assert time.monotonic() < deadline, f"no server on {url} after {START_S} s"
                time.sleep(1)
        yield url, log
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _cache_beside_the_users(tmp_path: Path) -> Path:
    """A cache folder of the test's own ``llm.sqlite`` (every reply computed again), whose other entries
    (the warmed embeddings and ONNX export) are the user's cache, linked."""
    from temporag.config import get_settings

    users, cache = get_settings().cache_dir, tmp_path / "cache"
    cache.mkdir()
    if users.is_dir():
        for entry in users.iterdir():
            if not entry.name.startswith("llm.sqlite"):
                (cache / entry.name).symlink_to(entry)
    return cache


def _tour(out_dir: Path) -> dict:
    from temporag.run.runner import run_notebook

    outcome = run_notebook(
        "00_tour",
        {"profile": "smoke", "output_dir": str(out_dir)},
        notebook_dir=REPO / "notebooks",
        force=True,
    )
    assert outcome.status == "ok", outcome.error or outcome.note
    return json.loads((out_dir / "results.json").read_text())


def test_tour_through_a_served_model_records_the_embedded_readers_replies(
    served, tmp_path, shared_data, monkeypatch
):
    url, log = served
    monkeypatch.setenv("TEMPORAG_CACHE", str(_cache_beside_the_users(tmp_path)))
    monkeypatch.setenv("TEMPORAG_LLM_TIMEOUT", "900")  # one server thread on a shared CPU answers slowly
    monkeypatch.setenv("TEMPORAG_LLM_BASE_URL", url)
    monkeypatch.setenv("TEMPORAG_LLM_MODEL", ALIAS)
    monkeypatch.setenv("TEMPORAG_LLM_CONCURRENCY", "4")
    through_server = _tour(tmp_path / "served")
    monkeypatch.delenv("TEMPORAG_LLM_BASE_URL")
    monkeypatch.delenv("TEMPORAG_LLM_MODEL")
    embedded = _tour(tmp_path / "embedded")

    settings = through_server["settings"]
    assert (settings["llm_base_url"], settings["llm_concurrency"]) == (url, 4)
    assert embedded["settings"]["llm_base_url"] is None
    calls = through_server["llm_calls"]
    assert (calls["calls"], calls["cached"], calls["failed"], calls["unparsed"]) == (4, 0, 0, 0)
    sent = log.read_text().count('"POST /v1/chat/completions HTTP/1.1" 200')
    assert sent == 4  # every reader call reached the server once

    def replies(data):
        return [
            (p["quid"], p["raw"], p["answers"], p["error"]) for p in data["predictions"]["semantic_reader"]
        ]

    assert len(replies(through_server)) == 4
    assert replies(through_server) == replies(embedded)
    served_hits = through_server["metrics"]["semantic_reader/hits@1_strict"]
    assert served_hits["value"] == embedded["metrics"]["semantic_reader/hits@1_strict"]["value"]
