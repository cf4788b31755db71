"""Shared readers for the data loaders: JSON lists, JSON lines and tab-separated files.

Every reader yields ``(line, value)`` pairs so that a loader can point at the exact line of a bad
record.  For a JSON list the line is where the record starts in the file (so a user can jump to
it), and problems also name the record's 0-based index in the list.  Every JSON is decoded within the
kit's caps (:mod:`temporag.limits`: file size, nesting depth), so a hostile file is one error naming it,
never a ``RecursionError`` or a machine out of memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from temporag import limits
from temporag.data.errors import DataFormatError, InputLimitError, require_questions
from temporag.data.paths import data_file, open_text

T = TypeVar("T")

_SPACE = " \t\r\n"
_SIZE = "TEMPORAG_MAX_INPUT_BYTES"


@dataclass(frozen=True)
class Where:
    """Position of one record, used to build errors that name file, line and the expected format."""

    path: Path
    line: int
    hint: str
    record: int | None = None

    def error(self, problem: str) -> DataFormatError:
        prefix = f"record {self.record}: " if self.record is not None else ""
        return DataFormatError(self.path, self.line, prefix + problem, self.hint)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _SPACE:
        pos += 1
    return pos


def _check_size(path: Path, size: int, limit: int, hint: str) -> None:
    if size > limit:
        raise InputLimitError(path, None, f"the file is {limits.too_large(size, limit, _SIZE)}", hint)


def read_capped(path: str | Path, hint: str) -> str:
    """A text file's content, refused with one line past ``TEMPORAG_MAX_INPUT_BYTES`` (a ``.gz`` file is
    counted as it un-zips, so a small archive cannot expand without bound)."""
    path = Path(path)
    limit = limits.max_input_bytes()
    _check_size(path, path.stat().st_size, limit, hint)
    with open_text(path) as f:
        text = f.read(limit + 1)
    _check_size(path, len(text), limit, hint)  # characters: never more than the bytes they came from
    return text


def read_json_file(path: str | Path, hint: str) -> Any:
    """The one JSON document of a file, within the caps (size, depth); bad JSON names its line."""
    path = Path(path)
    try:
        return limits.loads(read_capped(path, hint))
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, exc.lineno, f"invalid JSON ({exc.msg})", hint) from exc
    except limits.LimitError as exc:
        raise InputLimitError(path, None, str(exc), hint) from None


def read_json_list(path: str | Path, hint: str) -> Iterator[tuple[Where, Any]]:
    """Records of a file holding one JSON list, each with the line it starts on."""
    path = Path(path)
    yield from json_list_records(read_capped(path, hint), path, hint)


def json_list_records(text: str, path: Path, hint: str) -> Iterator[tuple[Where, Any]]:
    """Records of ``text``, one JSON list read from ``path``, each with the line it starts on."""
    depth = limits.max_json_depth()
    pos = _skip_space(text, 0)
    if text.startswith("\ufeff"):
        pos = _skip_space(text, 1)
    if pos >= len(text) or text[pos] != "[":
        line = text.count("\n", 0, pos) + 1
        raise DataFormatError(path, line, "the file does not start with a JSON list '['", hint)
    pos = _skip_space(text, pos + 1)
    line, counted_to, index = 1, 0, 0
    if pos < len(text) and text[pos] == "]":
        return
    while True:
        line += text.count("\n", counted_to, pos)
        counted_to = pos
        try:
            value, end = limits.decode(text, pos, depth)
        except json.JSONDecodeError as exc:
            raise DataFormatError(
                path, exc.lineno, f"record {index}: invalid JSON ({exc.msg})", hint
            ) from exc
        except limits.LimitError as exc:
            raise InputLimitError(path, line, f"record {index}: {exc}", hint) from None
        yield Where(path, line, hint, index), value
        index += 1
        pos = _skip_space(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_space(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            rest = _skip_space(text, pos + 1)
            if rest != len(text):
                bad = text.count("\n", 0, rest) + 1
                raise DataFormatError(path, bad, "unexpected text after the closing ']'", hint)
            return
        bad = text.count("\n", 0, pos) + 1
        raise DataFormatError(path, bad, f"record {index}: expected ',' or ']' between records", hint)


def read_jsonl(path: str | Path, hint: str) -> Iterator[tuple[Where, Any]]:
    """Records of a JSON-lines file (blank lines skipped), each with its 1-based line number."""
    path = Path(path)
    size, limit, depth = 0, limits.max_input_bytes(), limits.max_json_depth()
    _check_size(path, path.stat().st_size, limit, hint)
    with open_text(path) as f:
        for lineno, raw in enumerate(f, start=1):
            size += len(raw)
            _check_size(path, size, limit, hint)
            if not raw.strip():
                continue
            try:
                value = limits.loads(raw, depth)
            except json.JSONDecodeError as exc:
                raise DataFormatError(path, lineno, f"invalid JSON ({exc.msg})", hint) from exc
            except limits.LimitError as exc:
                raise InputLimitError(path, lineno, str(exc), hint) from None
            yield Where(path, lineno, hint), value


def read_tsv(
    path: str | Path, columns: int | tuple[int, ...], hint: str
) -> Iterator[tuple[Where, list[str]]]:
    """Rows of a tab-separated file with an exact number of fields (or one of several counts).

    Only the line terminator is stripped, so names with leading/trailing spaces survive.
    """
    path = Path(path)
    allowed = (columns,) if isinstance(columns, int) else columns
    expected = " or ".join(str(n) for n in allowed)
    with open_text(path) as f:
        for lineno, raw in enumerate(f, start=1):
            row = raw.rstrip("\r\n")
            if not row:
                continue
            fields = row.split("\t")
            if len(fields) not in allowed:
                raise DataFormatError(
                    path, lineno, f"expected {expected} tab-separated fields, got {len(fields)}", hint
                )
            yield Where(path, lineno, hint), fields


def read_int_table(path: str | Path, columns: int, hint: str) -> np.ndarray:
    """A tab-separated file of integers as an (n, columns) int64 array, parsed in one numpy pass.

    A malformed file is re-read line by line to report the first bad line.
    """
    path = Path(path)
    text = read_capped(path, hint)
    n_rows = sum(1 for line in text.split("\n") if line.strip())
    try:
        values = np.array(text.split(), dtype=np.int64)
    except ValueError:
        values = None
    if values is None or values.size != n_rows * columns:
        for where, fields in read_tsv(path, columns, hint):
            for i, value in enumerate(fields):
                parse_int(value, where, f"field {i + 1}")
        raise DataFormatError(path, None, "unexpected whitespace inside fields", hint)
    return values.reshape(n_rows, columns)


def line_of_row(path: str | Path, row: int) -> int:
    """1-based line number of the ``row``-th (0-based) non-blank line, to point errors at a table row."""
    with open_text(path) as f:
        seen = -1
        for lineno, line in enumerate(f, start=1):
            if line.strip():
                seen += 1
                if seen == row:
                    return lineno
    raise IndexError(row)


# -- field checks ------------------------------------------------------------------------------------------


def need_dict(value: Any, where: Where) -> dict:
    if not isinstance(value, dict):
        raise where.error(f"expected a JSON object, got {type(value).__name__}")
    return value


def get_field(
    rec: dict, key: str, kind: type | tuple[type, ...], where: Where, optional: bool = False
) -> Any:
    """``rec[key]`` checked against ``kind`` (bools never count as ints); None when optional and absent."""
    if key not in rec:
        if optional:
            return None
        raise where.error(f"missing field {key!r}")
    value = rec[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        names = "/".join(k.__name__ for k in kinds)
        raise where.error(f"field {key!r} should be {names}, got {type(value).__name__}")
    return value


def get_str(rec: dict, key: str, where: Where, optional: bool = False) -> str | None:
    return get_field(rec, key, str, where, optional)


def get_int(rec: dict, key: str, where: Where, optional: bool = False) -> int | None:
    return get_field(rec, key, int, where, optional)


def get_list(rec: dict, key: str, item: type | tuple[type, ...], where: Where) -> tuple:
    """A list field whose items all have type ``item``, returned as a tuple."""
    values = get_field(rec, key, list, where)
    items = item if isinstance(item, tuple) else (item,)
    for i, value in enumerate(values):
        if isinstance(value, bool) and bool not in items or not isinstance(value, items):
            names = "/".join(k.__name__ for k in items)
            raise where.error(f"{key}[{i}] should be {names}, got {type(value).__name__}")
    return tuple(values)


def parse_int(text: str, where: Where, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise where.error(f"{what} {text!r} is not an integer") from None


class UniqueKeys:
    """Keys seen so far in one file; a repeat is an error that names the record (ids must be unique)."""

    def __init__(self, field: str) -> None:
        self.field = field
        self._seen: set = set()

    def add(self, key, where: Where) -> None:
        if key in self._seen:
            raise where.error(f"{self.field} {key!r} appears twice")
        self._seen.add(key)


def read_label_map(path: str | Path, hint: str) -> dict[str, str]:
    """``id<TAB>label`` lines (Wikidata-style); a line with only an id has an empty label."""
    out: dict[str, str] = {}
    ids = UniqueKeys("id")
    for where, fields in read_tsv(path, (1, 2), hint):
        key = fields[0]
        if not key:
            raise where.error("empty id")
        ids.add(key, where)
        out[key] = fields[1] if len(fields) == 2 else ""
    return out


def read_name_ids(path: str | Path, hint: str) -> list[str]:
    """``name<TAB>id`` lines with ids 0..n-1 in any order → names indexed by id."""
    names: dict[int, str] = {}
    seen: set[str] = set()
    for where, (name, raw_id) in read_tsv(path, 2, hint):
        idx = parse_int(raw_id, where, "id")
        if idx < 0 or idx in names:
            raise where.error(f"id {idx} is negative or used twice")
        if name in seen:
            raise where.error(f"name {name!r} appears twice")
        names[idx] = name
        seen.add(name)
    if sorted(names) != list(range(len(names))):
        missing = next(i for i in range(len(names)) if i not in names)
        raise DataFormatError(path, None, f"ids are not contiguous: {missing} is missing", hint)
    return [names[i] for i in range(len(names))]


# -- question files ----------------------------------------------------------------------------------------


def split_file(files: Mapping[str, str], split: str, dataset: str, data_dir: str | Path | None) -> Path:
    """The shared file of a named split; an unknown name lists the known ones."""
    if split not in files:
        raise KeyError(f"unknown {dataset} split {split!r}; known: {sorted(files)}")
    return data_file(files[split], dataset, data_dir)


def load_question_file(
    parse: Callable[[Path], list[T]], questions_file: str | Path | None, split_path: Callable[[], Path]
) -> list[T]:
    """Questions of a user's file when one is given, else of the split's file: the one path every question
    loader takes, so an empty file is always one line naming it rather than an IndexError in a notebook."""
    path = Path(questions_file).expanduser() if questions_file is not None else split_path()
    return require_questions(path, parse(path))
