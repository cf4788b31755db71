"""`check` on the staged data, mirroring (symlink/copy), corruption detection and pinned downloads
(with urllib replaced by a local server stand-in: the tests never touch the network)."""

from __future__ import annotations

import gzip
import hashlib
import io
import urllib.error
from pathlib import Path

import pytest

from temporag.data import catalog, fetch
from temporag.data.errors import MissingDataError


@pytest.fixture(scope="module")
def shared(shared_data) -> Path:
    """../shared/data (or TEMPORAG_DATA), as conftest finds it."""
    return shared_data


def test_registry_lists_every_staged_file(shared):
    staged = {str(p.relative_to(shared))[:-3] for p in shared.rglob("*.gz")}
    known = {f.path for f in catalog.FILES if f.sha256}
    assert staged == known
    assert catalog.entry("multitq/kg/full.txt.gz").raw_sha256 == catalog.MULTITQ_FULL_SHA256
    # the paths the MultiTQ loader reads are registered and required
    for path in (
        "multitq/kg/full.txt",
        "multitq/kg/entity2id.json",
        "multitq/kg/relation2id.json",
        "multitq/kg/ts2id.json",
        "multitq/questions/test_sample_shared.json",
    ):
        assert catalog.entry(path).required
    with pytest.raises(KeyError, match="known: multitq"):
        catalog.files("nope")


def test_check_passes_on_shared_data(shared):
    results = fetch.check(data_dir=shared)
    assert all(r.ok for r in results), [r for r in results if not r.ok]
    by_path = {r.path: r for r in results}
    full = by_path["multitq/kg/full.txt"]
    assert full.status == "ok" and full.actual == catalog.MULTITQ_FULL_SHA256  # verified on the content
    assert by_path["cronquestions/kg/full.txt"].status == "missing"  # known, not staged, optional
    assert sum(r.status == "ok" for r in results) == len(list(shared.rglob("*.gz")))


@pytest.mark.parametrize("through_symlink", [False, True], ids=["direct", "through-symlink"])
def test_mirror_symlinks_then_check(shared, tmp_path, through_symlink):
    if through_symlink:  # ../shared reached through a symlink, as on machines that link it in
        (tmp_path / "linked_shared").symlink_to(shared, target_is_directory=True)
        shared = tmp_path / "linked_shared"
    dest = tmp_path / "mirror"
    results = fetch.fetch(None, dest, source_dir=shared)
    assert all(r.ok for r in results)
    link = dest / "complextr" / "dyg_rag" / "Corpus.json.gz"
    # compare resolved with resolved: the mirror links to the real file, wherever `shared` points from
    assert link.is_symlink()
    assert link.resolve() == (shared / "complextr" / "dyg_rag" / "Corpus.json.gz").resolve()
    assert all(r.ok for r in fetch.check(data_dir=dest))
    from temporag.data import complextr

    assert len(complextr.load_corpus(dest)) == 112


def test_copy_and_corruption_detected(shared, tmp_path):
    fetch.fetch("tempreason", tmp_path, source_dir=shared, copy=True)
    target = tmp_path / "tempreason" / "test_l2.shared_half.jsonl.gz"
    assert target.is_file() and not target.is_symlink()
    assert all(r.ok for r in fetch.check("tempreason", tmp_path))
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    bad = {r.path: r for r in fetch.check("tempreason", tmp_path)}["tempreason/test_l2.shared_half.jsonl"]
    assert bad.status == "mismatch" and not bad.ok
    # a corrupt staged folder is never mirrored
    with pytest.raises(fetch.ChecksumError, match="test_l2.shared_half.jsonl.gz"):
        fetch.fetch("tempreason", tmp_path / "again", source_dir=tmp_path)


def test_recompressed_and_plain_copies_pass_on_content(shared, tmp_path):
    src = shared / "complextr" / "dyg_rag" / "Corpus.json.gz"
    content = gzip.decompress(src.read_bytes())
    (tmp_path / "complextr" / "dyg_rag").mkdir(parents=True)
    (tmp_path / "complextr" / "dyg_rag" / "Corpus.json.gz").write_bytes(
        gzip.compress(content, compresslevel=1)
    )
    plain = tmp_path / "complextr" / "dyg_rag" / "Question.shared_half.json"
    plain.write_bytes(
        gzip.decompress((shared / "complextr" / "dyg_rag" / "Question.shared_half.json.gz").read_bytes())
    )
    results = {r.path: r for r in fetch.check("complextr", tmp_path)}
    assert results["complextr/dyg_rag/Corpus.json"].status == "ok"
    assert results["complextr/dyg_rag/Question.shared_half.json"].status == "ok"
    assert results["complextr/dyg_rag/statistics.json"].status == "missing"
    assert results["complextr/dyg_rag/statistics.json"].ok  # optional


