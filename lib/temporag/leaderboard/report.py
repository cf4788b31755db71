"""The leaderboard's tables and its one figure.

* :func:`leaderboard_table` — one row per MultiTQ method: answer recall@k, template-reader Hits@1 (strict
  and lenient) with bootstrap 95% intervals, context facts and tokens, retrieval latency p50 / p95, and
  the embedded reader's Hits@1, LLM calls and tokens on the small sample.
* :func:`summary_figure` — recall of the whole context and template Hits@1 against context tokens, one
  point per method with its interval: the trade-off at a glance.
* :func:`headline_table` — each paper's printed headline as its entry declares it (:func:`headlines`;
  the cell a :class:`~temporag.reported.PaperRef`, never typed here), the kit's number under the paper's
  own protocol (read from the committed ``figures/<paper>/results.json``) and under the common protocol,
  and why they differ (the paper's protocol is the note :mod:`temporag.reported` keeps with the printed
  cell).
* :func:`code_table` — paper vs released code vs kit for every registered paper, gathered from the
  packages (the released-code readings their entries declare, every paper's printed hyper-parameters
  beside the value the kit's committed run used).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from temporag.answer.evaluate import category_rows
from temporag.methods import plots, registry
from temporag.methods.book_entry import PaperNumber
from temporag.reported import PAPERS, PaperRef, reported


class MissingPaperRun(FileNotFoundError):
    """A paper's committed run (``figures/<paper>/results.json``) or one of its metrics is missing."""


def check_paper_runs(figures_dir: Path, printed: Sequence[PaperNumber] | None = None) -> None:
    """Fail before any work when a committed paper run the headline table reads is missing (the paper
    profile requires them all), naming the command that makes it."""
    missing = sorted(
        {h.ref.paper for h in (printed or headlines()) if paper_run(h.ref.paper, figures_dir) is None}
    )
    if missing:
        commands = "; ".join(f"temporag run {p} --profile paper" for p in missing)
        raise MissingPaperRun(
            f"the headline table reads figures/<paper>/results.json, missing for {', '.join(missing)} under "
            f"{figures_dir}: run {commands} first, or pass -p require_paper_runs=False to list them"
        )


def headlines() -> tuple[PaperNumber, ...]:
    """Every registered paper's printed headline (``book.headline.printed`` of its entry, where the book
    reads it too): the MultiTQ papers in reading order, then those of the other data sets."""
    printed = [p for e in registry.entries() if e.book and e.book.headline for p in e.book.headline.printed]
    return tuple(sorted(printed, key=lambda p: p.ref.dataset != "MultiTQ"))  # stable: reading order kept


def _fmt_ci(mean: float, low: float, high: float) -> str:
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def leaderboard_table(
    rows: Sequence[dict], reads: Mapping[str, dict], notes: Mapping[str, str]
) -> pd.DataFrame:
    """The MultiTQ leaderboard from :func:`scores.summary_row` rows and :func:`scores.read_sample` results."""
    out = []
    for row in rows:
        name, read = row["method"], reads.get(row["method"], {})
        out.append(
            {
                "method": name,
                "n": row["n"],
                **{k: row[k] for k in row if k.startswith("recall@") and "CI" not in k},
                "recall (whole context)": _fmt_ci(
                    *(row[f"recall (whole context){s}"] for s in ("", " CI low", " CI high"))
                ),
                "template Hits@1 strict": _fmt_ci(
                    *(row[f"template Hits@1 strict{s}"] for s in ("", " CI low", " CI high"))
                ),
                "template Hits@1 lenient": row["template Hits@1 lenient"],
                "facts / question": row["facts / question"],
                "context tokens / question": row["context tokens / question"],
                "retrieval p50 ms": row["retrieval p50 ms"],
                "retrieval p95 ms": row["retrieval p95 ms"],
                "retrieval LLM calls / question": 0,
                "reader n": read.get("n", 0),
                "reader Hits@1 strict": read.get("strict", np.nan),
                "reader Hits@1 lenient": read.get("lenient", np.nan),
                "reader LLM calls / question": read.get("llm_calls", np.nan),
                "reader tokens / question": read.get("prompt_tokens", 0) + read.get("completion_tokens", 0),
                "variant": notes.get(name, ""),
            }
        )
    return pd.DataFrame(out)


