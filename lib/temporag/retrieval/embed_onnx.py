"""The sentence encoder run by ONNX Runtime: same weights, two to three times the CPU throughput of torch.

The kit never downloads a model, so the ONNX graph is exported here, once, from the packaged
sentence-transformers folder (the transformer, mean pooling and L2 normalisation in one graph) and kept
under ``<cache>/onnx``; ``onnx-int8`` additionally quantises its matrix multiplications to int8
(dynamic, per channel).  Exports are keyed by the bytes of the model's weights, the backend and the
export recipe, so a changed model or recipe gets a fresh export and two backends never share a file.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

import numpy as np

from temporag.cache import building, cache_path, content_hash, discard, file_sha256, problem, save_with_hash
from temporag.config import EMBED_BACKENDS
from temporag.progress import tqdm

log = logging.getLogger(__name__)
BACKENDS = EMBED_BACKENDS  # the settings' vocabulary (config), one list
SMOKE_CPU_DEFAULT = "onnx-int8"  # what TEMPORAG_EMBED_BACKEND=auto runs for a smoke run on a CPU
EXPORT_VERSION = 1  # bump when the export recipe changes (opset, graph outputs, quantisation options)
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def check_backend(backend: str, device: str = "cpu", profile: str | None = None) -> str:
    """The backend to run: ``backend`` itself, or for ``auto`` onnx-int8 when a smoke run embeds on the CPU
    (plumbing, where speed is what matters) and the torch reference otherwise (paper runs, library use, a
    GPU); a ValueError names the setting and the allowed values."""
    if backend == "auto":
        return SMOKE_CPU_DEFAULT if profile == "smoke" and device != "cuda" else "torch"
    if backend not in BACKENDS:
        raise ValueError(
            f"TEMPORAG_EMBED_BACKEND={backend!r} is not one of auto, {', '.join(BACKENDS)} "
            "(torch is the fp32 reference; onnx runs the same graph faster; onnx-int8 quantises it; "
            "auto: onnx-int8 for smoke runs on a CPU, torch otherwise)"
        )
    return backend


def weights_digest(model_dir: str | Path) -> str:
    """sha256 of the model's weight files (what an export is built from)."""
    files = sorted(p for p in Path(model_dir).rglob("*") if p.suffix in (".safetensors", ".bin"))
    if not files:
        raise RuntimeError(f"no weight files (*.safetensors, *.bin) under {model_dir}")
    return content_hash(*[(p.name, file_sha256(p)) for p in files])


def export_path(model_dir: str | Path, backend: str, cache_dir: str | Path) -> Path:
    """Where the export of ``model_dir`` for ``backend`` lives in the cache (built on first use)."""
    key = content_hash("onnx-export", EXPORT_VERSION, OPSET, backend, weights_digest(model_dir))
    return cache_path("onnx", key, ".onnx", cache_dir)


def build_export(model_dir: str | Path, backend: str, cache_dir: str | Path) -> Path:
    """The cached ONNX file for ``backend``, exporting (and quantising) it first if it is not there yet.
    Several runs starting at once export it once: the others wait on its build lock, then load it.

    An export is trusted only with the signature made when it was built and matching its bytes
    (:func:`~temporag.cache.cache_path` removes one that differs — replaced, garbled, or built before
    signatures: a wrong export loads and gives wrong vectors, so loading is no check) and is exported again.
    An export that is there and signed is used without taking its build lock, so a read-only cache works."""
    path = export_path(model_dir, check_backend(backend), cache_dir)
    if _trusted(path, writable=_writable(path.parent)):
        return path
    with building(path):
        if _trusted(path, writable=True):
            return path
        if backend == "onnx":
            save_with_hash(path, lambda tmp: _export_fp32(model_dir, tmp))
        else:
            fp32 = build_export(model_dir, "onnx", cache_dir)
            save_with_hash(path, lambda tmp: _quantise(fp32, tmp))
        log.info("exported %s (%s) to %s", model_dir, backend, path)
    return path


