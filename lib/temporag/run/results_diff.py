"""Compare two runs' ``results.json``: every metric and every table value, timings excepted.

A refactor must not move a number; this is the check (``temporag results diff OLD NEW``).  Both files
are flattened to ``metrics/<key>/...`` and ``tables/<key>/records/<row>/<column>`` leaves; a leaf whose
path names a timing (latency, seconds, ``*_s``, ``*_ms``, ``* s/question``, created) or the LLM cache's
hit count (``cached``: a re-run is served from the cache) is skipped, floats compare within float32's
precision (:data:`FLOAT32_TOLERANCE`), everything else exactly (NaN equals NaN).  A table row whose
label names a timing ("retrieval p50 (ms)", "seconds per question") is skipped as a whole.  Table
captions, parameters, settings and predictions are not compared: they describe a run, they are not its
results.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: path components that hold timings or cache hits: they differ between any two runs of the same code
TIMING = re.compile(
    r"(latency|seconds|timing|elapsed|created|wall|(^|[ _(])m?s$|^cached$)", re.IGNORECASE
)  # ... "p50_ms", "retrieval_s", "Tim. (s/question)" and "retrieval s/question" (a path splits at "/")
#: a table row whose text names one of these holds a timing (e.g. the headline's "retrieval p50 (ms)")
TIMING_ROW = re.compile(r"\((ms|s|seconds)[,)]|latency|seconds|wall time", re.IGNORECASE)
SECTIONS = ("metrics", "tables")
#: the default relative tolerance: float32 keeps about 7 digits, so a cosine computed with other BLAS
#: threads moves in the 8th (0.76138353 → 0.76138347); a change of one question in 954 is 1e-3
FLOAT32_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Difference:
    path: str
    old: Any
    new: Any
    kind: str  # "changed" | "only in old" | "only in new"

    def __str__(self) -> str:
        if self.kind == "only in old":
            return f"- {self.path}: {self.old!r} (only in old)"
        if self.kind == "only in new":
            return f"+ {self.path}: {self.new!r} (only in new)"
        return f"~ {self.path}: {self.old!r} → {self.new!r}"


def flatten(data: dict) -> dict[str, Any]:
    """``results.json`` → {path: leaf} over the compared sections (table captions left out)."""
    out: dict[str, Any] = {}

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}/{key}")
        elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            for i, item in enumerate(value):
                walk(item, f"{path}/{i}")
        else:
            out[path] = value

    for section in SECTIONS:
        for key, value in data.get(section, {}).items():
            if section == "tables" and isinstance(value, dict):
                value = {
                    "records": {
                        i: row for i, row in enumerate(value.get("records", [])) if not _timing_row(row)
                    }
                }
            walk(value, f"{section}/{key}")
    return out


def _timing_row(row: Any) -> bool:
    return isinstance(row, dict) and any(isinstance(v, str) and TIMING_ROW.search(v) for v in row.values())


def is_timing(path: str) -> bool:
    return any(TIMING.search(part.strip()) for part in path.split("/")[1:])


def _same(old: Any, new: Any, rel_tol: float, abs_tol: float) -> bool:
    numbers = (int, float)
    if isinstance(old, bool) or isinstance(new, bool):
        return old == new
    if isinstance(old, numbers) and isinstance(new, numbers):
        if math.isnan(old) or math.isnan(new):
            return math.isnan(old) and math.isnan(new)
        return math.isclose(old, new, rel_tol=rel_tol, abs_tol=abs_tol)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(a, b, rel_tol, abs_tol) for a, b in zip(old, new))
    return old == new


def diff(
    old: dict | str | Path,
    new: dict | str | Path,
    *,
    rel_tol: float = FLOAT32_TOLERANCE,
    abs_tol: float = 1e-12,
    ignore: tuple[str, ...] = (),
    ignore_added: bool = False,
) -> list[Difference]:
    """Every difference between two results (dicts or ``results.json`` paths), timings excepted.

    ``ignore`` holds regular expressions of paths to skip; ``ignore_added`` accepts leaves that only
    the new run has (a new metric, or context a metric gained) — a removed or changed value still counts.
    """
    old_data, new_data = (_load(x) for x in (old, new))
    a, b = flatten(old_data), flatten(new_data)
    skip = [re.compile(p) for p in ignore]

    def wanted(path: str) -> bool:
        return not is_timing(path) and not any(p.search(path) for p in skip)

    out = []
    for path in sorted(set(a) | set(b)):
        if not wanted(path):
            continue
        if path not in b:
            out.append(Difference(path, a[path], None, "only in old"))
        elif path not in a:
            if not ignore_added:
                out.append(Difference(path, None, b[path], "only in new"))
        elif not _same(a[path], b[path], rel_tol, abs_tol):
            out.append(Difference(path, a[path], b[path], "changed"))
    return out


def compared_paths(data: dict | str | Path) -> int:
    """How many leaves of one results file the diff looks at (timings excepted)."""
    return sum(1 for path in flatten(_load(data)) if not is_timing(path))


def _load(source: dict | str | Path) -> dict:
    if isinstance(source, dict):
        return source
    path = Path(source)
    if path.is_dir():  # a run's folder: its results.json
        path = path / "results.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such results file (pass the results.json of a run)") from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path} line {exc.lineno}: not valid JSON ({exc.msg}) — is this a results.json?"
        ) from None
