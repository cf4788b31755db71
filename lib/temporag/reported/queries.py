"""Every paper's records in one tuple, and the look-ups notebooks and reports read them through.

Labels are matched the way a reader would type them (case, spacing and superscripts do not matter), and a
misspelt label raises with the close matches, so a notebook's typo shows at once instead of an empty cell.
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from temporag.reported import ia_rag, sar, star_rag, tecqa, timer4
from temporag.reported.builders import Reported

if TYPE_CHECKING:
    import pandas as pd

#: Each paper's records, in the papers' reading order.
_BY_PAPER: dict[str, list[Reported]] = {
    "tecqa": tecqa.RECORDS,
    "star_rag": star_rag.RECORDS,
    "timer4": timer4.RECORDS,
    "ia_rag": ia_rag.RECORDS,
    "sar": sar.RECORDS,
}
PAPERS: tuple[str, ...] = tuple(_BY_PAPER)
REPORTED: tuple[Reported, ...] = tuple(r for records in _BY_PAPER.values() for r in records)

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def _norm(text: str) -> str:
    """Compare labels the way a reader would: case, spacing and superscripts do not matter."""
    return " ".join(text.translate(_SUPERSCRIPTS).casefold().split())


def _check_paper(paper: str) -> str:
    key = _norm(paper).replace("-", "_")
    if key not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; expected one of {', '.join(PAPERS)}")
    return key


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def reported(
    paper: str, source: str | None = None, dataset: str | None = None, row: str | None = None
) -> list[Reported]:
    """Records of one paper, optionally narrowed by source, data set and row (in printed order)."""
    paper = _check_paper(paper)
    out = [r for r in REPORTED if r.paper == paper]
    if source is not None:
        out = [r for r in out if _norm(r.source) == _norm(source)]
    if dataset is not None:
        out = [r for r in out if _norm(r.dataset) == _norm(dataset)]
    if row is not None:
        out = [r for r in out if _norm(r.row) == _norm(row)]
    return out


def sources(paper: str) -> list[str]:
    """The tables, figures and text passages recorded for ``paper``, in paper order."""
    paper = _check_paper(paper)
    return _unique([r.source for r in REPORTED if r.paper == paper])


def _suggest(label: str, wanted: str, options: list[str]) -> str:
    close = difflib.get_close_matches(wanted, options, n=5, cutoff=0.4)
    shown = close or options[:12]
    kind = "close matches" if close else "available"
    return f"no {label} {wanted!r}; {kind}: {', '.join(repr(o) for o in shown)}"


def lookup(paper: str, source: str, row: str, column: str, dataset: str | None = None) -> float:
    """The single value a paper prints in ``source`` at (row, column), for notebooks' side-by-side tables.

    Raises KeyError naming close matches when a label is misspelt, or the data sets to choose from
    when the same (row, column) exists for several of them.
    """
    in_paper = reported(paper)
    in_source = [r for r in in_paper if _norm(r.source) == _norm(source)]
    if not in_source:
        raise KeyError(f"{paper}: " + _suggest("source", source, _unique([r.source for r in in_paper])))
    if dataset is not None:
        by_ds = [r for r in in_source if _norm(r.dataset) == _norm(dataset)]
        if not by_ds:
            raise KeyError(
                f"{paper} {source}: " + _suggest("dataset", dataset, _unique([r.dataset for r in in_source]))
            )
        in_source = by_ds
    by_row = [r for r in in_source if _norm(r.row) == _norm(row)]
    if not by_row:
        raise KeyError(f"{paper} {source}: " + _suggest("row", row, _unique([r.row for r in in_source])))
    hits = [r for r in by_row if _norm(r.column) == _norm(column)]
    if not hits:
        columns = _unique([r.column for r in by_row])
        raise KeyError(f"{paper} {source} row {row!r}: " + _suggest("column", column, columns))
    if len(hits) > 1:
        options = ", ".join(repr(r.dataset) for r in hits)
        raise KeyError(
            f"{paper} {source} {row!r}/{column!r} is reported for several data sets; "
            f"pass dataset= one of {options}"
        )
    return hits[0].value


@dataclass(frozen=True)
class PaperRef:
    """Where a paper prints the number a kit value is compared with (``paper_value`` looks it up)."""

    paper: str
    source: str
    row: str
    column: str
    dataset: str | None = "MultiTQ"

    def value(self) -> float | None:
        return paper_value(self.paper, self.source, self.row, self.column, self.dataset)

    def label(self) -> str:
        where = f"{self.source}: {self.row} / {self.column}"
        return f"{where} ({self.dataset})" if self.dataset else where


def paper_value(paper: str, source: str, row: str, column: str, dataset: str | None = None) -> float | None:
    """The printed value, or None where the paper prints none (logged once, so a typo does not hide).

    Unlike :func:`lookup` this never raises for a missing cell: a kit number with no paper counterpart
    is still shown, with an empty paper column.  An unknown paper name still raises."""
    _check_paper(paper)
    try:
        return lookup(paper, source, row, column, dataset=dataset)
    except KeyError as exc:
        key = (paper, source, row, column, dataset)
        if key not in _MISSING:
            _MISSING.add(key)
            _log.info("no printed value for %s: %s", key, exc)
        return None


_MISSING: set[tuple] = set()
_log = logging.getLogger("temporag.reported")  # the package's name, as callers configure it


def as_frame(paper: str, source: str | None = None) -> pd.DataFrame:
    """A paper's table as a DataFrame shaped like the print: rows x columns, data set on top if needed.

    Without ``source`` every record of the paper is included and the index becomes (source, row).
    Cells the paper leaves empty are NaN.
    """
    import pandas as pd

    records = reported(paper, source)
    if not records:
        raise KeyError(f"{paper}: " + _suggest("source", source or "", sources(paper)))
    several_sources = len({r.source for r in records}) > 1
    # Data sets go on top of the columns only when one printed row spans several of them; tables whose
    # rows *are* data sets (dataset statistics) stay flat.
    datasets_per_row: dict[tuple[str, str], set[str]] = {}
    for r in records:
        datasets_per_row.setdefault((r.source, r.row), set()).add(r.dataset)
    several_datasets = any(len(ds) > 1 for ds in datasets_per_row.values())

    def row_key(r: Reported) -> object:
        return (r.source, r.row) if several_sources else r.row

    def col_key(r: Reported) -> object:
        return (r.dataset, r.column) if several_datasets else r.column

    rows = list(dict.fromkeys(row_key(r) for r in records))
    cols = list(dict.fromkeys(col_key(r) for r in records))
    cells = {(row_key(r), col_key(r)): r.value for r in records}
    data = [[cells.get((rk, ck), float("nan")) for ck in cols] for rk in rows]
    index = (
        pd.MultiIndex.from_tuples(rows, names=["source", "row"])
        if several_sources
        else pd.Index(rows, name="row")
    )
    columns = (
        pd.MultiIndex.from_tuples(cols, names=["dataset", "column"])
        if several_datasets
        else pd.Index(cols, name="column")
    )
    return pd.DataFrame(data, index=index, columns=columns)
