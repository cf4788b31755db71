"""The reading-group book: which number is the comparable one, executed notebooks kept
small, and the site itself in a real headless browser — every page loads, every image renders, every
internal link resolves, nothing is fetched from the network."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest
from browser import browser_page

from temporag.batch.book import RESULTS_ONLY, build_book, image_outputs, pages
from temporag.notebook.outputs import output_name
from temporag.run.executed import slim_notebook
from temporag.run.runner import available_notebooks

REPO = Path(__file__).resolve().parents[1]
FIGURES = REPO / "figures"


def _metric(run: str, key: str) -> dict:
    value = json.loads((FIGURES / run / "results.json").read_text())["metrics"][key]
    return value if isinstance(value, dict) else {"value": value}


def _front_rows() -> list:
    return [p for p in pages() if p.headline is not None]


def test_every_paper_has_a_declared_headline_of_recorded_numbers():
    papers = {output_name(n) for n in available_notebooks()} - {"leaderboard"}
    assert [p.paper for p in _front_rows()] == ["tour", "tecqa", "star_rag", "timer4", "ia_rag", "sar"]
    assert {p.paper for p in _front_rows()} == papers
    for p in _front_rows():
        h = p.headline
        for number in h.comparable:  # LLM-free: no reader, or the template reader
            m = _metric(number.run, number.metric)
            assert isinstance(m["value"], float), (p.paper, number)
            assert m.get("reader") is None or "template reader" in m["reader"], (
                p.paper,
                number,
                m.get("reader"),
            )
        assert isinstance(_metric(h.paper_number.run, h.paper_number.metric)["paper"], float), p.paper
        plumbing = _metric(h.plumbing.run, h.plumbing.metric)
        assert "SmolLM2" in plumbing["reader"], (p.paper, plumbing)


def test_pages_come_in_reading_order_with_their_declared_titles():
    found = {p.paper: p for p in pages()}
    assert list(found) == ["tour", "tecqa", "star_rag", "timer4", "ia_rag", "sar", "leaderboard"]
    assert found["tour"].title == "Tour: MultiTQ and the semantic (Naive RAG) baseline"
    assert found["leaderboard"].title == "Leaderboard: every method on one protocol"
    assert found["leaderboard"].headline is None  # its pages are listed; no first-page row
    assert found["sar"].title == "SAR: search, verify and answer"  # the method entry's


def test_slim_notebook_cuts_long_text_and_keeps_figures(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="log line\n" * 10_000),
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}),
        nbformat.v4.new_output("execute_result", data={"text/html": "<td>1</td>" * 5_000}, execution_count=1),
    ]
    nb.cells = [cell]
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, path)
    before = path.stat().st_size
    after = slim_notebook(path, max_text=1_000)
    outs = nbformat.read(path, as_version=4).cells[0].outputs
    assert after < before / 20
    assert (
        len(outs[0].text) < 1_200 and outs[0].text.startswith("log line") and "characters cut" in outs[0].text
    )
    assert (
        outs[1].data["image/png"] == "iVBORw0KGgo=" and image_outputs(nbformat.read(path, as_version=4)) == 1
    )
    assert len(outs[2].data["text/html"]) < 1_200


def _executed(path: Path, images: list[Path]) -> None:
    """A small executed notebook: a markdown cell, a printed line, and ``images`` shown as outputs."""
    import base64

    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("print('hello')", execution_count=1)
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hello\n")] + [
        nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(p.read_bytes()).decode()})
        for p in images
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# An executed notebook"), code]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """The book of the committed runs (copied), one of them with its executed notebook, and one smoke run
    whose notebook shows none of the figures it saved."""
    tmp = tmp_path_factory.mktemp("book")
    figures = tmp / "figures"
    shutil.copytree(FIGURES, figures, ignore=shutil.ignore_patterns("*.svg", "*.csv", "*.ipynb", "_run.json"))
    tour = json.loads((figures / "tour" / "results.json").read_text())["figures"]
    _executed(figures / "tour" / "00_tour.ipynb", [figures / "tour" / f"{k}.png" for k in tour])
    smoke = tmp / "runs" / "smoke" / "star_rag"
    shutil.copytree(figures / "star_rag", smoke)
    _executed(smoke / "star_rag.ipynb", [])
    index = build_book(tmp / "book", figures_dir=figures, runs_dir=tmp / "runs")
    return index.parent, figures


def _links(page) -> list[str]:
    return page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")


def test_every_page_loads_with_images_and_links_offline(book):
    site, figures = book
    pages = sorted(site.glob("*.html"))
    names = {p.name for p in pages}
    assert {
        "index.html",
        "paper-vs-code.html",
        "leaderboard.html",
        "tour.html",
        "star_rag-smoke.html",
    } <= names
    errors: list[str] = []
    requests: list[str] = []
    images: dict[str, int] = {}
    with browser_page(errors) as page:
        page.on("request", lambda r: requests.append(r.url))
        for path in pages:
            page.goto(path.as_uri(), wait_until="load")
            widths = page.eval_on_selector_all("img", "els => els.map(e => e.complete ? e.naturalWidth : 0)")
            assert all(w > 0 for w in widths), f"{path.name}: an image did not render ({widths})"
            images[path.name] = len(widths)
            for href in _links(page):
                target = urlparse(href)
                assert not target.scheme and not target.netloc, f"{path.name} links outside the book: {href}"
                if target.path:
                    assert (path.parent / unquote(target.path)).exists(), f"{path.name}: broken link {href}"
    assert not errors, errors
    assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
    for paper in ("sar", "star_rag", "timer4", "tecqa", "ia_rag", "leaderboard"):
        saved = json.loads((figures / paper / "results.json").read_text())["figures"]
        assert images[f"{paper}.html"] == len(saved), paper  # results only: every figure it saved
    assert images["tour.html"] == 2  # its executed notebook shows both, none appended twice
    assert images["star_rag-smoke.html"] == 9  # the notebook showed none: all nine appended


def test_results_only_and_executed_pages_say_which(book):
    site, _ = book
    sar = (site / "sar.html").read_text()
    assert RESULTS_ONLY in sar and "temporag reproduce -n sar --profile paper" in sar
    tour = (site / "tour.html").read_text()
    assert RESULTS_ONLY not in tour and "An executed notebook" in tour
    smoke = (site / "star_rag-smoke.html").read_text()
    assert "Figures this run saved" in smoke and "smoke run" in smoke


def test_paper_vs_code_sections_follow_the_reading_order(book):
    from temporag.batch.book import Run, paper_vs_code_page

    records = [{"method": m, "aspect": a} for m, a in [("timer4", "x"), ("other", "y"), ("tecqa", "z")]]
    tables = {"paper_vs_code_vs_kit": {"caption": "c", "records": records + [records[0]]}}
    run = Run("leaderboard", Path("."), None, {"tables": tables}, {})
    heads = [c.source for c in paper_vs_code_page(run).cells if c.source.startswith("## ")]
    assert heads == [
        "## [TECQA: structure-guided temporal evidence chains](tecqa.html)",
        "## [TimeR4: time-aware retrieve, rewrite, retrieve and rerank](timer4.html)",
        "## [other](other.html)",  # a method the registry does not know: after, by name
    ]


def test_first_page_puts_the_comparable_number_beside_the_papers(book):
    site, _ = book
    errors: list[str] = []
    with browser_page(errors) as page:
        page.goto((site / "index.html").as_uri())
        rows = page.eval_on_selector_all("table.book:not(.scorecard) tr", "els => els.map(e => e.innerText)")
    star = next(r for r in rows if r.startswith("STAR-RAG"))
    # the LLM-free template reader on every shared question, the paper's Hit@1, the reader as plumbing
    assert "0.532 template-reader Hits@1" in star and "(n = 954)" in star
    assert "0.305 Hit@1, Table 2 MultiTQ" in star
    assert "0.125 reader Hits@1" in star and "plumbing" in star
    sar = next(r for r in rows if r.startswith("SAR"))
    assert "0.875 template-reader Hits@1, offline policy" in sar and "paper 0.782" in sar
    assert len(rows) == 1 + len(_front_rows())


@pytest.mark.slow
def test_a_committed_run_keeps_its_executed_notebook_small(tmp_path):
    """The paper-profile run's executed notebook stays beside its figures (git keeps it), long text cut."""
    import subprocess

    from temporag.run.executed import MAX_TEXT_OUTPUT
    from temporag.run.runner import run_notebook

    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "smoke"\noutput_dir = None')
    params.metadata["tags"] = ["parameters"]
    body = (
        "import json, pathlib\nout = pathlib.Path(output_dir); out.mkdir(parents=True, exist_ok=True)\n"
        "(out / 'results.json').write_text(json.dumps({'metrics': {}}))\nprint('x' * 200_000)"
    )
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, nbs / "probe.ipynb")
    kw = {"notebook_dir": nbs, "figures_dir": tmp_path / "figures", "runs_dir": tmp_path / "runs"}
    outcome = run_notebook("probe", {"profile": "paper"}, **kw)
    assert outcome.status == "ok" and outcome.executed == tmp_path / "figures" / "probe" / "probe.ipynb"
    printed = nbformat.read(outcome.executed, as_version=4).cells[-1].outputs[0].text
    assert 190_000 > len(printed) > MAX_TEXT_OUTPUT * 0.9 and "characters cut" in printed
    assert (
        run_notebook("probe", {"profile": "paper"}, **kw).status == "skipped"
    )  # the stamp lists the cut copy
    ignored = subprocess.run(["git", "check-ignore", "-q", "figures/tour/00_tour.ipynb"], cwd=REPO)
    assert ignored.returncode == 1  # not ignored: the executed notebook of a committed run goes into git
