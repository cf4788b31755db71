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
    """The CPU column of the check is the committed TimeR4 paper run's recall@15 before / after
    fine-tuning, read from that run's own results.json (its table and metrics), never a number typed
    here: a re-made run moves both together, and a check reading another file or column fails."""
    import json

    committed = json.loads((SCRIPT.parents[1] / "figures" / "timer4" / "results.json").read_text())
    columns = ("base model (before)", "fine-tuned (after)")
    table = committed["tables"]["recall15_before_after"]["records"]
    recorded = {(r["category"], c): r[c] for r in table for c in columns}
    cpu = gpu_check._cpu_recall()
    assert cpu.keys() == recorded.keys() and {c for c, _ in cpu} >= {"all", "Single", "Multiple"}
    for key, value in recorded.items():
        assert cpu[key] == pytest.approx(value, abs=1e-12), key
    for column in columns:
        metric = committed["metrics"][f"recall15/{column}"]["value"]
        assert cpu["all", column] == pytest.approx(metric, abs=1e-12)
