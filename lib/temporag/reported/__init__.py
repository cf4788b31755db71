"""The numbers the five papers print, kept as data so a notebook can show them beside the kit's own.

Every notebook ends a section with "ours vs. theirs"; typing the paper's numbers into each notebook
would scatter hundreds of hand-copied constants.  They live here once, each tied to the table or
figure it came from, so a typo is fixed in one place and tests can check them against the text.

Conventions
-----------
* ``paper`` is one of :data:`PAPERS`; ``source`` names the table or figure ("Table 2", "Figure 3") or,
  for numbers that appear only in prose, the section followed by "text" ("§5.7 text").
* ``row`` / ``column`` follow the printed labels, with three deliberate simplifications: citations
  are dropped ("BERT (Devlin et al., 2019)" -> "BERT"), superscripts are flattened ("TimeR⁴" ->
  "TimeR4", "E²GraphRAG" -> "E2GraphRAG"), and tables whose rows are bare numbers get the parameter
  name prefixed ("MAX_LEVELS=4", "MEU=10").  Rows that pair a method with a backbone are written
  "Method (Backbone)" (SAR Table 1) or "Reasoner + Retrieval" (TECQA Table 3).  Lookups ignore case,
  extra spaces and superscripts, so "TimeR⁴" also finds "TimeR4".
* ``dataset`` uses one spelling per data set across papers ("CronQuestions" even where STAR-RAG
  prints "CronQuestion"; "Forecast" is ForecastTKGQuestions); it is "" for settings that hold for all.
* ``value`` is a fraction in [0, 1] for anything printed as a percentage or a 0-1 score (72.8 -> 0.728),
  and the raw number otherwise (counts, tokens, seconds, hyper-parameters); ``metric`` names the
  unit.  :data:`FRACTION_METRICS` lists the metrics stored as fractions.  Gains and drops printed in
  percentage points are fractions too (a 7.1-point drop is 0.071).
* Cells printed as "–" (not reported) are left out rather than stored as NaN.
* Where a paper contradicts itself or another paper, the printed value is kept and ``note`` says so.

Layout
------
One module per paper (:mod:`.tecqa`, :mod:`.star_rag`, :mod:`.timer4`, :mod:`.ia_rag`, :mod:`.sar`) holds
its tables as data and says what was not transcribed; :mod:`.builders` turns printed tables into
:class:`Reported` records; :mod:`.queries` gathers every paper's records and looks them up.
"""

from __future__ import annotations

from temporag.reported.builders import FRACTION_METRICS, ONE, PCT, RAW_METRICS, Reported
from temporag.reported.queries import (
    PAPERS,
    REPORTED,
    PaperRef,
    as_frame,
    lookup,
    paper_value,
    reported,
    sources,
)

__all__ = [
    "FRACTION_METRICS",
    "ONE",
    "PAPERS",
    "PCT",
    "RAW_METRICS",
    "REPORTED",
    "PaperRef",
    "Reported",
    "as_frame",
    "lookup",
    "paper_value",
    "reported",
    "sources",
]