def pivot(breakdown: pd.DataFrame) -> pd.DataFrame:
    """A :func:`scores.breakdown_table` as rows overall / Single / Multiple / each qtype, one column per
    method ("mean [low, high]") plus n."""
    methods = list(dict.fromkeys(breakdown.method))
    rows = []
    for group, cat, sub in category_rows(breakdown):
        row = {"category": cat if group != "overall" else "overall", "n": int(sub.n.iloc[0])}
        for m in methods:
            hit = sub[sub.method == m].iloc[0]
            row[m] = _fmt_ci(hit["mean"], hit.ci_low, hit.ci_high)
        rows.append(row)
    return pd.DataFrame(rows)


def summary_figure(rows: Sequence[dict], ceilings: Mapping[str, float] | None = None, note: str = ""):
    """Two panels sharing the x axis (context tokens per question, log): answer recall of the whole
    context, and the LLM-free template reader's strict Hits@1, one point per method with its 95%
    interval; the reader's ceilings (label → Hits@1, e.g. every fact of the main entity) dashed."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    plots.use_house_style()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharex=True)
    colours = plots.PALETTE
    panels = (
        ("recall (whole context)", "answer recall of the context"),
        ("template Hits@1 strict", "template-reader Hits@1 (strict, no LLM)"),
    )
    for ax, (column, label) in zip(axes, panels):
        for i, row in enumerate(rows):
            x, y = row["context tokens / question"], row[column]
            err = [[y - row[f"{column} CI low"]], [row[f"{column} CI high"] - y]]
            ax.errorbar(
                [x], [y], yerr=err, fmt="o", color=colours[i % len(colours)], capsize=4, label=row["method"]
            )
        styles = iter(("--", ":", "-."))
        for text, level in (ceilings or {}).items() if column.startswith("template") else ():
            ax.axhline(level, ls=next(styles, "--"), color="grey", lw=1, label=text)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.xaxis.set_minor_formatter(
            FuncFormatter(lambda v, _: f"{v:,.0f}" if str(int(round(v)))[0] in "2345" else "")
        )
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("context tokens per question (cl100k, log)")
        ax.set_ylabel(label)
    axes[0].legend(fontsize=8, loc="lower right")
    if ceilings:
        axes[1].legend(handles=axes[1].lines[-len(ceilings) :], fontsize=7, loc="lower right")
    fig.suptitle("MultiTQ leaderboard: what each method's context holds, and supports, for its size")
    if note:
        plots.footnote(fig, note)
    fig.tight_layout()
    return fig


# -- the paper's protocol beside the common one ------------------------------------------------------


def paper_run(paper: str, figures_dir: Path) -> dict | None:
    """The committed paper-profile run of ``paper`` (its results.json), or None when it is not there."""
    path = Path(figures_dir) / paper / "results.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def paper_protocol(ref: PaperRef) -> str:
    """The note :mod:`temporag.reported` keeps with the printed cell: its reader, sample, encoder."""
    cells = [r for r in reported(ref.paper, ref.source, ref.dataset, ref.row) if r.column == ref.column]
    return cells[0].note if cells else ""


def _why(h: PaperNumber, kit: dict | None, common: dict | None) -> str:
    parts = [f"paper: {paper_protocol(h.ref)}; rule {h.rule}"]
    if kit is not None:
        parts.append(f"kit (paper protocol): reader {kit.get('reader')}, rule {h.rule}, n = {kit.get('n')}")
    if common is not None:
        parts.append(f"kit (common protocol): {common['how']}")
    parts.append("embedder: all-MiniLM-L6-v2 in every kit column")
    return "; ".join(parts)


def headline_table(
    common: Mapping[str, dict],
    figures_dir: Path,
    *,
    require: bool = True,
    printed: Sequence[PaperNumber] | None = None,
) -> pd.DataFrame:
    """Paper / kit under the paper's protocol / kit under the common protocol, per headline.

    ``common`` maps a leaderboard name to {"value", "n", "how"}.  A missing ``figures/<paper>/results.json``
    (or metric) raises :class:`MissingPaperRun` naming the command that makes it when ``require``; otherwise
    the row says so."""
    rows = []
    for h in printed or headlines():
        run = paper_run(h.ref.paper, figures_dir)
        metric = None if run is None else run["metrics"].get(h.metric)
        if metric is None:
            what = (
                f"{Path(figures_dir) / h.ref.paper / 'results.json'} is missing"
                if run is None
                else f"{h.metric} is missing from {h.ref.paper}'s results.json"
            )
            fix = f"run `temporag run {h.ref.paper} --profile paper` (the committed paper-profile run)"
            if require:
                raise MissingPaperRun(f"{what}: {fix}")
            kit = None
            kit_text = f"missing — {fix}"
        else:
            kit = metric if isinstance(metric, dict) else {"value": metric}
            kit_text = "—" if kit.get("value") is None else f"{kit['value']:.3f} (n = {kit.get('n')})"
        c = common.get(h.common)
        rows.append(
            {
                "paper": h.ref.paper,
                "headline": h.ref.label(),
                "paper value": h.ref.value(),
                "kit, paper's protocol": kit_text,
                "kit, common protocol": "—" if c is None else f"{c['value']:.3f} (n = {c['n']})",
                "why they differ": _why(h, kit, c),
            }
        )
    return pd.DataFrame(rows)


# -- paper vs released code vs kit ----------------------------------------------------------------

#: a paper's printed hyper-parameter (a temporag.reported column) → the parameter its notebook records
KIT_PARAMETER = {
    ("tecqa", "K"): "K",
    ("tecqa", "N"): "N",
    ("star_rag", "K1"): "K1",
    ("star_rag", "K2"): "K2",
    ("sar", "K"): "K",
    ("sar", "N"): "N",
    ("ia_rag", "K1"): "K1",
    ("ia_rag", "K2"): "K2",
    ("ia_rag", "MAX_LEVELS"): "max_levels",
    ("ia_rag", "T_sem"): "tau",
}


OTHER_KGS = ("CronQuestions", "TimeQuestions", "Forecast")  # TKGQA data sets the paper notebooks do not run
WITH_CODE = "see this method's released-code rows"
NO_CODE = "no released code read by the kit"


def _hyperparameters(paper: str, figures_dir: Path, with_code: bool) -> list[dict]:
    run = paper_run(paper, figures_dir)
    params = {} if run is None else run.get("parameters", {})
    rows = []
    for r in reported(paper):
        if r.metric != "hyperparameter":
            continue
        name = r.column if r.column != "Value" else r.row
        kit_name = KIT_PARAMETER.get((paper, name))
        if r.dataset in OTHER_KGS:
            kit = f"not run: the kit's {paper} notebook runs MultiTQ"
        elif run is None:
            kit = f"figures/{paper}/results.json missing"
        elif kit_name is None:
            kit = "not a notebook parameter"
        else:
            kit = params.get(kit_name, "not recorded")
            kit = "the paper's per-data-set default" if kit is None else f"{kit_name} = {kit}"
        where = f"{r.source}" + (f", {r.dataset}" if r.dataset else "")
        rows.append(
            {
                "method": paper,
                "aspect": name,
                "paper": f"{r.value:g} ({where})",
                "released code (our reading)": WITH_CODE if with_code else NO_CODE,
                "kit": kit,
                "from": "reported.py + committed run",
            }
        )
    return rows


def code_table(figures_dir: Path) -> pd.DataFrame:
    """Paper vs released code vs kit for every registered paper, gathered: the readings of the released
    code that method entries declare (with file:line evidence), then every paper's printed
    hyper-parameters (:mod:`temporag.reported`) beside what the kit's committed run recorded.

    Methods come in the leaderboard's order: the MultiTQ (KG fact) methods in reading order, then the
    document methods, as the leaderboard's sections run."""
    entries = sorted(registry.entries(), key=lambda e: (e.evidence != "kg_fact", e.order, e.name))
    rows = [
        {"method": e.name} | row for e in entries if e.released_code is not None for row in e.released_code()
    ]
    for e in entries:
        if e.paper and e.name in PAPERS:
            rows.extend(_hyperparameters(e.name, figures_dir, e.released_code is not None))
    return pd.DataFrame(rows)
