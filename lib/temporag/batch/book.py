"""The reading-group book: the executed notebooks as a static HTML site to read offline, every figure inline.

``temporag book`` (``make book``) writes one folder (default ``runs/book/``, open its ``index.html``):

* ``index.html`` — the first page: per paper, the number the kit can really compare with the paper (an
  LLM-free retrieval recall, the template reader's Hits@1) beside the paper's headline number, and the
  reader-model number labelled as plumbing (each notebook declares its row, a
  :class:`~temporag.methods.book_entry.BookEntry`, found in the reading order by :func:`pages`; not guessed
  from key names);
* ``<paper>.html`` — the committed paper-profile run (``figures/<paper>/``): its executed notebook, or,
  when git holds only its results, a page built from its ``results.json`` tables and its PNG figures,
  labelled "results only";
* ``<paper>-smoke.html`` — the executed smoke notebook (``runs/smoke/<paper>/``), when there is one;
* ``leaderboard.html`` (the leaderboard run) and ``paper-vs-code.html`` (paper vs released code vs kit).

Every page is a notebook rendered by nbconvert with the book's template (the lab template without
require.js, MathJax, Mermaid or the widget manager, which come from CDNs): images are embedded, links are
relative, so the folder can be zipped and opened anywhere.  A page built from results is a notebook too
(markdown, HTML tables and images as outputs), rendered the same way.
"""

from __future__ import annotations

import base64
import html
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from temporag.batch.index import _fmt, _read_json, changed_after_stamp, headline, href
from temporag.batch.scorecard_page import scorecard_html
from temporag.methods import registry
from temporag.methods.book_entry import BookEntry, Headline, Number
from temporag.methods.registry import notebook_path, output_name
from temporag.notebook import owned
from temporag.notebook.outputs import FIGURES_DIR, RUNS_DIR, STAMP
from temporag.run.runner import reading_order

RESULTS_ONLY = "results only — re-run the paper profile for the executed notebook"


@dataclass(frozen=True)
class Page:
    """A notebook as the book shows it: its output folder, its pages' title and its first-page row."""

    paper: str  # its output folder: figures/<paper>/
    title: str
    headline: Headline | None  # None: its pages are listed, the first page's table has no row for it


def book_declaration(notebook: str) -> BookEntry | None:
    """What ``notebook`` declares for the book: its registered entry's ``book``, else None."""
    found = registry.find(notebook)
    return found[0].book if found else None


def pages() -> list[Page]:
    """Every notebook in the reading order (:func:`temporag.run.runner.reading_order`) with what it declares
    for the book; one that declares nothing is titled by its folder and has no first-page row."""
    found = []
    for notebook in reading_order():
        declared, paper = book_declaration(notebook), output_name(notebook)
        found.append(Page(paper, declared.title, declared.headline) if declared else Page(paper, paper, None))
    return found


def titles() -> dict[str, str]:
    """Every declared page's title by its folder."""
    return {p.paper: p.title for p in pages()}


# -- reading runs --------------------------------------------------------------------------------------


@dataclass
class Run:
    """One run folder the book shows."""

    paper: str
    folder: Path
    notebook: Path | None  # its executed notebook, None for a committed run git keeps results of only
    results: dict
    stamp: dict


def find_run(folder: Path, paper: str) -> Run | None:
    """The run in ``folder`` (its executed notebook is the one named after the paper's notebook)."""
    results = _read_json(folder / "results.json")
    if not results:
        return None
    source = notebook_path(paper)
    executed = folder / f"{source.stem if source else paper}.ipynb"
    found = executed if executed.exists() else next(iter(sorted(folder.glob("*.ipynb"))), None)
    return Run(paper, folder, found, results, _read_json(folder / STAMP))


def papers(figures_dir: Path, runs_dir: Path) -> list[str]:
    """Every paper with a committed or a smoke run: the reading order first, then the rest by name."""
    found = {
        p.parent.name
        for root in (figures_dir, runs_dir / "smoke")
        for p in root.glob("*/results.json")
        if not p.parent.name.startswith(".")  # a run being staged, a failed run kept aside
    }
    order = [p.paper for p in pages()]
    return [p for p in order if p in found] + sorted(found - set(order))


def metric(runs: dict[str, Run | None], number: Number) -> dict[str, Any] | None:
    """The recorded metric behind ``number`` as a dict (value, paper, n, reader), None when not recorded."""
    run = runs.get(number.run)
    value = (run.results.get("metrics") or {}).get(number.metric) if run else None
    if value is None:
        return None
    return value if isinstance(value, dict) else {"value": value}


# -- pages as notebooks --------------------------------------------------------------------------------


