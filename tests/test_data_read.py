"""The shared readers: JSON lists report the line a bad record starts on, JSONL/TSV their own line."""

from __future__ import annotations

import gzip

import pytest

from temporag.data._read import (
    get_int,
    get_list,
    need_dict,
    read_int_table,
    read_json_list,
    read_jsonl,
    read_tsv,
)
from temporag.data.errors import DataFormatError


def test_json_list_records_carry_their_start_line(tmp_path):
    path = tmp_path / "list.json"
    path.write_text('[\n  {"a": 1},\n  {\n    "a": 2\n  }\n]\n', encoding="utf-8")
    got = [(where.line, where.record, value["a"]) for where, value in read_json_list(path, "hint")]
    assert got == [(2, 0, 1), (3, 1, 2)]


def test_json_list_bad_record_names_file_line_and_record(tmp_path):
    path = tmp_path / "list.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write('[\n {"a": 1},\n {"a": "two"}\n]')
    with pytest.raises(DataFormatError) as err:
        for where, value in read_json_list(path, "expected {a: int}"):
            get_int(need_dict(value, where), "a", where)
    message = str(err.value)
    assert "list.json.gz line 3: record 1: field 'a' should be int, got str" in message
    assert "expected {a: int}" in message and err.value.line == 3


def test_json_list_syntax_errors(tmp_path):
    missing_comma = tmp_path / "a.json"
    missing_comma.write_text('[{"a": 1}\n{"a": 2}]', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"a.json line 2: record 1: expected ',' or ']'"):
        list(read_json_list(missing_comma, "h"))
    not_a_list = tmp_path / "b.json"
    not_a_list.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"b.json line 1: the file does not start with a JSON list"):
        list(read_json_list(not_a_list, "h"))
    truncated = tmp_path / "c.json"
    truncated.write_text('[\n{"a": 1},\n{"a": ', encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"c.json line 3: record 1: invalid JSON"):
        list(read_json_list(truncated, "h"))
    assert list(read_json_list(_write(tmp_path / "empty.json", " [ ] \n"), "h")) == []


def test_jsonl_and_tsv_errors_name_the_line(tmp_path):
    jsonl = _write(tmp_path / "x.jsonl", '{"a": [1]}\n\n{"a": [1, "b"]}\n')
    with pytest.raises(DataFormatError, match=r"x.jsonl line 3: a\[1\] should be int, got str"):
        for where, value in read_jsonl(jsonl, "h"):
            get_list(value, "a", int, where)
    broken = _write(tmp_path / "y.jsonl", '{"a": 1}\n{"a": \n')
    with pytest.raises(DataFormatError, match=r"y.jsonl line 2: invalid JSON"):
        list(read_jsonl(broken, "h"))
    tsv = _write(tmp_path / "z.txt", "a\tb\nc\n")
    with pytest.raises(DataFormatError, match=r"z.txt line 2: expected 2 tab-separated fields, got 1"):
        list(read_tsv(tsv, 2, "h"))


def test_int_table_fast_path_and_error_line(tmp_path):
    good = _write(tmp_path / "good.txt", "1\t2\t3\n4\t5\t6")
    assert read_int_table(good, 3, "h").tolist() == [[1, 2, 3], [4, 5, 6]]
    bad = _write(tmp_path / "bad.txt", "1\t2\t3\n4\tx\t6\n")
    with pytest.raises(DataFormatError, match=r"bad.txt line 2: field 2 'x' is not an integer"):
        read_int_table(bad, 3, "h")
    short = _write(tmp_path / "short.txt", "1\t2\t3\n4\t5\n")
    with pytest.raises(DataFormatError, match=r"short.txt line 2: expected 3 tab-separated fields, got 2"):
        read_int_table(short, 3, "h")


def _write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path