def _trusted(path: Path, writable: bool) -> bool:
    """The export is there with a valid signature (an invalid one was removed by cache_path, and is
    exported again); where the cache cannot be written, an invalid export is refused in one line."""
    found = problem(path)
    if found is None:
        return True
    if writable or found == "missing":
        return False
    raise RuntimeError(
        f"ONNX export {path} cannot be trusted ({found}) and the cache is read-only: use a writable "
        "TEMPORAG_CACHE, or the cache key of whoever built it (TEMPORAG_CACHE_KEY_FILE)"
    )


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK)


def _export_fp32(model_dir: str | Path, out: Path) -> None:
    """Trace the transformer with mean pooling and normalisation on top, dynamic batch and length."""
    import torch
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_dir), device="cpu")
    pooled = _PooledEncoder(st[0].auto_model.eval())
    texts = ["a short text", "a somewhat longer text to trace"]
    sample = st.tokenizer(texts, padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on the model's Python control flow
        torch.onnx.export(
            pooled,
            tuple(sample[name] for name in INPUTS),
            str(out),
            input_names=list(INPUTS),
            output_names=["embedding"],
            dynamic_axes={**axes, "embedding": {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )


def _quantise(fp32: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # onnxruntime logs a root-logger advice to run its shape pre-processing first; dynamic int8 quantisation
    # of MatMul weights needs no shapes, so the advice is noise in every first run's output
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.setLevel(level)


def _PooledEncoder(transformer):  # noqa: N802 - the class is defined on call so torch is imported lazily
    import torch

    class PooledEncoder(torch.nn.Module):
        """Transformer → mean over real tokens → unit length: what sentence-transformers computes."""

        def __init__(self, transformer) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    return PooledEncoder(transformer)


class OnnxSentenceEncoder:
    """Tokenise with the model's own tokenizer, run the exported graph, return unit float32 vectors.

    Texts are sorted by length before batching (as sentence-transformers does) so padding stays small."""

    def __init__(self, model_dir: str | Path, backend: str, cache_dir: str | Path, threads: int) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        self.backend = check_backend(backend)
        self.path = build_export(model_dir, backend, cache_dir)
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
        self.max_length = _max_seq_length(model_dir, self.tokenizer)
        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # idle worker threads sleep instead of spinning: the index is built beside the llama-cpp-python
        # compile (make -j2 setup warm), where spinning burned a third more CPU for the same vectors
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - a cut or garbled export fails to load in many ways
            discard(self.path, f"ONNX Runtime cannot load it ({type(exc).__name__}: {exc})")
            self.path = build_export(model_dir, backend, cache_dir)
            self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        width = self.session.get_outputs()[0].shape[1]
        self.dim = width if isinstance(width, int) else int(self.encode(["x"], 1).shape[1])

    def encode(self, texts: list[str], batch_size: int, progress: bool = False) -> np.ndarray:
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), 0), dtype=np.float32)
        starts = range(0, len(texts), batch_size)
        for start in tqdm(starts, desc="batches", disable=not progress):
            rows = order[start : start + batch_size]
            tokens = self.tokenizer(
                [texts[i] for i in rows],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="np",
            )
            feed = {name: tokens[name].astype(np.int64) for name in INPUTS if name in tokens}
            if "token_type_ids" not in feed:
                feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
            vecs = self.session.run(None, feed)[0]
            if out.shape[1] == 0:
                out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
            out[rows] = vecs
        return out


def _max_seq_length(model_dir: str | Path, tokenizer) -> int:
    """sentence-transformers' truncation length (sentence_bert_config.json), else the tokenizer's."""
    import json

    config = Path(model_dir) / "sentence_bert_config.json"
    if config.exists():
        value = json.loads(config.read_text()).get("max_seq_length")
        if value:
            return int(value)
    return int(min(getattr(tokenizer, "model_max_length", 512), 512))


def onnx_available() -> bool:
    """True when onnxruntime (and onnx, for the export) can be imported."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))
