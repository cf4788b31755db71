"""Shared fixtures: the real shared data beside the checkout, and the MultiTQ KG loaded once."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("TEMPORAG_DATA", REPO.parent / "shared" / "data")).resolve()
# the cache signing key of this test session (and of the notebooks it runs): never the user's own
os.environ["TEMPORAG_CACHE_KEY_FILE"] = str(Path(tempfile.mkdtemp(prefix="temporag-key-")) / "cache.key")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (or TEMPORAG_DATA); tests that need real data skip when it is absent."""
    if not (SHARED_DATA / "multitq").exists():
        if os.environ.get("CI"):  # CI always has ../shared beside the clone: absence is a failure
            pytest.fail(f"shared data not found at {SHARED_DATA}")
        pytest.skip(f"shared data not found at {SHARED_DATA} (set TEMPORAG_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def kg(shared_data):
    from temporag.data import multitq

    return multitq.load_kg(shared_data)


@pytest.fixture()
def slice_kg(kg):
    """400 facts among five MultiTQ countries: a real KG whose rule graph builds in seconds."""
    import numpy as np

    from temporag.data.tkg import TemporalKG

    ents = [kg.entity_id[e] for e in ("Iran", "Iraq", "Oman", "Qatar", "China")]
    pick = np.flatnonzero(np.isin(kg.s, ents) & np.isin(kg.o, ents))[:400]
    return TemporalKG(
        kg.s[pick], kg.r[pick], kg.o[pick], kg.t_start[pick], kg.t_end[pick], kg.entities, kg.relations
    )


@pytest.fixture(scope="session")
def questions(shared_data):
    from temporag.data import multitq

    return multitq.load_questions(data_dir=shared_data)


@pytest.fixture()
def results(tmp_path):
    """Empty outputs of a run outside any notebook (no profile: no output-folder rules), for the tests of
    what a package's experiments record."""
    from temporag.notebook.results import Results

    return Results("experiments_test", {"seed": 0}, out_dir=tmp_path / "out")


@pytest.fixture()
def tmp_cache(tmp_path, monkeypatch) -> Path:
    """An empty cache folder for tests that must not see (or pollute) the user's cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TEMPORAG_CACHE", str(cache))
    return cache


@pytest.fixture(autouse=True)
def _closed_llm_breakers():
    """Every test starts with closed LLM circuit breakers (they are per-process state, per endpoint)."""
    from temporag.llm import reset_breakers

    reset_breakers()
    yield
    reset_breakers()


@pytest.fixture(autouse=True)
def _no_artifacts_from_other_tests():
    """The artifacts a process used (methods.artifacts) are per-process state: each test starts with none."""
    from temporag.methods import artifacts

    artifacts.forget()
    yield
    artifacts.forget()


@pytest.fixture(autouse=True)
def _restore_embed_backend(monkeypatch):
    """A notebook run started in-process fixes TEMPORAG_EMBED_BACKEND for its process (embed.run_backend);
    monkeypatch puts the variable back after each test so no test sees another's choice."""
    monkeypatch.setenv("TEMPORAG_EMBED_BACKEND", os.environ.get("TEMPORAG_EMBED_BACKEND", ""))
