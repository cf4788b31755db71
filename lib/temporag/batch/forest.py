"""A forest plot of one paper's judged claims: the picture a reader takes in before the table.

Each claim is a row: the kit's effect as a dot, its interval as a bar coloured by the verdict, the
paper's own Δ as a hollow diamond, 0 as a solid line and the equivalence margin ±δ dashed.  Drawn to an
inline SVG string so the book's first page carries it without a file of its own.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

from temporag.claims import rule

#: one colour per verdict word (the book's scorecard uses the same)
COLOURS = {
    rule.REPRODUCED: "#2e7d32", rule.HOLDS: "#2e7d32", rule.CONTRADICTED: "#c62828",
    rule.DOES_NOT_HOLD: "#c62828", rule.INCONCLUSIVE: "#616161", rule.UNDERPOWERED: "#ef6c00",
    rule.NO_DIFFERENCE: "#1565c0", rule.IDENTICAL: "#6a1b9a", rule.TOO_FEW: "#9e9e9e",
    rule.PLUMBING: "#bdbdbd",
}


def _finite(value) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def plotted(rows: Sequence[dict]) -> list[dict]:
    """The rows a forest plot can draw on its one axis: an effect and an interval, both differences of
    proportions (within ±1; a claim in other units, e.g. tokens, stays in the table)."""
    return [
        r for r in rows
        if _finite(r.get("effect")) and _finite(r.get("ci_low")) and _finite(r.get("ci_high"))
        and max(abs(r["ci_low"]), abs(r["ci_high"])) <= 1
    ]


def not_drawn(rows: Sequence[dict]) -> list[dict]:
    """The rows with an effect that :func:`plotted` leaves out (other units, or no interval)."""
    shown = plotted(rows)
    return [r for r in rows if _finite(r.get("effect")) and not any(r is s for s in shown)]


def forest_svg(rows: Sequence[dict], title: str) -> str:
    """One paper's claims as a forest plot (SVG markup); "" when no row has an interval."""
    shown = plotted(rows)
    if not shown:
        return ""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from temporag.methods.plots import use_house_style  # lazy: matplotlib loads only when a page draws one

    use_house_style()
    height = 0.9 + 0.32 * len(shown)
    fig, ax = plt.subplots(figsize=(7.2, height))
    labels = []
    for y, r in enumerate(reversed(shown)):
        colour = COLOURS.get(r["verdict"], "#616161")
        ax.plot([r["ci_low"], r["ci_high"]], [y, y], color=colour, linewidth=3.2, solid_capstyle="butt")
        ax.plot([r["effect"]], [y], "o", color="white", markeredgecolor=colour, markersize=5.5)
        if _finite(r.get("paper Δ")):
            ax.plot([r["paper Δ"]], [y], "D", markerfacecolor="none", markeredgecolor="black", markersize=6)
        labels.append(f"{r['claim']} · {r['verdict']}")
    ax.axvline(0, color="black", linewidth=0.8)
    for edge in (-rule.MARGIN, rule.MARGIN):
        ax.axvline(edge, color="#888888", linewidth=0.8, linestyle="--")
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_xlabel("effect: first arm − second (about-best: paper's setting − best other)\n"
                  f"bar: the kit's interval, ○ its effect · ◇ the paper's Δ · dashed: ±δ = {rule.MARGIN}",
                  fontsize=8)
    ax.set_title(title, fontsize=9, loc="left")
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]
