"""No code runs from a cache, and nothing planted in one is trusted (issue 41, item 1).

Each attack is planted as a careful user with someone else's cache would meet it: a pickle whose
``__reduce__`` writes a marker file, a swapped embedding chunk, a tampered LLM answer row, a replaced ONNX
export, and a merge of a cache holding a pickle.  Each is refused or rebuilt with one line naming the file,
and the rule graph and IA-RAG build come back from their data-only files equal to what was built.
"""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import pickle
import sqlite3
import stat

import numpy as np
import pytest

from temporag import cache, datatree
from temporag.cache import load_npy, save_npy


class _Planted:
    """What an attacker pickles: loading it runs ``open(marker, "w")``."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _pickle_bytes(marker) -> bytes:
    return pickle.dumps(_Planted(str(marker)))


def _graph(slice_kg):
    from temporag.methods.star_rag import GraphParams, load_or_build

    return load_or_build(slice_kg, GraphParams(min_support=0.6, k_type=2))


def assert_same(a, b, where="root"):
    """Equal as pickle would restore it: same types, same arrays (dtype, shape, bytes), same dict keys."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, np.ndarray):
        assert (a.dtype, a.shape, a.tobytes()) == (b.dtype, b.shape, b.tobytes()), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif dataclasses.is_dataclass(a) or hasattr(a, "__dict__") and not isinstance(a, type):
        fields = [f.name for f in dataclasses.fields(a)] if dataclasses.is_dataclass(a) else list(vars(a))
        for name in fields:
            assert_same(getattr(a, name), getattr(b, name), f"{where}.{name}")
    else:
        assert a == b or (a != a and b != b), (where, a, b)  # NaN equals NaN here


# -- data-only structures: exact round trips ------------------------------------------------------------


def test_rule_graph_comes_back_from_its_npz_equal_to_the_built_one(slice_kg, tmp_cache):
    built = _graph(slice_kg)
    (entry,) = (tmp_cache / "star_rag").glob("*.npz")
    assert not list(tmp_cache.rglob("*.pkl"))
    loaded = _graph(slice_kg)
    assert loaded.timings.pop("loaded_from_cache") == 1.0 and built.timings.pop("loaded_from_cache") == 0.0
    loaded.timings.pop("load")
    assert_same(built, loaded)
    assert_same(pickle.loads(pickle.dumps(built)), loaded)  # what the pickle of old gave back


def test_ia_rag_build_comes_back_from_its_npz_equal_to_the_built_one(shared_data, tmp_cache):
    from temporag.methods.ia_rag import build_index, corpus
    from temporag.retrieval.embed import Encoder

    docs, _, _ = corpus.load("ComplexTR", shared_data)
    doc = next(d for d in docs if d.title == "Hans Kramers")
    built = build_index([doc], Encoder(), tau=0.6, progress=False)
    assert len(list((tmp_cache / "ia_rag").glob("*.npz"))) == 1
    loaded = build_index([doc], Encoder(), tau=0.6, progress=False)
    assert loaded is not built and loaded.index.forest.meus and len(loaded.index.graph.pairs)
    assert_same(built, loaded)


def test_a_data_tree_builds_only_the_classes_its_reader_names():
    f = io.BytesIO()
    datatree.dump({"x": np.arange(3)}, f, ())
    f.seek(0)
    archive = dict(np.load(f))
    archive[datatree.TREE] = np.frombuffer(
        json.dumps({"format": 1, "root": {"__obj__": "os:system", "f": {}}}).encode(), dtype=np.uint8
    )
    forged = io.BytesIO()
    np.savez(forged, **archive)
    forged.seek(0)
    with pytest.raises(datatree.FormatError, match="'os:system', not one of the classes expected here"):
        datatree.load(forged, ())
    with pytest.raises(TypeError, match="object array"):
        datatree.dump(np.array([object()]), io.BytesIO(), ())


# -- a planted pickle ------------------------------------------------------------------------------------


