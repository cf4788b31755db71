"""Every cache repair a run's kernel makes reaches the console summary, not only a cell's log: a damaged
or removed embedding chunk rebuilt, a damaged llm.sqlite moved aside with its answers salvaged.

A real papermill run of a tiny notebook over a cache damaged beforehand (test_llm_faults' helpers)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from fakes import tiny_notebook
from test_llm_faults import fill_cache, garble

from temporag import cache as cache_mod
from temporag.run.runner import reproduce, run_counts
from temporag.run.summary import summary

# Reads the two damaged chunks (as embed.encode_cached does) and opens the LLM cache (as a client does).
READS = """
from temporag.cache import load_npy
from temporag.config import get_settings
from temporag.llm import ResponseCache
from temporag.notebook.results import Results
res = Results("heal", {"profile": profile, "output_dir": output_dir}, out_dir=output_dir)
folder = get_settings().cache_dir
chunks = [load_npy(folder / "embeddings" / name) for name in ("garbled.npy", "removed.npy")]
res.metric("chunks_read", sum(c is not None for c in chunks))
res.metric("llm_rows", len(ResponseCache(folder / "llm.sqlite")))
"""


def _notebook(path) -> None:
    """A tiny notebook (:func:`fakes.tiny_notebook`) with this file's parameters."""
    tiny_notebook(path, 'profile = "smoke"\noutput_dir = None', READS)


def _damaged_cache(folder) -> None:
    fill_cache(folder, 200)
    garble(folder / "llm.sqlite", [5, 6, 20])
    for name in ("garbled.npy", "removed.npy"):
        cache_mod.save_npy(folder / "embeddings" / name, np.ones((4, 3), dtype=np.float32))
    path = folder / "embeddings" / "garbled.npy"
    path.write_bytes(path.read_bytes()[:-8] + b"\x00" * 8)
    (folder / "embeddings" / "removed.npy").unlink()  # its sidecar stays


@pytest.mark.slow
def test_cache_repairs_in_the_kernel_reach_the_summary(tmp_path, tmp_cache, capsys):
    _damaged_cache(tmp_cache)
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    _notebook(nbs / "heal.ipynb")
    [outcome] = reproduce(
        ["heal"], notebook_dir=nbs, figures_dir=tmp_path / "figures", runs_dir=tmp_path / "runs"
    )
    assert outcome.status == "ok" and outcome.counts == "3 cache repairs"
    garbled, removed, salvaged = outcome.healed
    assert garbled.startswith("cache entry embeddings/garbled.npy was invalid (")
    assert garbled.endswith("): removed and rebuilt")
    assert removed == "cache entry embeddings/removed.npy was missing (its hash remained): rebuilt"
    assert re.fullmatch(
        r"LLM cache llm\.sqlite was damaged \(sqlite quick_check: .+\): moved aside to "
        r"llm\.sqlite\.damaged-[\d-]+; (\d+) answers salvaged, the others will be asked again",
        salvaged,
    )
    n = int(re.search(r"(\d+) answers salvaged", salvaged).group(1))
    results = outcome.output_dir / "results.json"
    assert run_counts(results) == "3 cache repairs"
    assert 100 < n < 200  # as test_llm_faults finds: the readable rows
    table = summary([outcome])
    assert "heal          ok (3 cache repairs)" in table
    assert f"    healed: {salvaged}" in table and f"    healed: {removed}" in table
    printed = capsys.readouterr().out  # reproduce's own line per notebook
    assert f"healed: {salvaged}" in printed


def test_a_process_notes_each_repair_it_makes(tmp_cache):
    before = len(cache_mod.heals())
    path = tmp_cache / "embeddings" / "x.npy"
    cache_mod.save_npy(path, np.ones((2, 2), dtype=np.float32))
    path.write_bytes(b"not an array")
    assert cache_mod.load_npy(path) is None
    assert cache_mod.load_npy(path) is None  # gone now, and its sidecar with it: no second repair
    [heal] = cache_mod.heals()[before:]
    assert heal.startswith("cache entry embeddings/x.npy was invalid (") and "removed and rebuilt" in heal
