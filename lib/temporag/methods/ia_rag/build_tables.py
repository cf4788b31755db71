"""What each build made, as the notebook's tables: extracted units and their coverage of the gold
answers, the event graph, tightening, the thematic forest and the build's seconds per stage.

Functions over ``builds`` take (name, setups) pairs, one per build (paper reading, calibrated), so one
table compares them; :mod:`.record` writes the ``results.json`` metrics of each table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer.evaluate import evidence_recall
from temporag.methods.ia_rag import Build
from temporag.methods.ia_rag.graph import EventGraph
from temporag.methods.ia_rag.retrieval import IAIndex
from temporag.methods.ia_rag.setups import Setup
from temporag.timeutil import Allen

#: Unit coverage of the kit's first offline extractor (commit 4016c6a: whole TimeQA pages, undated
#: sentences mostly dropped, clauses cut at commas, TempReason with its ReasonQA fact blocks), measured
#: with :func:`unit_coverage`'s rule on every shared question that has a gold document.
COVERAGE_BEFORE = {"TimeQA": 0.906, "ComplexTR": 0.731, "TempReason": 0.378}

EXTRACTION_COUNTS = ("documents", "chunks", "chunk_tokens", "ieus_extracted", "duplicates_merged")
BUILD_TIMES = ("extract_s", "embed_s", "dedup_s", "graph_s", "tighten_s", "forest_s")


def extraction_table(setups: Mapping[str, Setup]) -> pd.DataFrame:
    """IEUs per data set: the build's counts, the share of fuzzy units and one column per conversion-table
    rule (A day ... G relative, "inherited", "undated")."""
    rows = []
    for dataset, setup in setups.items():
        units = setup.build.raw_units
        rows.append(
            {
                "dataset": dataset,
                **{name: setup.build.stats[name] for name in EXTRACTION_COUNTS},
                "fuzzy share": np.mean([u.fuzzy for u in units]),
                **pd.Series([u.rule for u in units]).value_counts().to_dict(),
            }
        )
    return pd.DataFrame(rows)


def unit_examples(units: Sequence, n: int = 10) -> pd.DataFrame:
    """The first ``n`` units as the paper's IEU record: interval ends, fuzzy flag, rule, time, sentence."""
    rows = []
    for unit in units[:n]:
        ends = unit.span().split(" – ")
        rows.append(
            {
                "t_start": ends[0],
                "t_end": ends[-1],
                "fuzzy": unit.fuzzy,
                "rule": unit.rule,
                "time expression": unit.time_text,
                "sentence": unit.sentence[:110],
            }
        )
    return pd.DataFrame(rows)


def unit_coverage(setup: Setup) -> dict:
    """Share of the questions with a known gold document whose gold answers are all in that document's
    units (the extractor's ceiling for any retrieval over units), beside the same share for the raw text."""
    by_doc: dict[int, list[str]] = {}
    for u in setup.build.raw_units:
        by_doc.setdefault(u.source, []).append(u.sentence)
    text = {d.doc_id: d.text for d in setup.docs}
    asked = [q for q in setup.questions if q.gold_docs]
    golds = [q.answers for q in asked]
    units = ["\n".join(s for i in q.gold_docs for s in by_doc.get(i, [])) for q in asked]
    raw = ["\n".join(text.get(i, "") for i in q.gold_docs) for q in asked]
    return {
        "dataset": setup.dataset,
        "questions with a gold document": len(asked),
        "answer in the gold text": float(evidence_recall(raw, golds).mean()) if asked else np.nan,
        "unit coverage before": COVERAGE_BEFORE.get(setup.dataset, np.nan),
        "unit coverage": float(evidence_recall(units, golds).mean()) if asked else np.nan,
    }


def graph_table(builds: Sequence[tuple[str, Mapping[str, Setup]]]) -> pd.DataFrame:
    """The event graph of each build before tightening, with its τ_sem and number of MEUs."""
    return pd.DataFrame(
        [
            {
                "dataset": dataset,
                "build": name,
                "tau": setup.build.stats["tau"],
                **setup.build.stats["graph_before_tightening"],
                "meus": setup.build.stats["meus"],
            }
            for name, group in builds
            for dataset, setup in group.items()
        ]
    )


def tightening_table(builds: Sequence[tuple[str, Mapping[str, Setup]]]) -> pd.DataFrame:
    """One :func:`tightening_row` per build and data set."""
    return pd.DataFrame(
        [
            tightening_row(dataset, name, setup.build)
            for name, group in builds
            for dataset, setup in group.items()
        ]
    )


