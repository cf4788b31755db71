"""A static HTML index of every executed notebook, for a reading group to browse a reproduction offline.

``temporag index`` walks the committed runs (``figures/<paper>/``) and every other run (``runs/``, grids
included), failed runs kept beside their folders (``.<paper>.failed/``) too, and writes one folder:

* ``index.html`` — one row per run: notebook, folder, profile, status, duration, reader model and the
  paper-vs-kit headline numbers from its ``results.json`` (every metric recorded with the paper's value),
  then one section per run with all of them;
* ``<run>/<notebook>.html`` — the executed notebook rendered by nbconvert, plus copies of the run's
  ``results.json`` and ``tables.md``.

Everything is relative links and inline styles, with no script or font from the network (nbconvert's
require.js, MathJax and widget-manager tags are left out), so the folder can be zipped and opened anywhere.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from temporag.notebook.outputs import FIGURES_DIR, RUNS_DIR
from temporag.run import owned
from temporag.run.runner import changed_since_stamp

TEMPLATES = Path(__file__).with_name("templates")
RESULTS_ONLY = "results only"  # e.g. a committed run in figures/: git keeps its numbers, not its notebook
CHANGED = "changed after its run"  # a published folder whose files differ from its stamp's list: not current


@dataclass
class RunEntry:
    """One executed notebook found on disk, with what the index shows of it."""

    folder: Path
    name: str
    notebook: Path | None  # None: the folder holds results but no executed notebook (a committed run)
    status: str
    seconds: float | None = None
    finished: str = ""
    profile: str = ""
    reader: str = ""
    error: str = ""
    note: str = ""
    headline: list[dict[str, Any]] = field(default_factory=list)
    slug: str = ""


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def headline(results: dict) -> list[dict[str, Any]]:
    """Every metric recorded with the paper's value: key, kit, paper, n, reader (in recorded order), and
    ``other_questions`` when the run read a question file (the paper's number is on its own questions)."""
    other = str((results.get("parameters") or {}).get("split") or "").startswith("questions_file:")
    rows = []
    for key, metric in (results.get("metrics") or {}).items():
        if not isinstance(metric, dict):
            continue
        kit, paper = _number(metric.get("value")), _number(metric.get("paper"))
        if kit is None or paper is None:
            continue
        rows.append(
            {"metric": key, "kit": kit, "paper": paper, "n": metric.get("n"), "reader": metric.get("reader")}
            | ({"other_questions": True} if other else {})
        )
    return rows


def reader_model(results: dict) -> str:
    """The reader model(s) named by the run's metrics, else its configured model, else what ran offline."""
    named = sorted(
        {
            str(m["reader"])
            for m in (results.get("metrics") or {}).values()
            if isinstance(m, dict) and m.get("reader")
        }
    )
    if named:
        return ", ".join(named)
    settings = results.get("settings") or {}
    if settings.get("llm_model"):
        return str(settings["llm_model"])
    calls = (results.get("llm_calls") or {}).get("calls")
    return "embedded SmolLM2 (offline)" if calls else "no reader calls"


def changed_after_stamp(folder: Path, stamp: dict) -> bool:
    """Whether files of a published folder were added, changed or removed after its run stamp listed
    them (a stamp from before stamps listed files vouches for nothing either way: False)."""
    return isinstance(stamp.get("files"), dict) and bool(changed_since_stamp(folder))


def _entry(folder: Path, status_if_unstamped: str) -> RunEntry | None:
    notebooks = sorted(folder.glob("*.ipynb"))
    stamp = _read_json(folder / "_run.json")
    results = _read_json(folder / "results.json")
    if not notebooks and not results:
        return None
    if not stamp and not notebooks:
        status_if_unstamped = RESULTS_ONLY
    status = str(stamp.get("status") or ("ok" if stamp else status_if_unstamped))
    if status == "ok" and changed_after_stamp(folder, stamp):
        status = CHANGED
    parameters = stamp.get("parameters") or results.get("parameters") or {}
    return RunEntry(
        folder=folder,
        name=notebooks[0].stem if notebooks else str(results.get("notebook") or folder.name),
        notebook=notebooks[0] if notebooks else None,
        status=status,
        seconds=_number(stamp.get("seconds")),
        finished=str(stamp.get("finished") or results.get("created") or ""),
        profile=str(parameters.get("profile", "")),
        reader=reader_model(results) if results else "",
        error=str(stamp.get("error") or ""),
        note=str(stamp.get("note") or ""),
        headline=headline(results),
    )


def find_runs(roots: list[Path]) -> list[RunEntry]:
    """Run folders under ``roots``: a folder holding a ``results.json`` or a run stamp, with its executed
    notebook if it has one (a committed run in ``figures/`` has none in git: it is listed as "results
    only"); a failed run's ``.<name>.failed/`` folder counts as failed."""
    seen: set[Path] = set()
    entries = []
    for root in roots:
        if not root.is_dir():
            continue
        for marker in sorted([*root.rglob("_run.json"), *root.rglob("results.json")]):
            folder = marker.parent
            rel_parts = folder.relative_to(root).parts
            if folder in seen or any(p.startswith(".") and not p.endswith(".failed") for p in rel_parts):
                continue
            if "index" in rel_parts[:1] or "logs" in rel_parts[:1]:
                continue
            seen.add(folder)
            entry = _entry(folder, "failed" if folder.name.endswith(".failed") else "unstamped")
            if entry is not None:
                entries.append(entry)
    return entries


def _slug(entry: RunEntry, base: Path) -> str:
    try:
        rel = entry.folder.resolve().relative_to(base.resolve())
    except ValueError:
        rel = Path(entry.folder.name)
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", str(rel)).strip("_.") or "run"


def notebook_html(notebook: Path) -> str:
    """An executed notebook as a self-contained HTML page (no script or stylesheet from the network, every
    output sanitised: :mod:`temporag.batch.sanitize`)."""
    import nbformat

    from temporag.batch.sanitize import html_exporter

    body, _ = html_exporter("offline.html.j2").from_notebook_node(nbformat.read(notebook, as_version=4))
    return body


_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222;
       padding: 0 1em; }
