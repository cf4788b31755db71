"""The record of one printed number, and the builders the paper modules write their tables with.

Tables are written as ``{row: (values...)}`` against a list of column specs, so each paper's module
reads like the printed table and a cell is checked against the paper by eye.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Metrics stored as fractions in [0, 1].
FRACTION_METRICS: frozenset[str] = frozenset(
    {
        "hits@1",
        "hits@5",
        "hits@10",
        "accuracy",
        "recall",
        "answer_recall",
        "answer_recall@20",
        "hits@1_gain",
        "hits@1_drop",
        "accuracy_gain",
        "recall_gain",
        "relative_gain",
        "token_reduction",
        "share_of_questions",
    }
)
#: Metrics stored as raw numbers (counts, sizes, durations, settings).
RAW_METRICS: frozenset[str] = frozenset(
    {
        "questions",
        "qa_pairs",
        "facts",
        "entities",
        "relations",
        "timestamps",
        "facts_per_question",
        "tokens_per_question",
        "seconds_per_question",
        "tokens",
        "runs",
        "hyperparameter",
    }
)


@dataclass(frozen=True)
class Reported:
    """One number as a paper prints it, with enough context to find and label it."""

    paper: str
    source: str
    row: str
    column: str
    value: float
    dataset: str
    metric: str
    note: str = ""

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """Identity of the cell: (paper, source, dataset, row, column)."""
        return (self.paper, self.source, self.dataset, self.row, self.column)

    @property
    def is_fraction(self) -> bool:
        """True when ``value`` is a fraction (percentages were divided by 100)."""
        return self.metric in FRACTION_METRICS


PCT = 0.01  # printed in percent
ONE = 1.0  # printed as a 0-1 score or a raw number

# One spelling per data set across papers (the conventions in the package docstring).
MTQ = "MultiTQ"
CRQ = "CronQuestions"
TQS = "TimeQuestions"
FCT = "Forecast"

#: Five "–" cells: a data set's block of five columns that a row leaves empty.
DASH5 = (None, None, None, None, None)

#: A column spec: (dataset, column, metric, scale).
Col = tuple[str, str, str, float]


def cols(dataset: str, metric: str, scale: float, *names: str) -> list[Col]:
    """Column specs of one data set and metric, one per printed column name."""
    return [(dataset, name, metric, scale) for name in names]


def grid(
    paper: str,
    source: str,
    cols: Sequence[Col],
    rows: Mapping[str, Sequence[float | None]],
    note: str = "",
    row_notes: Mapping[str, str] | None = None,
    cell_notes: Mapping[tuple[str, str, str], str] | None = None,
) -> list[Reported]:
    """Expand a printed table into records; ``None`` marks a "–" cell and is skipped."""
    out: list[Reported] = []
    for row, values in rows.items():
        if len(values) != len(cols):
            raise ValueError(f"{paper} {source} row {row!r}: {len(values)} values for {len(cols)} columns")
        for (dataset, column, metric, scale), v in zip(cols, values, strict=True):
            if v is None:
                continue
            parts = [note, (row_notes or {}).get(row, ""), (cell_notes or {}).get((dataset, row, column), "")]
            out.append(
                Reported(
                    paper=paper,
                    source=source,
                    row=row,
                    column=column,
                    value=round(float(v) * scale, 10),
                    dataset=dataset,
                    metric=metric,
                    note="; ".join(p for p in parts if p),
                )
            )
    return out


def one(
    paper: str, source: str, dataset: str, row: str, column: str, value: float, metric: str, note: str = ""
) -> Reported:
    """A single number quoted in prose (already in its stored unit)."""
    return Reported(paper, source, row, column, float(value), dataset, metric, note)