def tightening_row(dataset: str, build_name: str, build: Build) -> dict:
    """One row of the tightening table: fuzzy units before and after, how many were narrowed, and how many
    intervals came out wider than extracted (tightening may only narrow, so that count must be 0)."""
    raw = {u.key: u for u in build.raw_units}

    def lower(t):
        return -1e9 if t is None else t

    def upper(t):
        return 1e9 if t is None else t

    widened = sum(
        lower(u.t_start) < lower(raw[u.key].t_start) or upper(u.t_end) > upper(raw[u.key].t_end)
        for u in build.index.graph.units
        if u.key in raw
    )
    stats = build.stats
    return {
        "dataset": dataset,
        "build": build_name,
        "fuzzy before": stats["graph_before_tightening"]["fuzzy_ieus"],
        "narrowed": stats["tightened"],
        "flags cleared": stats["flags_cleared"],
        "fuzzy after": stats["graph"]["fuzzy_ieus"],
        "widened (must be 0)": widened,
    }


def tightening_example(setups: Mapping[str, Setup], evidence: int = 3) -> list[str]:
    """The first narrowed unit that had evidence: its days before and after and up to ``evidence`` of the
    units that bounded it (no lines when no narrowing had evidence)."""
    for setup in setups.values():
        for change in setup.build.changes:
            if change["evidence"]:
                units = setup.build.index.graph.units
                narrowed = f"narrowed: {units[change['unit']].line()} "
                days = f"  days before: {change['old']} after: {change['new']}"
                shown = [f"  evidence: {units[j].line()}" for j in change["evidence"][:evidence]]
                return [narrowed, days, *shown]
    return []


def forest_table(builds: Sequence[tuple[str, Mapping[str, Setup]]]) -> pd.DataFrame:
    """The thematic forest of each build, one row per level."""
    return pd.DataFrame(
        [
            {"dataset": dataset, "build": name, **level}
            for name, group in builds
            for dataset, setup in group.items()
            for level in setup.build.stats["forest_levels"]
        ]
    )


def tree_index(tuned: Mapping[str, Setup], datasets: Sequence[str]) -> IAIndex | None:
    """The calibrated index whose forest Fig. 5 draws a tree of: ComplexTR's (the paper's example), else
    the first data set's with an MEU; None when no forest has one."""
    for dataset in ["ComplexTR", *datasets]:
        if dataset in tuned and tuned[dataset].build.index.forest.meus:
            return tuned[dataset].build.index
    return None


def build_times(setups: Mapping[str, Setup]) -> pd.DataFrame:
    """Seconds of each index-build stage per data set (a cached build reports its first build's)."""
    return pd.DataFrame(
        [
            {"dataset": dataset, **{stage: round(setup.build.stats[stage], 2) for stage in BUILD_TIMES}}
            for dataset, setup in setups.items()
        ]
    )


#: Fig. 4 merges each relation with its inverse
MERGED = (
    ("before / after", {Allen.BEFORE, Allen.AFTER}),
    ("meets / met-by", {Allen.MEETS, Allen.MET_BY}),
    ("overlaps / overlapped-by", {Allen.OVERLAPS, Allen.OVERLAPPED_BY}),
    ("starts / started-by", {Allen.STARTS, Allen.STARTED_BY}),
    ("during / contains", {Allen.DURING, Allen.CONTAINS}),
    ("finishes / finished-by", {Allen.FINISHES, Allen.FINISHED_BY}),
    ("equals", {Allen.EQUALS}),
)


def allen_distribution(graphs: Mapping[str, EventGraph]) -> pd.DataFrame:
    """Edges per merged Allen relation and data set (count and share of edges with a relation), plus
    the edges whose interval has an unknown end (no relation yet)."""
    rows = []
    for name, g in graphs.items():
        counts = Counter(g.relations)
        total = sum(v for r, v in counts.items() if r is not None)
        for label, rels in MERGED:
            n = sum(counts.get(r, 0) for r in rels)
            rows.append(
                {"dataset": name, "relation": label, "edges": n, "share": n / total if total else 0.0}
            )
        rows.append(
            {
                "dataset": name,
                "relation": "(unbounded interval)",
                "edges": counts.get(None, 0),
                "share": np.nan,
            }
        )
    return pd.DataFrame(rows)