table { border-collapse: collapse; width: 100%; margin: 0.8em 0 1.6em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.35em 0.5em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #11772d; font-weight: 600; } .failed { color: #b3261e; font-weight: 600; }
.incomplete { color: #9a6700; font-weight: 600; }
.unstamped, .results, .changed { color: #8a6d00; font-weight: 600; }
code, .small { font-size: 12px; } .muted { color: #666; }
h2 { margin-top: 2em; border-top: 1px solid #ccc; padding-top: 1em; }
"""


def _fmt(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.0f}" if abs(value) >= 100 and value == int(value) else f"{value:.3f}"


def href(target: str) -> str:
    """A page or file named after a run folder or notebook, as a quoted attribute's value: percent-encoded,
    then HTML-escaped, so an odd name can break neither the link nor the page."""
    return html.escape(quote(target))


def _summary_row(e: RunEntry, base: Path) -> str:
    esc = html.escape
    shown = "<br>".join(
        f"{esc(h['metric'])}: kit {_fmt(h['kit'])} · paper {_fmt(h['paper'])}"
        + (" (on other questions than this run's)" if h.get("other_questions") else "")
        for h in e.headline[:3]
    )
    more = f"<br><a href='#{e.slug}'>all {len(e.headline)} →</a>" if len(e.headline) > 3 else ""
    try:
        where = e.folder.resolve().relative_to(base.resolve())
    except ValueError:
        where = e.folder
    name = f"<a href='{e.slug}/{href(e.name)}.html'>{esc(e.name)}</a>" if e.notebook else esc(e.name)
    return (
        f"<tr><td>{name}</td>"
        f"<td><code>{esc(str(where))}</code></td><td>{esc(e.profile)}</td>"
        f"<td class='{esc(e.status.split()[0])}'>{esc(e.status)}</td>"
        f"<td class='num'>{'' if e.seconds is None else f'{e.seconds:,.1f} s'}</td>"
        f"<td>{esc(e.reader)}</td><td class='small'>{shown}{more}</td>"
        f"<td><a href='#{e.slug}'>details</a></td></tr>"
    )


def _detail(e: RunEntry) -> str:
    esc = html.escape
    rows = "".join(
        f"<tr><td><code>{esc(h['metric'])}</code></td><td class='num'>{_fmt(h['kit'])}</td>"
        f"<td class='num'>{_fmt(h['paper'])}</td>"
        f"<td class='num'>{'' if h['n'] is None else esc(str(h['n']))}</td>"
        f"<td>{esc(str(h['reader'] or ''))}</td></tr>"
        for h in e.headline
    )
    table = (
        "<table><tr><th>metric</th><th>kit</th><th>paper</th><th>n</th><th>reader</th></tr>"
        + rows
        + "</table>"
        if rows
        else "<p class='muted'>No metric of this run was recorded with a paper value.</p>"
    )
    links = [f"<a href='{e.slug}/{href(e.name)}.html'>executed notebook</a>"] if e.notebook else []
    links += [
        f"<a href='{e.slug}/{n}'>{n}</a>" for n in ("results.json", "tables.md") if (e.folder / n).exists()
    ]
    extra = ""
    if e.error:
        extra += f"<p class='failed'>error:</p><pre class='small'>{esc(e.error[-1500:])}</pre>"
    if e.note:
        extra += f"<p class='small'>note: {esc(e.note)}</p>"
    return (
        f"<h2 id='{e.slug}'>{esc(e.name)} <span class='muted small'>{esc(e.slug)}</span></h2>"
        f"<p>status <span class='{esc(e.status.split()[0])}'>{esc(e.status)}</span> · "
        f"finished {esc(e.finished) or '—'} · "
        f"reader {esc(e.reader) or '—'} · {' · '.join(links)}</p>{extra}{table}"
    )


def build_index(out: Path, figures_dir: Path = FIGURES_DIR, runs_dir: Path = RUNS_DIR) -> Path:
    """Write the site into ``out`` (replacing an older one) and return its ``index.html``."""
    out = Path(out)
    base = Path(figures_dir).resolve().parent
    entries = find_runs([Path(figures_dir), Path(runs_dir)])
    staging = owned.stage(out)  # refused before anything is built when out is not the kit's
    used: set[str] = set()
    for e in entries:
        slug = _slug(e, base)
        while slug in used:
            slug += "_"
        used.add(slug)
        e.slug = slug
        folder = staging / slug
        folder.mkdir()
        if e.notebook is not None:
            (folder / f"{e.name}.html").write_text(notebook_html(e.notebook), encoding="utf-8")
        for name in ("results.json", "tables.md"):
            if (e.folder / name).exists():
                shutil.copyfile(e.folder / name, folder / name)
    now = _dt.datetime.now().isoformat(timespec="seconds")
    counts = {s: sum(e.status == s for e in entries) for s in sorted({e.status for e in entries})}
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>temporag runs</title>"
        f"<style>{_STYLE}</style></head><body><h1>temporag: executed notebooks</h1>"
        f"<p class='muted'>{len(entries)} runs "
        f"({html.escape(', '.join(f'{n} {s}' for s, n in counts.items())) or 'none'})"
        " · "
        f"generated {now} by <code>temporag index</code>. Kit numbers beside the papers' from each run's "
        "results.json; reader numbers name the model that produced them.</p>"
        "<table><tr><th>notebook</th><th>folder</th><th>profile</th><th>status</th><th>duration</th>"
        "<th>reader model</th><th>paper vs kit (headline)</th><th></th></tr>"
        + "".join(_summary_row(e, base) for e in entries)
        + "</table>"
        + "".join(_detail(e) for e in entries)
        + "</body></html>"
    )
    (staging / "index.html").write_text(page, encoding="utf-8")
    owned.put_in_place(staging, out, "temporag index")
    return out / "index.html"
