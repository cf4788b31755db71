"""The book's first section: the scorecard, every declared claim of every paper judged by the one rule.

Each row is judged from the run's recorded per-question outcomes (:mod:`temporag.claims.scorecard`) and
links to the notebook section that measures it.  The committed paper-profile run is judged where it
holds outcomes; otherwise the smoke run (labelled so); a paper with neither says which run lacks them.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from urllib.parse import quote

from temporag.claims import rule, scorecard


def _row(paper_title: str, page: str, r: dict, label: str) -> str:
    esc = html.escape
    # nbconvert's heading id: the heading, spaces as hyphens, percent-encoded with these characters kept
    anchor = quote(r.get("section", ""), safe="?/:@!$&'()*+,;=")
    link = esc(f"{quote(page)}#{anchor}" if anchor else quote(page))
    own = " <i>(kit's own)</i>" if r["kit's own"] else ""
    best = f" · best {esc(r['best'])}" if r["best"] else ""
    verdict = esc(r["verdict"])
    return (
        f"<tr><td>{esc(paper_title)}{label}</td><td><a href='{link}'>{esc(r['statement'])}</a>{own}"
        f"<br><span class='book-plumbing'>{esc(r['where'])} · {esc(r['protocol'])} protocol · "
        f"{esc(r['compared'])}{best}</span></td><td class='verdict-{verdict.replace(' ', '-')}'>"
        f"<b>{verdict}</b></td><td>{scorecard._num(r['effect'])}</td><td>{scorecard.interval(r)}</td>"
        f"<td>{esc(str(r['n'] or ''))}</td><td>{scorecard._num(r['mde'], '{:.3f}')}</td></tr>"
    )


def scorecard_html(runs: Mapping, smoke: Mapping, names: Sequence[str], titles: Mapping[str, str]) -> str:
    """The scorecard table (paper × claim → verdict, effect, interval, n, MDE), the chance line and the
    rule.  ``runs`` / ``smoke`` map a paper to its committed / smoke run (``book.Run``) or None."""
    rows, judged, missing = [], [], []
    for paper in names:
        sections = {c.key: c.section for c in scorecard.declared(paper)}
        if not sections:
            continue
        chosen = None
        for run, page, label in ((runs.get(paper), f"{paper}.html", ""),
                                 (smoke.get(paper), f"{paper}-smoke.html", " <i>(smoke run)</i>")):
            if run is None:
                continue
            try:
                chosen = (scorecard.judge_run(run.folder), page, label)
                break
            except scorecard.NoRecords:
                missing.append(f"{run.folder.name} ({'smoke' if label else 'paper profile'}) of {paper}")
        if chosen is None:
            continue
        result, page, label = chosen
        label += " <i>(rebuilt from its per-question records)</i>" if result.rebuilt else ""
        judged.append(result)
        for r in result.rows:
            rows.append(_row(titles.get(paper, paper), page, {**r, "section": sections.get(r["claim"], "")},
                             label))
    head = ("<tr><th>paper</th><th>claim</th><th>verdict</th><th>effect</th><th>95 % interval</th>"
            "<th>n</th><th>MDE</th></tr>")
    lacking = (
        "<p class='book-banner'>No per-question records (re-run to judge): "
        + html.escape("; ".join(missing)) + "</p>" if missing else ""
    )
    chance = html.escape(scorecard.chance_summary(judged)) if judged else ""
    rule_text = html.escape(rule.RULE.replace("**", "").replace("*", ""))
    table = "<p>No run judged yet.</p>"
    if rows:
        table = f"<table class='book scorecard'>{head}{''.join(rows)}</table>"
    return (
        "<h2>Scorecard: which claims hold</h2>" + lacking
        + table
        + f"<p>{chance}</p><p class='book-plumbing'>{rule_text}</p>"
    )
