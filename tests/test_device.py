"""TEMPORAG_DEVICE (auto | cpu | cuda): one setting for where the embedder and the TimeR4 trainer run;
auto takes the GPU when torch sees one, an explicit cuda that cannot be honoured is a clear error."""

from __future__ import annotations

import pytest

from temporag.config import Settings, describe_device, get_settings, torch_device

torch = pytest.importorskip("torch")


@pytest.fixture()
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def test_auto_is_the_default_and_is_the_cpu_here():
    assert get_settings().device == "auto"
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert torch_device(Settings(device="auto")) == expected
    assert torch_device(Settings(device="CPU ")) == "cpu"


def test_auto_takes_the_gpu_when_torch_sees_one(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert torch_device(Settings(device="auto")) == "cuda"
    assert torch_device(Settings(device="cpu")) == "cpu"  # an explicit cpu stays on the cpu


def test_the_environment_variable_sets_it(monkeypatch, no_gpu):
    monkeypatch.setenv("TEMPORAG_DEVICE", "cpu")
    assert get_settings().device == "cpu" and torch_device() == "cpu"
    monkeypatch.setenv("TEMPORAG_DEVICE", "cuda")
    with pytest.raises(RuntimeError, match="TEMPORAG_DEVICE=cuda"):
        torch_device()


def test_explicit_cuda_without_a_gpu_names_the_setting_and_the_fix(no_gpu):
    with pytest.raises(RuntimeError) as err:
        torch_device(Settings(device="cuda"))
    message = str(err.value)
    assert "TEMPORAG_DEVICE=cuda" in message and "sees no CUDA device" in message
    assert "make setup TORCH=cuda" in message and "TEMPORAG_DEVICE=auto" in message


def test_unknown_value_is_refused():
    with pytest.raises(ValueError, match=r"TEMPORAG_DEVICE='gpu' .*one of auto, cpu, cuda"):
        torch_device(Settings(device="gpu"))


def test_describe_device_names_device_setting_and_build(no_gpu):
    line = describe_device(Settings(device="auto"))
    assert line.startswith("cpu (TEMPORAG_DEVICE=auto; torch ")
    assert line.endswith("no CUDA device)")
    assert ("CPU build" if torch.version.cuda is None else f"CUDA {torch.version.cuda} build") in line


def test_the_embedder_runs_on_the_setting(no_gpu):
    from temporag.retrieval.embed import Encoder

    enc = Encoder(Settings(device="auto", threads=1))
    assert enc.device == "cpu" and enc.model.device.type == "cpu"
    assert enc.encode(["Iraq"]).shape == (1, enc.dim)
    with pytest.raises(RuntimeError, match="TEMPORAG_DEVICE=cuda"):
        Encoder(Settings(device="cuda")).encode(["Iraq"])


def test_the_timer4_trainer_runs_on_the_setting(kg, tmp_path, monkeypatch, no_gpu):
    from temporag.methods.timer4 import negatives, train

    examples = negatives.build_examples(kg, 2, seed=1)
    config = train.TrainConfig(batch_size=2, train_layers=1)
    monkeypatch.setenv("TEMPORAG_DEVICE", "cuda")
    with pytest.raises(RuntimeError, match="TEMPORAG_DEVICE=cuda"):
        train.train_retriever(kg, examples, config, cache_dir=tmp_path, progress=False)
    assert not (tmp_path / "timer4_retriever").exists()  # refused before training anything
    monkeypatch.setenv("TEMPORAG_DEVICE", "auto")
    monkeypatch.setenv("TEMPORAG_THREADS", "1")
    trained = train.train_retriever(kg, examples, config, cache_dir=tmp_path, progress=False)
    assert trained.device == "cpu" and trained.summary()["device"] == "cpu"
    assert train.train_retriever(kg, examples, config, cache_dir=tmp_path, progress=False).device == "cpu"


def test_results_json_records_the_device(tmp_path, no_gpu):
    import json

    from temporag.notebook.results import Results

    r = Results("device_check", {"seed": 0}, out_dir=tmp_path / "out", settings=Settings(device="auto"))
    saved = json.loads((r.dir / "results.json").read_text())
    assert saved["device"] == "cpu" and saved["settings"]["device"] == "auto"
    # the embedding backend is recorded as run: auto outside a smoke run is the torch reference
    assert saved["settings"]["embed_backend"] == "auto" and saved["embed_backend"] == "torch"
    with pytest.raises(RuntimeError, match="TEMPORAG_DEVICE=cuda"):
        Results("device_check", {"seed": 0}, out_dir=tmp_path / "out2", settings=Settings(device="cuda"))


def test_auto_embed_backend_is_int8_for_smoke_runs_on_the_cpu_and_torch_otherwise(monkeypatch):
    from temporag.retrieval.embed import Encoder, run_backend
    from temporag.retrieval.embed_onnx import check_backend

    monkeypatch.setenv("TEMPORAG_EMBED_BACKEND", "")  # unset: the default
    assert get_settings().embed_backend == "auto"
    assert Encoder().backend == "torch"  # library use: the reference
    assert check_backend("auto", "cpu", "smoke") == "onnx-int8"
    assert check_backend("auto", "cpu", "paper") == "torch"  # numbers shown beside the paper's
    assert check_backend("auto", "cuda", "smoke") == "torch"  # a GPU embeds fp32 faster than int8 on a CPU
    assert check_backend("onnx", "cuda", "paper") == "onnx"  # an explicit choice is kept
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    smoke = run_backend(get_settings(), "smoke")
    # the run records its backend, and every encoder of the run's process uses it
    assert smoke.embed_backend == "onnx-int8" and Encoder().backend == "onnx-int8"
    monkeypatch.setenv("TEMPORAG_EMBED_BACKEND", "")
    assert run_backend(get_settings(), "paper").embed_backend == "torch" and Encoder().backend == "torch"
    monkeypatch.setenv("TEMPORAG_EMBED_BACKEND", "onnx")
    assert run_backend(get_settings(), "smoke").embed_backend == "onnx"
