"""Caches that heal: a cut, garbled or zeroed entry is logged with its path, removed and rebuilt.

Real entries are corrupted: an embedding chunk of real MultiTQ relation names, and the STAR-RAG rule
graph of a real MultiTQ slice (through ``load_or_build``, which goes through ``cache.load_tree``).
"""

from __future__ import annotations

import hashlib
import logging

import numpy as np
import pytest

import temporag.cache
from temporag.cache import save_npy, sidecar_path


@pytest.fixture()
def encoder(tmp_cache):
    from temporag.retrieval.embed import Encoder

    return Encoder()


def _chunk(tmp_cache):
    files = sorted((tmp_cache / "embeddings").glob("*.npy"))
    assert len(files) == 1, files
    return files[0]


def _cut(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _garble(path):
    data = bytearray(path.read_bytes())
    data[-64:] = b"\x7f" * 64  # same size, same header, different floats
    path.write_bytes(bytes(data))


def _garbage(path):
    path.write_bytes(b"this is not an array")


def _zeros_legacy(path):
    # an all-zeros chunk of the right shape written before hashes were kept: only its norms betray it
    arr = np.load(path)
    sidecar_path(path).unlink()
    with open(path, "wb") as f:
        np.save(f, np.zeros_like(arr))


def _zeros_hashed(path):
    save_npy(path, np.zeros_like(np.load(path)))  # hash matches, the content does not


@pytest.mark.parametrize("corrupt", [_cut, _garble, _garbage, _zeros_legacy, _zeros_hashed])
def test_embedding_chunk_heals(kg, encoder, tmp_cache, caplog, corrupt):
    texts = kg.relation_labels[:40]
    first = encoder.encode_cached(texts)
    path = _chunk(tmp_cache)
    corrupt(path)
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        again = encoder.encode_cached(texts)
    assert np.allclose(again, first, atol=1e-5)
    assert f"cache entry {path} is invalid" in caplog.text and "rebuilt" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):  # the rebuilt entry is trusted again
        assert np.allclose(encoder.encode_cached(texts), first, atol=1e-5)
    assert caplog.text == ""
    assert sidecar_path(path).exists()


def test_embedding_chunk_from_before_signatures_is_embedded_again(kg, encoder, tmp_cache):
    texts = kg.relation_labels[:40]
    first = encoder.encode_cached(texts)
    path = _chunk(tmp_cache)
    legacy = path.with_name(path.name + ".sha256")
    sidecar_path(path).rename(legacy)  # as written by a kit that kept an unsigned hash
    legacy.write_text(hashlib.sha256(path.read_bytes()).hexdigest() + "\n")
    temporag.cache._VERIFIED.clear()  # a later process: nothing verified yet
    assert np.array_equal(encoder.encode_cached(texts), first)
    assert sidecar_path(path).exists() and not legacy.exists()  # rebuilt and signed; the old hash gone


# -- the STAR-RAG rule graph (a data-only .npz) -------------------------------------------------------------


def _graph(slice_kg):
    from temporag.methods.star_rag import GraphParams, load_or_build

    return load_or_build(slice_kg, GraphParams(min_support=0.6, k_type=2))


def _entry(tmp_cache):
    files = sorted((tmp_cache / "star_rag").glob("*.npz"))
    assert len(files) == 1, files
    return files[0]


@pytest.mark.parametrize("corrupt", [_cut, _garble, _garbage])
def test_rule_graph_entry_heals(slice_kg, tmp_cache, caplog, corrupt):
    first = _graph(slice_kg)
    path = _entry(tmp_cache)
    corrupt(path)
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        rebuilt = _graph(slice_kg)
    assert rebuilt.timings["loaded_from_cache"] == 0.0  # rebuilt, not a crash
    assert np.array_equal(rebuilt.mdl.selected, first.mdl.selected)
    assert f"cache entry {path} is invalid" in caplog.text
    assert _graph(slice_kg).timings["loaded_from_cache"] == 1.0