def _markdown(text: str):
    import nbformat

    return nbformat.v4.new_markdown_cell(text)


BOOK_CELL = "temporag-book"  # tag of a cell the book adds: its (empty) input is not shown


def _outputs(*items: tuple[str, str]):
    """A code cell without source whose outputs show ``items`` ((mime type, data) pairs)."""
    import nbformat

    cell = nbformat.v4.new_code_cell("", metadata={"tags": [BOOK_CELL]})
    cell.outputs = [nbformat.v4.new_output("display_data", data={mime: data}) for mime, data in items]
    return cell


def _png(path: Path) -> tuple[str, str]:
    return "image/png", base64.b64encode(path.read_bytes()).decode("ascii")


def image_outputs(nb) -> int:
    """How many images a notebook's outputs show."""
    return sum(
        any(m.startswith("image/") for m in (out.get("data") or {}))
        for cell in nb.cells
        for out in cell.get("outputs", [])
    )


def _table_html(records: list[dict]) -> str:
    import pandas as pd

    frame = pd.DataFrame.from_records(records)
    return frame.to_html(index=False, classes="book", border=0, na_rep="", float_format=lambda v: f"{v:.3f}")


def _figures(run: Run) -> list[Path]:
    return [
        run.folder / f"{key}.png"
        for key in run.results.get("figures") or []
        if (run.folder / f"{key}.png").exists()
    ]


def _run_facts(run: Run, files: str) -> str:
    esc = html.escape
    params = run.results.get("parameters") or {}
    finished = run.stamp.get("finished") or run.results.get("created") or "—"
    parts = [
        f"profile <b>{esc(str(params.get('profile', '—')))}</b>",
        f"questions {esc(str(params.get('sample_size', '—')))}",
        f"reader sample {esc(str(params.get('reader_sample', '—')))}",
        f"finished {esc(str(finished))}",
        f"folder <code>{esc(run.results.get('output_dir') or str(run.folder))}</code>",
        f"<a href='{href(files)}/results.json'>results.json</a>",
        f"<a href='{href(files)}/tables.md'>tables.md</a>",
    ]
    facts = "<p>" + " · ".join(parts) + "</p>"
    if run.stamp.get("status") == "incomplete":  # LLM answers missing: numbers from the calls that answered
        facts = (
            "<p class='book-banner'><b>Incomplete run</b>: "
            + esc(str(run.stamp.get("note") or "some LLM answers are missing"))
            + "</p>"
            + facts
        )
    return facts


def notebook_page(run: Run, title: str, files: str, note: str = ""):
    """An executed notebook, headed by what the run was; figures it saved but did not show are appended."""
    import nbformat

    nb = nbformat.read(run.notebook, as_version=4)
    head = [_outputs(("text/html", f"<h1>{html.escape(title)}</h1>{note}{_run_facts(run, files)}"))]
    tail = []
    figures = _figures(run)
    if image_outputs(nb) < len(figures):
        tail.append(
            _markdown(
                "## Figures this run saved\n\nThis notebook version saved them without showing them inline."
            )
        )
        tail += [c for p in figures for c in (_markdown(f"### {html.escape(p.stem)}"), _outputs(_png(p)))]
    nb.cells = head + nb.cells + tail
    return nb


def results_page(run: Run, title: str, files: str):
    """A committed run without its executed notebook: its recorded numbers, tables and figures."""
    import nbformat

    esc = html.escape
    nb = nbformat.v4.new_notebook()
    banner = (
        f"<p class='book-banner'><b>{esc(RESULTS_ONLY)}</b> (<code>temporag reproduce -n "
        + esc(notebook_path(run.paper).stem if notebook_path(run.paper) else run.paper)
        + " --profile paper</code>). The numbers, tables and figures below are the committed run's.</p>"
    )
    cells = [_outputs(("text/html", f"<h1>{esc(title)}</h1>{banner}{_run_facts(run, files)}"))]
    figures = _figures(run)
    if figures:
        cells.append(_markdown("## Figures"))
        cells += [c for p in figures for c in (_markdown(f"### {html.escape(p.stem)}"), _outputs(_png(p)))]
    rows = headline(run.results)
    if rows:
        cells.append(_markdown("## Kit vs paper\n\nEvery number this run recorded beside the paper's value."))
        cells.append(_outputs(("text/html", _table_html(rows))))
    tables = run.results.get("tables") or {}
    if tables:
        cells.append(_markdown("## Tables"))
    for key, table in tables.items():
        caption = esc(str(table.get("caption") or ""))
        cells.append(
            _outputs(
                (
                    "text/html",
                    f"<h3>{esc(key)}</h3><p>{caption}</p>" + _table_html(table.get("records") or []),
                )
            )
        )
    nb.cells = cells
    return nb


