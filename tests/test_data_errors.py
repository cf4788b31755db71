"""Data errors name the file: cut or corrupt files, a KG cut at a line end, pinned checksums, `data check`.

Every case starts from a real staged file of ../shared/data copied into a temporary data folder.
"""

from __future__ import annotations

import gzip
import logging
import shutil

import pytest

from temporag import cli
from temporag.data import catalog, fetch, multitq, tempreason
from temporag.data.errors import DataFormatError
from temporag.data.paths import DataIntegrityWarning

QUESTIONS = "multitq/questions/test_sample_shared.json.gz"
L2 = "tempreason/test_l2.shared_half.jsonl.gz"


def _copy(shared_data, tmp_path, relative):
    target = tmp_path / "data" / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shared_data / relative, target)
    return target


def test_cut_gzip_json_names_file_and_position(shared_data, tmp_path, tmp_cache):
    target = _copy(shared_data, tmp_path, QUESTIONS)
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    with pytest.warns(DataIntegrityWarning, match="test_sample_shared.json.gz"):
        with pytest.raises(DataFormatError) as info:
            multitq.load_questions(data_dir=tmp_path / "data")
    message = str(info.value)
    assert message.startswith("test_sample_shared.json.gz: the file is truncated or corrupt (EOFError")
    assert "reading stopped at byte" in message and "temporag data fetch" in message
    assert info.value.path == str(target)


def test_cut_gzip_jsonl_names_the_line(shared_data, tmp_path, tmp_cache):
    target = _copy(shared_data, tmp_path, L2)
    content = gzip.decompress(target.read_bytes())
    target.write_bytes(gzip.compress(content)[:-5000])  # cut inside the compressed stream
    with pytest.warns(DataIntegrityWarning), pytest.raises(DataFormatError) as info:
        tempreason.load_questions("l2", data_dir=tmp_path / "data")
    assert info.value.line is not None and info.value.line > 1000  # most lines were read
    assert f"test_l2.shared_half.jsonl.gz line {info.value.line}: the file is truncated" in str(info.value)


def test_gzip_failing_its_crc_is_a_data_error(shared_data, tmp_path, tmp_cache):
    target = _copy(shared_data, tmp_path, L2)
    data = bytearray(target.read_bytes())
    data[-8] ^= 0xFF  # the trailer's CRC32: every byte decompresses, the stream check fails at the end
    target.write_bytes(bytes(data))
    with pytest.warns(DataIntegrityWarning, match="not a readable gzip file"):
        with pytest.raises(DataFormatError, match=r"corrupt \(BadGzipFile: CRC check failed") as info:
            tempreason.load_questions("l2", data_dir=tmp_path / "data")
    assert info.value.path == str(target) and info.value.line == 2699  # after the last of 2,698 lines
    assert isinstance(info.value.__cause__, gzip.BadGzipFile)


def test_bytes_that_are_not_utf8_are_a_data_error(shared_data, tmp_path, tmp_cache):
    content = gzip.decompress((shared_data / L2).read_bytes()).split(b"\n")
    content[3] = content[3][:20] + b"\xff\xfe" + content[3][20:]
    target = tmp_path / "mine.jsonl"
    target.write_bytes(b"\n".join(content))
    with pytest.raises(DataFormatError, match="is not UTF-8 text") as info:
        tempreason.parse_questions(target)
    assert info.value.path == str(target)


def test_kg_cut_at_a_line_end_warns_and_strict_fails(shared_data, tmp_path, tmp_cache, caplog, monkeypatch):
    kg_dir = tmp_path / "data" / "multitq" / "kg"
    kg_dir.mkdir(parents=True)
    for name in ("entity2id.json.gz", "relation2id.json.gz"):
        (kg_dir / name).symlink_to(shared_data / "multitq" / "kg" / name)
    with gzip.open(shared_data / "multitq" / "kg" / "full.txt.gz", "rb") as f:
        head = b"".join(f.readline() for _ in range(5000))
    (kg_dir / "full.txt").write_bytes(head)  # a whole number of lines: parses cleanly
    with caplog.at_level(logging.WARNING), pytest.warns(DataIntegrityWarning, match="full.txt") as warned:
        kg = multitq.load_kg(tmp_path / "data")
    assert len(kg) == 5000 and kg.splits == {}
    assert f"the pinned release has {catalog.entry('multitq/kg/full.txt').size:,}" in str(warned[0].message)
    assert "splits are not defined" in caplog.text
    monkeypatch.setenv("TEMPORAG_DATA_STRICT", "1")
    (kg_dir / "full.txt").write_bytes(head[:-1] + b"\n")  # a new file (new mtime): checked again
    with pytest.raises(fetch.ChecksumError, match=str(kg_dir / "full.txt")):
        multitq.load_kg(tmp_path / "data")


def test_pinned_files_load_without_warning(shared_data, recwarn):
    multitq.load_questions(data_dir=shared_data)
    assert not [w for w in recwarn if issubclass(w.category, DataIntegrityWarning)]


def test_data_check_says_how_to_get_a_file_and_shows_both_hashes(shared_data, tmp_path, capsys):
    target = _copy(shared_data, tmp_path, L2)
    data = bytearray(gzip.decompress(target.read_bytes()))
    data[100] ^= 0x01
    target.write_bytes(gzip.compress(bytes(data)))
    assert cli.main(["data", "check", "tempreason", "--data-dir", str(tmp_path / "data")]) == 1
    out = capsys.readouterr().out
    entry = catalog.entry("tempreason/test_l2.shared_half.jsonl")
    assert f"expected sha256 {entry.raw_sha256}" in out
    assert "actual   sha256 " in out and "get it: temporag data fetch tempreason --from DIR" in out
    assert cli.main(["data", "check", "multitq", "--data-dir", str(tmp_path / "empty")]) == 1
    out = capsys.readouterr().out
    assert "get it: temporag data fetch multitq   (downloads https://raw.githubusercontent.com/" in out
    assert "no public source" in out  # the derived question sample can only be mirrored