def test_rule_graph_in_a_read_only_cache_is_read_without_its_build_lock(slice_kg, tmp_cache, monkeypatch):
    """In a read-only cache an entry that exists is read without taking its build lock (`….building`)."""
    first = _graph(slice_kg)

    def no_lock(path, **kw):
        raise OSError(30, "Read-only file system", str(path) + ".building")

    monkeypatch.setattr(temporag.cache, "building", no_lock)
    again = _graph(slice_kg)
    assert again.timings["loaded_from_cache"] == 1.0
    assert np.array_equal(again.mdl.selected, first.mdl.selected)


# -- TimeR4's cached FAISS index and trained model -----------------------------------------------------


def _store(slice_kg, tmp_cache):
    from temporag.methods.timer4.store import KnowledgeStore

    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(slice_kg.n_triples, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    days = int(slice_kg.t_start.max() - slice_kg.t_start.min()) + 1
    dates = np.eye(8, dtype=np.float32)[np.arange(days) % 8]
    return KnowledgeStore(
        slice_kg, vecs, dates, int(slice_kg.t_start.min()), nlist=4, nprobe=2, cache_dir=tmp_cache
    )


def _faiss(tmp_cache):
    files = sorted((tmp_cache / "timer4_ivf").glob("*.faiss"))
    assert len(files) == 1, files
    return files[0]


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("corrupt", [_cut, _garble])
def test_timer4_faiss_index_cut_or_garbled_is_rebuilt(slice_kg, tmp_cache, caplog, corrupt, legacy):
    first = _store(slice_kg, tmp_cache).index
    path = _faiss(tmp_cache)
    assert sidecar_path(path).exists()  # the signature of its bytes, made when it was written
    if legacy:
        sidecar_path(path).unlink()  # unsigned: rebuilt, however whole it looks
    corrupt(path)
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        rebuilt = _store(slice_kg, tmp_cache).index  # was: RuntimeError … read_vector_with_known_size
    assert f"cache entry {path} is invalid" in caplog.text
    assert rebuilt.ntotal == first.ntotal == slice_kg.n_triples and sidecar_path(path).exists()
    q = _store(slice_kg, tmp_cache).triple_vectors[:3]
    assert np.array_equal(rebuilt.search(q, 5)[1], first.search(q, 5)[1])


def _safetensors_folder(folder):
    from safetensors.numpy import save_file

    folder.mkdir(parents=True)
    save_file({"w": np.arange(4096, dtype=np.float32).reshape(64, 64)}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text("{}")
    (folder / "timer4_training.json").write_text('{"train_seconds": 1.0, "losses": []}')
    return folder / "model.safetensors"


@pytest.mark.parametrize("recorded", [True, False])
def test_a_cut_trained_model_is_removed_and_retrained(tmp_path, caplog, recorded):
    from temporag.cache import MANIFEST, check_folder, record_folder

    model = _safetensors_folder(tmp_path / "model")
    if recorded:
        record_folder(model.parent)
        assert check_folder(model.parent) and (model.parent / MANIFEST).exists()
        _cut(model)  # else: a folder from before signed manifests is not trusted, whole or not
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        assert not check_folder(model.parent)
    assert not model.parent.exists() and "is invalid" in caplog.text


def test_train_retriever_retrains_when_its_cached_model_is_cut(kg, tmp_path, monkeypatch):
    from temporag.cache import record_folder
    from temporag.methods.timer4 import train

    examples = [object()]
    monkeypatch.setattr(train, "training_key", lambda *a: "k")
    model = _safetensors_folder(tmp_path / "timer4_retriever" / "k")
    record_folder(model.parent)
    cached = train.train_retriever(kg, examples, cache_dir=tmp_path, progress=False)
    assert cached.cached and (model.parent / ".sha256.json").exists()  # whole: trusted and recorded
    _cut(model)

    class Retrained(Exception):
        pass

    def sentence_transformer(*a, **kw):
        raise Retrained

    import sentence_transformers

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", sentence_transformer)
    with pytest.raises(Retrained):  # not a RuntimeError while loading the cut model later
        train.train_retriever(kg, examples, cache_dir=tmp_path, progress=False)


# -- ONNX exports --------------------------------------------------------------------------------------


@pytest.fixture()
def fake_export(tmp_path, monkeypatch):
    """build_export with a stand-in exporter (no torch): each export writes new bytes and is counted."""
    from temporag.retrieval import embed_onnx

    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "model.safetensors").write_bytes(b"weights")
    made = []

    def export(model_dir, out):
        made.append("onnx")
        out.write_bytes(b"onnx graph " * 1000)

    def quantise(fp32, out):
        made.append("int8")
        out.write_bytes(fp32.read_bytes()[:5000])

    monkeypatch.setattr(embed_onnx, "_export_fp32", export)
    monkeypatch.setattr(embed_onnx, "_quantise", quantise)
    return model_dir, made


def test_onnx_export_garbled_is_detected_and_exported_again(fake_export, tmp_cache, caplog):
    from temporag.retrieval.embed_onnx import build_export

    model_dir, made = fake_export
    path = build_export(model_dir, "onnx-int8", tmp_cache)
    assert made == ["onnx", "int8"] and sidecar_path(path).exists()
    assert build_export(model_dir, "onnx-int8", tmp_cache) == path and made == ["onnx", "int8"]
    good = path.read_bytes()
    _garble(path)  # still an export ONNX Runtime may load, with wrong weights
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        assert build_export(model_dir, "onnx-int8", tmp_cache) == path
    assert made == ["onnx", "int8", "int8"] and path.read_bytes() == good
    assert f"cache entry {path} is invalid" in caplog.text


def test_a_replaced_onnx_export_is_exported_again(fake_export, tmp_cache, caplog):
    """Issue 41: an export replaced by someone who also rewrote the sha256 beside it (not the signature:
    that needs the key) is refused with one line naming it and exported again."""
    from temporag.retrieval.embed_onnx import build_export

    model_dir, made = fake_export
    path = build_export(model_dir, "onnx", tmp_cache)
    good = path.read_bytes()
    path.write_bytes(b"someone else's graph " * 100)
    mac = sidecar_path(path)
    mac.write_text(f"{hashlib.sha256(path.read_bytes()).hexdigest()} {mac.read_text().split()[1]}\n")
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        assert build_export(model_dir, "onnx", tmp_cache) == path
    assert made == ["onnx", "onnx"] and path.read_bytes() == good
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith(f"cache entry {path} is invalid (bytes do not match")


def test_onnx_export_without_a_recorded_hash_is_exported_again(fake_export, tmp_cache):
    from temporag.retrieval.embed_onnx import build_export

    model_dir, made = fake_export
    path = build_export(model_dir, "onnx", tmp_cache)
    sidecar_path(path).unlink()  # an export from before signatures were made
    temporag.cache._VERIFIED.clear()  # a later process: nothing verified yet
    assert build_export(model_dir, "onnx", tmp_cache) == path
    assert made == ["onnx", "onnx"] and sidecar_path(path).exists()


def test_onnx_export_in_a_read_only_cache_takes_no_build_lock(fake_export, tmp_cache, monkeypatch):
    """An export that exists in a read-only cache is used without its build lock (no `OSError: [Errno 30]
    Read-only file system: ….onnx.building`)."""
    from temporag.retrieval import embed_onnx

    model_dir, made = fake_export
    path = embed_onnx.build_export(model_dir, "onnx", tmp_cache)

    def no_lock(path, **kw):
        raise OSError(30, "Read-only file system", str(path) + ".building")

    monkeypatch.setattr(embed_onnx, "building", no_lock)
    monkeypatch.setattr(embed_onnx, "_writable", lambda folder: False)
    assert embed_onnx.build_export(model_dir, "onnx", tmp_cache) == path and made == ["onnx"]
    sidecar_path(path).unlink()  # no signature, and it cannot be exported again here: refused in one line
    temporag.cache._VERIFIED.clear()
    monkeypatch.setattr(temporag.cache, "discard", lambda path, problem: None)  # cannot remove it either
    with pytest.raises(RuntimeError, match=f"ONNX export {path} cannot be trusted .* the cache is read-only"):
        embed_onnx.build_export(model_dir, "onnx", tmp_cache)
    assert made == ["onnx"]
