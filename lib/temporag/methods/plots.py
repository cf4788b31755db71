"""One house style for every figure, and the few chart kinds the papers use.

Figures put the kit's measured value next to the paper's reported one wherever both exist, and
always name the reader model in the title or a footnote when a number depends on it.  Heatmaps,
distributions and category bars are seaborn calls inside the house style (matplotlib rcParams set by
:func:`use_house_style`); line charts and the paper-bar comparisons stay plain matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

KIT = "#1f77b4"
PAPER = "#bbbbbb"
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
PAPER_BAR = {"color": PAPER, "hatch": "//", "edgecolor": "#888888"}  # the paper's reported values


def use_house_style() -> None:
    plt.rcParams.update(
        {
            "figure.figsize": (6.4, 3.8),
            "figure.dpi": 110,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 8,
            "legend.frameon": False,
            "font.size": 9,
            "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
        }
    )


def footnote(fig, text: str) -> None:
    fig.text(0.01, -0.02, text, fontsize=7, color="#555555", ha="left", va="top")


def bar_value(value: float) -> str:
    """A bar's label: whole numbers with thousands separators (papers write 20,453 tokens), small values
    to 3 significant digits, nothing for a missing value."""
    if value != value:
        return ""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def plain_log_yaxis(ax, values: Sequence[float]) -> None:
    """A log y axis that reads like a table: ticks at 1, 2, 5 × 10^k written as plain numbers (20,000, not
    2×10^4), and room below the smallest of ``values`` so its bar is not drawn as a sliver."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    shown = [v for v in values if v == v and v > 0]
    if shown:
        ax.set_ylim(bottom=min(shown) / 2)
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _finish(fig, ax, title: str, ylabel: str, note: str, **legend):
    """The common tail of every chart: labels, legend (unless ``legend=None``), footnote, tight layout."""
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend.get("legend", True) is not None:
        ax.legend(**{k: v for k, v in legend.items() if k != "legend"})
    if note:
        footnote(fig, note)
    fig.tight_layout()
    return fig


def category_bars(
    frame,
    x: str,
    y: str,
    hue: str | None = None,
    *,
    ax=None,
    title: str = "",
    ylabel: str = "",
    note: str = "",
    ylim: tuple[float, float] | None = (0, 1.0),
    labels: bool = True,
):
    """Bars of ``y`` per ``x`` category, one colour per ``hue`` (a long data frame, one row per bar), with
    value labels; draws into ``ax`` when given (a panel of a larger figure), else a new figure."""
    import seaborn as sns

    use_house_style()
    if ax is None:
        n_bars = len(frame[x].unique()) * (len(frame[hue].unique()) if hue else 1)
        fig, ax = plt.subplots(figsize=(max(6.4, 0.45 * n_bars), 3.8))
    fig = ax.figure
    sns.barplot(
        data=frame,
        x=x,
        y=y,
        hue=hue,
        ax=ax,
        errorbar=None,
        palette=PALETTE[: frame[hue].nunique()] if hue else None,
        color=None if hue else KIT,
        saturation=1.0,
    )
    if labels:
        for container in ax.containers:
            ax.bar_label(container, [bar_value(v) for v in container.datavalues], fontsize=6, padding=1)
    ax.set_xlabel("")
    ax.tick_params(axis="x", labelrotation=20)
    for tick in ax.get_xticklabels():
        tick.set_horizontalalignment("right")
    if ylim:
        ax.set_ylim(ylim[0], ylim[1] * 1.08)  # room for the value labels of the tallest bars
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if hue and ax.get_legend() is not None:  # below the axes, where it hides no bar
        n = frame[hue].nunique()
        ax.legend(title=None, ncols=min(4, n), loc="upper center", bbox_to_anchor=(0.5, -0.22))
    if note:
        footnote(fig, note)
    return fig


def grouped_bars(
    categories: Sequence[str],
    series: dict[str, Sequence[float]],
    *,
    title: str = "",
    ylabel: str = "",
    note: str = "",
    ylim: tuple[float, float] | None = (0, 1.0),
):
    """Several measured series per category (e.g. methods × question types), via :func:`category_bars`."""
    import pandas as pd

    long = pd.DataFrame(
        [
            {"category": c, "series": name, "value": v}
            for name, vals in series.items()
            for c, v in zip(categories, vals)
        ]
    )
    fig = category_bars(long, "category", "value", "series", title=title, ylabel=ylabel, note=note, ylim=ylim)
    fig.tight_layout()
    return fig