def _cell(m: dict[str, Any] | None, key: str = "value") -> str:
    value = None if m is None else m.get(key)
    return _fmt(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


def _n(m: dict[str, Any] | None) -> str:
    return f" <span class='book-plumbing'>(n = {html.escape(str(m['n']))})</span>" if m and m.get("n") else ""


def front_page(runs: dict[str, Run | None], smoke: dict[str, Run | None], names: list[str]):
    """The first page: per paper, the comparable number beside the paper's; the reader number as plumbing."""
    import nbformat

    esc = html.escape
    rows = []
    for page in pages():
        h = page.headline
        if h is None or page.paper not in names:
            continue
        comparable = "<br>".join(
            f"<b>{_cell(m)}</b> {esc(c.label)}{_n(m)}"
            + (f" · paper {_cell(m, 'paper')}" if m and m.get("paper") is not None else "")
            for c in h.comparable
            for m in [metric(runs, c)]
        )
        paper = metric(runs, h.paper_number)
        reader = metric(runs, h.plumbing)
        model = esc(str(reader.get("reader") or "")) if reader else ""
        links = [f"<a href='{href(page.paper)}.html'>paper profile</a>"] + (
            [f"<a href='{href(page.paper)}-smoke.html'>smoke</a>"] if smoke.get(page.paper) else []
        )
        rows.append(
            f"<tr><td><b>{esc(page.title)}</b><br>{' · '.join(links)}</td><td>{comparable}</td>"
            f"<td><b>{_cell(paper, 'paper')}</b> {esc(h.paper_number.label)}</td>"
            f"<td class='book-plumbing'>{_cell(reader)} {esc(h.plumbing.label)}{_n(reader)}<br>{model}"
            "<br><i>plumbing: proves the pipeline runs; not comparable with the paper</i></td></tr>"
        )
    table = (
        "<table class='book'><tr><th>paper</th><th>kit: the comparable number (no LLM)</th>"
        "<th>paper's number</th><th>kit: reader model (plumbing)</th></tr>" + "".join(rows) + "</table>"
    )
    title = titles()
    others = "".join(
        f"<li><a href='{href(p)}.html'>{esc(title.get(p, p))}</a>"
        + (f" · <a href='{href(p)}-smoke.html'>smoke run</a>" if smoke.get(p) else "")
        + "</li>"
        for p in names
    )
    intro = (
        "<h1>temporag: a reading-group book</h1><p>Five temporal RAG papers reproduced offline: four on "
        "the MultiTQ test questions the kit shares (954), IA-RAG on TimeQA, TempReason and ComplexTR (the "
        "scorecard gives the n behind each verdict). Each paper's page is its executed notebook (or, where "
        "git keeps only its results, its numbers, tables and figures). The first column is what the kit can "
        "stand behind without a large LLM: whether the retrieved evidence holds a gold answer, and the "
        "Hits@1 of an LLM-free template reader over that evidence. The papers' numbers come from large "
        "reader models; the kit's embedded reader (SmolLM2-135M) only shows the pipeline runs end to end.</p>"
    )
    nav = (
        "<h2>Pages</h2><ul>"
        + others
        + "<li><a href='paper-vs-code.html'>Paper vs released code vs kit</a></li></ul>"
    )
    card = scorecard_html(runs, smoke, names, title)
    nb = nbformat.v4.new_notebook()
    nb.cells = [_outputs(("text/html", intro + card + "<h2>Headline numbers</h2>" + table + nav))]
    return nb


def paper_vs_code_page(leaderboard: Run | None):
    """The leaderboard run's paper-vs-released-code-vs-kit table, one section per method."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    cells = [_markdown("# Paper vs released code vs kit")]
    table = ((leaderboard.results.get("tables") or {}) if leaderboard else {}).get("paper_vs_code_vs_kit")
    if not table:
        cells.append(
            _markdown(
                "No committed leaderboard run holds this table yet "
                "(`temporag reproduce -n leaderboard --profile paper`)."
            )
        )
    else:
        cells.append(_markdown(html.escape(str(table.get("caption") or ""))))
        records = table.get("records") or []
        folder = {e.name: output_name(e.notebook_name) for e in registry.entries() if e.notebook_name}
        title = titles()
        for method in _reading_order_of({r.get("method") for r in records}, records):
            rows = [
                {k: v for k, v in r.items() if k != "method"} for r in records if r.get("method") == method
            ]
            page = folder.get(method, method)
            link = f"[{html.escape(str(title.get(page, method)))}]({quote(str(page))}.html)"
            cells += [_markdown(f"## {link}"), _outputs(("text/html", _table_html(rows)))]
    nb.cells = cells
    return nb


def _reading_order_of(methods: set[str], records: list[dict]) -> list[str]:
    """``methods`` in the registry's reading order, any it does not know after, as the records list them."""
    known = [e.name for e in registry.entries() if e.name in methods]
    return known + [m for m in dict.fromkeys(r.get("method") for r in records) if m not in known]


# -- rendering -----------------------------------------------------------------------------------------


def _nav(names: list[str], here: str) -> str:
    items = [
        ("index.html", "Book"),
        *((f"{p}.html", p) for p in names),
        ("paper-vs-code.html", "paper vs code vs kit"),
    ]
    links = "".join(
        f"<span class='here'>{html.escape(label)}</span>"
        if target == here
        else f"<a href='{href(target)}'>{html.escape(label)}</a>"
        for target, label in items
    )
    return f"<nav class='book'>{links}</nav>"


def render(nb, title: str, nav: str, show_input: bool) -> str:
    """One page: ``nb`` through nbconvert with the book's offline template, every output sanitised."""
    from nbconvert.preprocessors import TagRemovePreprocessor

    from temporag.batch.sanitize import html_exporter  # lazy: bleach loads only when a page is rendered

    exporter = html_exporter(
        "book.html.j2",
        exclude_input=not show_input,
        exclude_input_prompt=not show_input,
        exclude_output_prompt=not show_input,
    )
    exporter.register_preprocessor(TagRemovePreprocessor(remove_input_tags={BOOK_CELL}), enabled=True)
    nb.metadata["title"] = title
    body, _ = exporter.from_notebook_node(nb, resources={"book_nav": nav})
    return body


def build_book(out: Path, figures_dir: Path = FIGURES_DIR, runs_dir: Path = RUNS_DIR) -> Path:
    """Write the book into ``out`` (replacing an older one) and return its ``index.html``."""
    out = Path(out)
    figures_dir, runs_dir = Path(figures_dir), Path(runs_dir)
    names = papers(figures_dir, runs_dir)
    runs = {p: find_run(figures_dir / p, p) for p in names}
    smoke = {p: find_run(runs_dir / "smoke" / p, p) for p in names}
    smoke = {p: r for p, r in smoke.items() if r is not None and r.notebook is not None}
    staging = owned.stage(out)  # refused before anything is built when out is not the kit's

    def write(page: str, nb, title: str, show_input: bool = False) -> None:
        (staging / page).write_text(render(nb, title, _nav(names, page), show_input), encoding="utf-8")

    def files(run: Run, slug: str) -> str:
        folder = staging / "files" / slug
        folder.mkdir(parents=True)
        for name in ("results.json", "tables.md"):
            if (run.folder / name).exists():
                shutil.copyfile(run.folder / name, folder / name)
        return f"files/{slug}"

    write("index.html", front_page(runs, smoke, names), "temporag: a reading-group book")
    title_of = titles()
    for p in names:
        title = title_of.get(p, p)
        run = runs.get(p)
        if run is None:
            nb = _not_run(title, p)
            write(f"{p}.html", nb, title)
        elif run.notebook is not None:
            write(f"{p}.html", notebook_page(run, f"{title} (paper profile)", files(run, p)), title, True)
        else:
            write(f"{p}.html", results_page(run, f"{title} (paper profile)", files(run, p)), title)
        if p in smoke:
            note = (
                "<p class='book-banner'>A smoke run: a small sample, to show the notebook runs. Its numbers "
                f"are not the paper-profile ones (<a href='{href(p)}.html'>those are here</a>).</p>"
            )
            if changed_after_stamp(smoke[p].folder, smoke[p].stamp):
                note += (
                    "<p class='book-banner'><b>Changed after its run</b>: files of this folder differ from "
                    "the ones its run left; `temporag reproduce` runs it again.</p>"
                )
            page = notebook_page(smoke[p], f"{title} (smoke run)", files(smoke[p], f"{p}-smoke"), note)
            write(f"{p}-smoke.html", page, f"{title} (smoke)", True)
    write("paper-vs-code.html", paper_vs_code_page(runs.get("leaderboard")), "Paper vs released code vs kit")
    owned.put_in_place(staging, out, "temporag book")
    return out / "index.html"


def _not_run(title: str, paper: str):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _markdown(
            f"# {title}\n\nNo committed paper-profile run in `figures/{paper}/` yet: "
            f"`temporag reproduce -n {paper} --profile paper`."
        )
    ]
    return nb


def summary(index: Path) -> str:
    """One line per page of a built book (for the command's output)."""
    pages = sorted(p.name for p in index.parent.glob("*.html"))
    return f"reading-group book: {index} ({len(pages)} pages: {', '.join(pages)})"