def test_full_txt_is_checked_on_content(shared, tmp_path):
    # an LF copy of MultiTQ's full.txt (what TimeR4 ships) is not the staged file
    content = gzip.decompress((shared / "multitq" / "kg" / "full.txt.gz").read_bytes())
    target = tmp_path / "multitq" / "kg" / "full.txt"
    target.parent.mkdir(parents=True)
    target.write_bytes(content.replace(b"\r\n", b"\n"))
    result = {r.path: r for r in fetch.check("multitq", tmp_path)}["multitq/kg/full.txt"]
    assert result.status == "mismatch" and result.expected == catalog.MULTITQ_FULL_SHA256
    assert result.message == "content has the wrong sha256"
    target.unlink()  # the same content gzipped: a readable .gz whose content is still not the staged file
    target.with_name("full.txt.gz").write_bytes(gzip.compress(content.replace(b"\r\n", b"\n")))
    result = {r.path: r for r in fetch.check("multitq", tmp_path)}["multitq/kg/full.txt"]
    assert (result.status, result.message) == ("mismatch", "uncompressed content has the wrong sha256")


def test_missing_required_source_file(tmp_path):
    with pytest.raises(MissingDataError, match="complextr"):
        fetch.fetch("complextr", tmp_path / "dest", source_dir=tmp_path / "empty")


class _Response(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.headers = {"Content-Length": str(len(data))}


def _serve(monkeypatch, files: dict[str, bytes]) -> list[str]:
    asked: list[str] = []

    def urlopen(url, timeout=None):
        asked.append(url)
        if url not in files:
            raise urllib.error.URLError("no network in tests")
        return _Response(files[url])

    monkeypatch.setattr(fetch.urllib.request, "urlopen", urlopen)
    return asked


def test_offline_download_fails_clearly(monkeypatch, tmp_path):
    _serve(monkeypatch, {})
    with pytest.raises(
        fetch.FetchError, match=r"cannot download https://raw.githubusercontent.com/.*Offline\?"
    ):
        fetch.fetch("dyg-rag", tmp_path)
    assert not any(tmp_path.rglob("*.json*"))  # nothing half-written


def test_download_verifies_and_transforms(shared, monkeypatch, tmp_path):
    demo = catalog.entry("dyg-rag/demo_Corpus.json")
    full = catalog.entry("multitq/kg/full.txt")
    easy = catalog.entry("timeqa/human_train.easy.jsonl")
    full_lf = gzip.decompress((shared / "multitq" / "kg" / "full.txt.gz").read_bytes()).replace(
        b"\r\n", b"\n"
    )
    easy_gzip = gzip.compress(
        gzip.decompress((shared / "timeqa" / "human_train.easy.jsonl.gz").read_bytes()), compresslevel=1
    )
    asked = _serve(
        monkeypatch,
        {
            demo.url: gzip.decompress((shared / "dyg-rag" / "demo_Corpus.json.gz").read_bytes()),
            full.url: full_lf,  # TimeR4's LF copy, turned back into MultiTQ's CRLF bytes
            easy.url: easy_gzip,  # the original ships gzip-compressed
        },
    )
    for entry in (demo, full, easy):
        monkeypatch.setattr(catalog, "FILES", (entry,))
        (result,) = fetch.fetch(entry.dataset, tmp_path)
        assert result.status == "ok", result
    assert (tmp_path / "multitq" / "kg" / "full.txt").read_bytes().count(b"\r\n") == 461_329
    # a second run finds the verified files and downloads nothing
    asked.clear()
    fetch.fetch("dyg-rag", tmp_path)
    assert asked == []


def test_download_with_wrong_content_leaves_nothing(monkeypatch, tmp_path):
    demo = catalog.entry("dyg-rag/demo_Corpus.json")
    _serve(monkeypatch, {demo.url: b"[]"})
    with pytest.raises(fetch.ChecksumError, match="demo_Corpus.json"):
        fetch.fetch("dyg-rag", tmp_path)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_derived_files_cannot_be_downloaded(shared, monkeypatch, tmp_path):
    corpus = catalog.entry("complextr/dyg_rag/Corpus.json")
    stats = catalog.entry("complextr/dyg_rag/statistics.json")
    _serve(
        monkeypatch,
        {
            corpus.url: gzip.decompress((shared / "complextr" / "dyg_rag" / "Corpus.json.gz").read_bytes()),
            stats.url: gzip.decompress(
                (shared / "complextr" / "dyg_rag" / "statistics.json.gz").read_bytes()
            ),
        },
    )
    with pytest.raises(fetch.FetchError, match=r"no public source.*Question.shared_half.json"):
        fetch.fetch("complextr", tmp_path)
    assert all(r.status == "ok" for r in fetch.check("complextr", tmp_path) if "Question" not in r.path)


def test_a_download_is_written_and_hashed_as_it_streams(tmp_path):
    data = bytes(range(256)) * 12_000  # several read blocks
    source = tmp_path / "source.bin"
    source.write_bytes(data)
    out = tmp_path / "out.bin"
    digest = fetch._download(source.as_uri(), out, "source.bin", timeout=5)
    assert out.read_bytes() == data and digest == hashlib.sha256(data).hexdigest()
