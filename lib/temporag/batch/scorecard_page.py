"""The book's first section: the scorecard, every declared claim of every paper judged by the one rule.

One screen first: per paper its central claims (tier a) with the verdict and the paper's Δ beside the
kit's effect, counts per tier and verdict, and a forest plot; then every claim grouped by paper and tier.
Each row is judged from the run's recorded per-question outcomes (:mod:`temporag.batch.scorecard`) and
links to the notebook section that measures it.  The committed paper-profile run is judged where it
holds outcomes; otherwise the smoke run (labelled so); a paper with neither says which run lacks them.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from urllib.parse import quote

from temporag.batch import scorecard
from temporag.batch.forest import COLOURS, forest_svg, not_drawn
from temporag.claims import rule
from temporag.claims.judge import counts, mde_text, p_value
from temporag.claims.model import PLUMBING_TIER


def _link(page: str, section: str) -> str:
    # nbconvert's heading id: the heading, spaces as hyphens, percent-encoded with these characters kept
    anchor = quote(section, safe="?/:@!$&'()*+,;=")
    return html.escape(f"{quote(page)}#{anchor}" if anchor else quote(page))


def _verdict_cell(verdict: str) -> str:
    colour = COLOURS.get(verdict, "#616161")
    return (f"<td class='verdict-{html.escape(verdict.replace(' ', '-'))}' style='color:{colour}'>"
            f"<b>{html.escape(verdict)}</b></td>")


def _row(paper_title: str, page: str, r: dict, label: str) -> str:
    esc = html.escape
    best = f" · best other {esc(r['best'])}" if r["best"] else ""
    stands_in = f" · {esc(r['stands_in'])}" if r.get("stands_in") else ""
    note = f"<br><span class='book-plumbing'>{esc(r['note'])}</span>" if r["note"] else ""
    return (
        f"<tr><td>{esc(paper_title)}{label}</td><td>{esc(r['tier'])}</td>"
        f"<td><a href='{_link(page, r.get('section', ''))}'>{esc(r['statement'])}</a>"
        f"<br><span class='book-plumbing'>{esc(r['where'])} · {esc(r['protocol'])} protocol · "
        f"{esc(r['compared'])}{best}{stands_in}</span>{note}</td>{_verdict_cell(r['verdict'])}"
        f"<td>{scorecard._num(r.get('paper Δ'))}</td><td>{scorecard._num(r['effect'])}</td>"
        f"<td>{scorecard.interval(r)}</td><td>{esc(str(r['n'] or ''))}</td>"
        f"<td>{mde_text(r)}</td><td>{p_value(r.get('p'))}</td>"
        f"<td>{p_value(r.get('p_holm'))}</td></tr>"
    )


def _central_row(page: str, r: dict) -> str:
    esc = html.escape
    return (
        f"<tr><td><a href='{_link(page, r.get('section', ''))}'>{esc(r['statement'])}</a> "
        f"<span class='book-plumbing'>({esc(r['where'])})</span></td>{_verdict_cell(r['verdict'])}"
        f"<td>{scorecard._num(r.get('paper Δ'))}</td><td>{scorecard._num(r['effect'])} "
        f"{scorecard.interval(r)}</td><td>{esc(str(r['n'] or ''))}</td></tr>"
    )


def question_counts(run: scorecard.JudgedRun) -> str:
    """The questions a paper's verdicts rest on: n per data set where the run spans several."""
    datasets = [d for d in ("TimeQA", "TempReason", "ComplexTR", "MultiTQ") if d in run.questions]
    judged = [r for r in run.rows if r["n"]]
    if len(datasets) > 1:
        parts = []
        for ds in datasets:
            ns = [r["n"] for r in judged if r["measure"].endswith(f"/{ds}")]
            if ns:
                parts.append(f"{ds} {max(ns)}")
        return ", ".join(parts)
    return f"{run.questions} {max((r['n'] for r in judged), default=0)}"


def _counts_line(rows: Sequence[dict]) -> str:
    return "; ".join(f"{tier}: " + ", ".join(f"{v} {k}" for k, v in sorted(c.items(), key=lambda x: -x[1]))
                     for tier, c in counts(rows).items())


def _inline_image(svg: str, alt: str) -> str:
    """An SVG as an ``<img>`` with a data address: the book's sanitiser keeps images and drops inline
    ``<svg>`` markup, and an SVG shown as an image runs nothing."""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f"<img alt='{html.escape(alt)}' src='data:image/svg+xml;base64,{data}'>"


