"""runbooks/gpu_check.py: its CPU reference vectors, and the CPU numbers it quotes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "runbooks" / "gpu_check.py"


@pytest.fixture(scope="module")
def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reference_holds_the_cpu_vectors_of_every_nth_fact_text(gpu_check, kg, tmp_path, monkeypatch):
    from temporag.config import get_settings
    from temporag.retrieval.embed import Encoder

    monkeypatch.setenv("TEMPORAG_DEVICE", "auto")  # the GPU on a GPU box: the reference stays on the CPU
    monkeypatch.setattr(gpu_check, "REFERENCE_STEP", 40_000)  # 5 rows instead of 504
    gpu_check.make_reference(tmp_path / "ref.npz")
    ref = np.load(tmp_path / "ref.npz")
    assert ref["rows"].tolist() == [0, 40_000, 80_000, 120_000, 160_000]
    assert str(ref["device"]) == "cpu"
    texts = kg.triple_texts()
    expected = Encoder(get_settings(device="cpu")).encode([texts[i] for i in ref["rows"]], progress=False)
    assert np.einsum("ij,ij->i", ref["vectors"], expected).min() > 0.99999


def test_cpu_numbers_are_the_committed_timer4_run(gpu_check):
    # figures/timer4/recall15_before_after.csv of the committed paper run (re-made with #36's entity linker)
    cpu = gpu_check._cpu_recall()
    assert cpu["all", "base model (before)"] == pytest.approx(0.6824, abs=1e-4)
    assert cpu["all", "fine-tuned (after)"] == pytest.approx(0.8302, abs=1e-4)
    assert {c for c, _ in cpu} >= {"all", "Single", "Multiple", "equal", "first_last"}