@pytest.mark.parametrize("slot", [".pkl", ".npz"])
def test_a_planted_pickle_never_runs_and_the_graph_is_rebuilt(slice_kg, tmp_cache, tmp_path, caplog, slot):
    from temporag.methods.star_rag import GraphParams, graph_cache_path

    marker = tmp_path / "pwned"
    entry = graph_cache_path(slice_kg, GraphParams(min_support=0.6, k_type=2)).with_suffix(slot)
    entry.write_bytes(_pickle_bytes(marker))  # where kits before this one kept the graph, or where it is now
    entry.with_name(entry.name + ".sha256").write_text(_sha256(entry))  # the old, unsigned sidecar
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        graph = _graph(slice_kg)
    assert not marker.exists()
    assert graph.timings["loaded_from_cache"] == 0.0 and graph.mdl.n_selected > 0
    if slot == ".npz":  # refused with one line naming it, and rebuilt in its place
        said = [r.getMessage() for r in caplog.records if str(entry) in r.getMessage()]
        assert len(said) == 1 and "not signed with this machine's cache key" in said[0], caplog.text
        assert _graph(slice_kg).timings["loaded_from_cache"] == 1.0


def test_a_pickled_array_is_refused_even_when_signed(tmp_cache, tmp_path, caplog):
    """Belt and braces: an object array (a pickle inside a .npy) with a valid signature still never loads."""
    marker = tmp_path / "pwned"
    path = cache.cache_path("embeddings", "planted", ".npy")
    bad = np.empty(1, dtype=object)
    bad[0] = _Planted(str(marker))
    cache.save_with_hash(path, lambda tmp: np.save(tmp.open("wb"), bad, allow_pickle=True))
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        assert load_npy(path) is None
    assert not marker.exists() and not path.exists()
    assert f"cache entry {path} is invalid (does not load (ValueError: Object arrays" in caplog.text


def _sha256(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rehash(path) -> None:
    """What an attacker can write beside a replaced entry: its sha256, in every sidecar there is (the
    signature beside it kept: without the key there is no other to write)."""
    path.with_name(path.name + ".sha256").write_text(_sha256(path) + "\n")
    mac = cache.sidecar_path(path)
    mac.write_text(f"{_sha256(path)} {mac.read_text().split()[1]}\n")


# -- a swapped .npy --------------------------------------------------------------------------------------


def test_a_swapped_embedding_chunk_is_refused_and_embedded_again(kg, tmp_cache, caplog):
    from temporag.retrieval.embed import Encoder

    encoder = Encoder()
    texts = kg.relation_labels[:40]
    first = encoder.encode_cached(texts)
    (path,) = (tmp_cache / "embeddings").glob("*.npy")
    swapped = np.roll(first, 1, axis=0)  # unit norms, right shape and dtype: only the signature tells
    np.save(path, swapped)
    _rehash(path)  # whoever can write the entry can write its hash
    with caplog.at_level(logging.WARNING, logger="temporag.cache"):
        again = encoder.encode_cached(texts)
    assert np.allclose(again, first, atol=1e-5)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and said[0].startswith(f"cache entry {path} is invalid (bytes do not match")


def test_an_entry_signed_for_another_slot_is_refused(tmp_cache):
    a, b = cache.cache_path("embeddings", "a", ".npy"), cache.cache_path("embeddings", "b", ".npy")
    save_npy(a, np.eye(2, dtype=np.float32))
    save_npy(b, np.ones((2, 2), dtype=np.float32))
    for suffix in ("", cache.SIDECAR):  # b's file and signature copied over a's
        a.with_name(a.name + suffix).write_bytes(b.with_name(b.name + suffix).read_bytes())
    cache._VERIFIED.clear()
    assert load_npy(a) is None and np.array_equal(load_npy(b), np.ones((2, 2)))


def test_an_entry_signed_with_another_key_is_refused(tmp_cache, tmp_path, monkeypatch):
    path = cache.cache_path("embeddings", "k", ".npy")
    save_npy(path, np.eye(2, dtype=np.float32))
    monkeypatch.setenv("TEMPORAG_CACHE_KEY_FILE", str(tmp_path / "other" / "cache.key"))
    assert load_npy(path) is None
    key = tmp_path / "other" / "cache.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_text().strip()) == 64


# -- a tampered LLM answer -------------------------------------------------------------------------------


def _record(text: str) -> dict:
    return {
        "text": text,
        "prompt_tokens": 3,
        "completion_tokens": 2,
        "token_source": "server",
        "latency_s": 0.1,
        "model": "m",
    }


def test_a_tampered_llm_answer_is_refused_and_asked_again(tmp_path, caplog):
    from temporag.llm import ResponseCache

    db = tmp_path / "llm.sqlite"
    store = ResponseCache(db)
    store.put("k1", "m", "http://127.0.0.1/v1", _record("Paris"))
    store.put("k2", "m", "http://127.0.0.1/v1", _record("Rome"))
    assert store.get("k1")["text"] == "Paris"
    with sqlite3.connect(db) as conn:  # a well-formed record, another answer: only the signature tells
        conn.execute("UPDATE responses SET response = ? WHERE key = ?", (json.dumps(_record("Lyon")), "k1"))
    with caplog.at_level(logging.WARNING, logger="temporag.llm.cache"):
        assert store.get("k1") is None
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and f"LLM cache row k1 in {db} is invalid (its signature does not match" in said[0]
    assert "k1" not in store.keys() and store.get("k2")["text"] == "Rome"  # removed: asked again


def test_answers_from_before_signatures_are_asked_again_said_once(tmp_path, caplog):
    from temporag.llm import ResponseCache

    db = tmp_path / "llm.sqlite"
    with sqlite3.connect(db) as conn:  # the schema of kits before signatures
        conn.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT, endpoint TEXT, "
            "response TEXT NOT NULL, created REAL NOT NULL)"
        )
        for key in ("old1", "old2"):
            conn.execute("INSERT INTO responses VALUES (?, 'm', 'e', ?, 0)", (key, json.dumps(_record(key))))
    store = ResponseCache(db)
    with caplog.at_level(logging.WARNING, logger="temporag.llm.cache"):
        assert store.get("old1") is None and store.get("old2") is None
    assert [r.getMessage() for r in caplog.records] == [
        f"LLM cache {db} holds answers written before answers were signed; they are asked again"
    ]
    store.put("old1", "m", "e", _record("new"))
    assert store.get("old1")["text"] == "new"