def _paper_summary(title: str, run: scorecard.JudgedRun, rows: list[dict]) -> str:
    esc = html.escape
    central = [r for r in rows if r["tier"].startswith("a") and r["verdict"] not in (rule.NOT_TESTABLE,)]
    table = "".join(_central_row(r["page"], r) for r in central)
    drawable = [r for r in rows if r["tier"] != PLUMBING_TIER]
    plot = forest_svg(drawable, title)
    elsewhere = [r["claim"] for r in not_drawn(drawable)]
    aside = (f"<p class='book-plumbing'>Not drawn (other units, or no interval): "
             f"{esc(', '.join(elsewhere))}; see the table.</p>" if elsewhere else "")
    return (
        f"<h3>{esc(title)}</h3><p class='book-plumbing'>questions: {esc(question_counts(run))} · "
        f"{esc(_counts_line(rows))}</p>"
        "<table class='book scorecard central'><tr>"
        "<th>the paper's claim (tier a: LLM-free, every question)</th><th>verdict</th>"
        f"<th>paper's Δ</th><th>kit: effect [interval]</th><th>n</th></tr>{table}</table>"
        + (f"<div class='book-forest'>{_inline_image(plot, f'{title}: forest plot of its claims')}</div>"
           if plot else "") + aside
    )


def _judged_runs(runs: Mapping, smoke: Mapping, names: Sequence[str]):
    """Per notebook with claims, the run its verdicts come from (the committed run, else the smoke run),
    its page and label; and the runs that lack per-question records."""
    chosen, missing = [], []
    for notebook in names:
        declared = {c.key: c for c in scorecard.declared(notebook)}
        if not declared:
            continue
        for run, page, label in ((runs.get(notebook), f"{notebook}.html", ""),
                                 (smoke.get(notebook), f"{notebook}-smoke.html", " <i>(smoke run)</i>")):
            if run is None:
                continue
            try:
                chosen.append((scorecard.judge_run(run.folder), page, label, declared))
                break
            except scorecard.NoRecords:
                missing.append(f"{run.folder.name} ({'smoke' if label else 'paper profile'}) of {notebook}")
    return chosen, missing


def scorecard_html(runs: Mapping, smoke: Mapping, names: Sequence[str], titles: Mapping[str, str]) -> str:
    """The scorecard: per paper its central claims (verdict, paper's Δ beside the kit's effect and
    interval, counts per tier and verdict) and a forest plot, then every claim grouped by paper and tier,
    Holm's guarantee and the rule.  ``runs`` / ``smoke`` map a notebook to its committed / smoke run
    (``book.Run``) or None.  A paper's rows may come from several runs (its "beats the baselines" row is
    judged on the leaderboard's): Holm's correction is taken over the paper's whole family."""
    chosen, missing = _judged_runs(runs, smoke, names)
    judged = scorecard.across_runs([c[0] for c in chosen])
    by_paper: dict[str, list[dict]] = {}
    own_run: dict[str, scorecard.JudgedRun] = {}
    for result, (_, page, label, declared) in zip(judged, chosen):
        own_run[result.notebook] = result
        for r in result.rows:
            claim = declared[r["claim"]]
            by_paper.setdefault(r["paper"], []).append(
                {**r, "section": claim.section, "stands_in": claim.stands_in, "page": page, "label": label})
    summaries, rows = [], []
    for paper in [p for p in names if p in by_paper] + [p for p in by_paper if p not in names]:
        mine = sorted(by_paper[paper], key=lambda r: r["tier"])
        title = titles.get(paper, paper)
        smoke_note = " (smoke run)" if any(r["label"] for r in mine) else ""
        run = own_run.get(paper) or next(iter(own_run.values()))
        summaries.append(_paper_summary(title + smoke_note, run, mine))
        rows += [_row(title, r["page"], r, r["label"]) for r in mine]
    head = ("<tr><th>paper</th><th>tier</th><th>claim</th><th>verdict</th><th>paper's Δ</th><th>effect</th>"
            "<th>interval</th><th>n</th><th>MDE</th><th>p</th><th>p (Holm)</th></tr>")
    lacking = (
        "<p class='book-banner'>No per-question records (re-run to judge): "
        + html.escape("; ".join(missing)) + "</p>" if missing else ""
    )
    chance = html.escape(scorecard.chance_summary(judged)) if judged else ""
    rule_text = html.escape(rule.RULE.replace("**", "").replace("*", ""))
    table = "<p>No run judged yet.</p>"
    if rows:
        table = ("<h3>Every claim, by paper and tier</h3>"
                 f"<table class='book scorecard'>{head}{''.join(rows)}</table>")
    return (
        "<h2>Scorecard: which claims hold</h2>" + lacking + "".join(summaries)
        + table
        + f"<p>{chance}</p><p class='book-plumbing'>{rule_text}</p>"
    )