def distribution(
    values: Sequence[float],
    *,
    marks: dict[str, float] | None = None,
    log10: bool = False,
    bins: int = 30,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "questions",
    note: str = "",
):
    """A histogram of ``values`` (log10 of them with ``log10``; values below 1 count as 1) with labelled
    dotted lines at ``marks`` (e.g. the sizes a paper prints)."""
    import seaborn as sns

    use_house_style()
    fig, ax = plt.subplots()
    shown = (
        np.log10(np.maximum(np.asarray(values, dtype=float), 1)) if log10 else np.asarray(values, dtype=float)
    )
    sns.histplot(shown, bins=bins, color=KIT, ax=ax, alpha=1.0, edgecolor="white", linewidth=0.3)
    for label, value in (marks or {}).items():
        if value is None:
            continue
        x = np.log10(value) if log10 else value
        ax.axvline(x, ls=":", color="grey")
        ax.text(
            x,
            ax.get_ylim()[1] * 0.97,
            f"{label} ",
            rotation=90,
            va="top",
            ha="right",
            fontsize=7,
            color="grey",
        )
    ax.set_xlabel(xlabel)
    return _finish(fig, ax, title, ylabel, note, legend=None)


def curve_with_length(
    ax, x, value, length, *, value_label: str, length_label: str, mark=None, title: str = ""
):
    """One panel of a value curve (left axis) with a context-length curve on a twin right axis (TECQA's
    Fig. 4), and the paper's chosen setting ``mark`` (an x value) drawn red."""
    ax.plot(x, value, marker="o", color=KIT, label=value_label)
    if mark is not None:
        chosen = [i for i, v in enumerate(x) if v == mark]
        ax.plot(
            [x[i] for i in chosen],
            [value[i] for i in chosen],
            marker="o",
            ms=9,
            color="red",
            ls="none",
            label="paper's optimum",
        )
    ax.set_ylabel(value_label)
    ax.set_title(title)
    twin = ax.twinx()
    twin.plot(x, length, marker="s", ls="--", color=PALETTE[1], label=length_label)
    twin.set_ylabel(length_label)
    twin.grid(False)
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], loc="lower right")
    return twin


def curves(
    xs: Sequence[float],
    series: dict[str, Sequence[float]],
    *,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    note: str = "",
    paper: dict[str, Sequence[float]] | None = None,
    logx: bool = False,
    highlight: str | None = None,
):
    """Line plot of measured series (``highlight`` drawn thick and black), the paper's dashed where given."""
    use_house_style()
    fig, ax = plt.subplots()
    for i, (name, ys) in enumerate(series.items()):
        color = "black" if name == highlight else PALETTE[i % len(PALETTE)]
        thick = name == highlight
        ax.plot(
            xs, ys, marker="o", label=name, color=color, lw=2.6 if thick else 1.4, zorder=3 if thick else 2
        )
        if paper and name in paper:
            ax.plot(xs, paper[name], ls="--", marker="x", color=color, alpha=0.6, label=f"{name} (paper)")
    if logx:
        ax.set_xscale("log")
        ax.minorticks_off()
    ax.set_xticks(list(xs), [f"{x:g}" for x in xs])
    ax.set_xlabel(xlabel)
    return _finish(fig, ax, title, ylabel, note, loc="center left", bbox_to_anchor=(1.01, 0.5))


def heatmap(
    matrix: np.ndarray,
    rows: Sequence,
    cols: Sequence,
    *,
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    fmt: str = "{:.2f}",
    note: str = "",
    cmap: str = "viridis",
):
    """Annotated heatmap (e.g. STAR-RAG's K1 × K2 sensitivity), first row at the bottom like a plot's y
    axis; cells are written with ``fmt`` (a ``str.format`` pattern)."""
    import seaborn as sns

    use_house_style()
    matrix = np.asarray(matrix, dtype=float)
    fig, ax = plt.subplots(figsize=(4.8, 4.0))
    cells = np.vectorize(lambda v: "" if v != v else fmt.format(v), otypes=[str])(matrix)
    sns.heatmap(
        matrix,
        annot=cells,
        fmt="",
        cmap=cmap,
        ax=ax,
        xticklabels=[str(c) for c in cols],
        yticklabels=[str(r) for r in rows],
        cbar_kws={"shrink": 0.8},
        annot_kws={"fontsize": 8},
    )
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelrotation=0)
    ax.grid(False)
    ax.set_xlabel(xlabel)
    return _finish(fig, ax, title, ylabel, note, legend=None)