# -- a replaced ONNX export: test_cache_heal.test_a_replaced_onnx_export_is_exported_again --------------


# -- cache merge -----------------------------------------------------------------------------------------


def test_merge_imports_only_data_and_signs_it(tmp_path, caplog):
    from temporag.batch.cachesync import merge_cache_dirs
    from temporag.llm import ResponseCache

    src, dest, marker = tmp_path / "theirs", tmp_path / "mine", tmp_path / "pwned"
    for folder in ("star_rag", "embeddings", "onnx", "timer4_retriever/k"):
        (src / folder).mkdir(parents=True)
    (src / "star_rag" / "graph.pkl").write_bytes(_pickle_bytes(marker))
    (src / "star_rag" / "graph.pkl.sha256").write_text(_sha256(src / "star_rag" / "graph.pkl"))
    np.save(src / "embeddings" / "chunk.npy", np.eye(3, dtype=np.float32))  # their key: unsigned here
    (src / "onnx" / "export.onnx").write_bytes(b"graph")
    (src / "embeddings" / "run.sh").write_text("rm -rf ~")
    (src / "timer4_retriever" / "k" / "model.st").write_bytes(b"weights")
    ResponseCache(src / "llm.sqlite").put("q", "m", "e", _record("theirs"))
    with caplog.at_level(logging.WARNING, logger="temporag.batch.cachesync"):
        counts = merge_cache_dirs(src, dest)
    assert counts == {"llm_rows": 1, "files": 1, "skipped": 4}
    said = sorted(r.getMessage() for r in caplog.records)
    assert [s.split(":")[0] for s in said] == [
        f"cache entry {src / name} not merged"
        for name in (
            "embeddings/run.sh",
            "onnx/export.onnx",
            "star_rag/graph.pkl",
            "timer4_retriever/k/model.st",
        )
    ]
    assert ".pkl is not a data-only format" in said[2]
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file() and p.parent != dest) == [
        "embeddings/chunk.npy",
        "embeddings/chunk.npy.mac",
    ]
    assert np.array_equal(load_npy(dest / "embeddings" / "chunk.npy"), np.eye(3))  # signed with our key
    assert ResponseCache(dest / "llm.sqlite").get("q")["text"] == "theirs"
    assert not marker.exists()
