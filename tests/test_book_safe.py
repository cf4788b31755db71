"""The book and the index are safe to open: a notebook whose outputs and question types carry ``<script>``
and ``onerror=`` renders with none of them live (checked in a headless Chromium), and its figures and
tables still show."""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from browser import browser_page

from temporag.batch.book import build_book
from temporag.batch.index import notebook_html
from temporag.batch.sanitize import clean_html
from temporag.notebook.tables import styled

REPO = Path(__file__).resolve().parents[1]
PWN = "window.__pwned=1"
SCRIPT = f"<script>{PWN}</script>"
ONERROR = f'<img src=x onerror="{PWN}">'
QTYPE = f"{SCRIPT}{ONERROR}"  # a question type read from someone else's questions_file


def _recall_pivot() -> pd.DataFrame:
    frame = pd.DataFrame({"k": [20, 20], "category": [QTYPE, "all"], "mean": [0.25, 0.5]})
    return frame.pivot(index="category", columns="k", values="mean")


def _executed(path: Path, png: Path) -> None:
    """An executed notebook with hostile outputs (HTML, markdown, JavaScript, an unescaped Styler table of
    an older notebook), the kit's escaped Styler table of the same labels, and a real PNG figure."""
    hostile = f"<div><b>kept</b>{SCRIPT}{ONERROR}<a href='javascript:{PWN}'>link</a></div>"
    code = nbformat.v4.new_code_cell("show()", execution_count=1)
    out = nbformat.v4.new_output
    code.outputs = [
        out("display_data", data={"text/html": hostile, "text/plain": "hostile"}),
        out("display_data", data={"text/markdown": f"**md** {ONERROR}"}),
        out("display_data", data={"application/javascript": PWN}),
        out("display_data", data={"text/html": _recall_pivot().style.format("{:.3f}").to_html()}),
        out("display_data", data={"text/html": styled(_recall_pivot(), "{:.3f}").to_html()}),
        out("display_data", data={"image/png": base64.b64encode(png.read_bytes()).decode("ascii")}),
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# A shared run\n\n{SCRIPT}\n\n{ONERROR}"), code]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("safe")
    run = tmp / "figures" / "tour"
    run.mkdir(parents=True)
    png = next(iter(sorted((REPO / "figures" / "tour").glob("*.png"))))
    _executed(run / "00_tour.ipynb", png)
    (run / "results.json").write_text(json.dumps({"parameters": {"profile": "<b>smoke</b>"}, "metrics": {}}))
    index = build_book(tmp / "book", figures_dir=tmp / "figures", runs_dir=tmp / "runs")
    return index.parent / "tour.html", run / "00_tour.ipynb"


class _Markup(HTMLParser):
    """The planted code still live in a page: a script holding it, an event handler, a script URL
    (escaped text is fine: it shows, it does not run)."""

    def __init__(self) -> None:
        super().__init__()
        self.live: list[str] = []
        self._tag = ""

    def handle_starttag(self, tag, attrs):
        self._tag = tag
        self.live += [f"{tag} {n}" for n, v in attrs if n.startswith("on") or "javascript:" in (v or "")]

    def handle_data(self, data):
        if self._tag == "script" and "__pwned" in data:
            self.live.append(f"script {data.strip()[:40]}")


def _live_markup(text: str) -> list[str]:
    found = _Markup()
    found.feed(text)
    return found.live


def test_the_sanitiser_keeps_what_the_kit_shows_and_drops_what_runs():
    cleaned = clean_html(
        "<h2 id='t'>T</h2><p>a<br>b</p><table><thead><tr style='text-align: right'><th>x</th></tr></thead>"
        "<tbody><tr><td>1</td></tr></tbody></table><img src='data:image/png;base64,AAAA' alt='f'>"
        f"<style>.x {{}}</style>{SCRIPT}{ONERROR}<a href='tour.html#t'>ok</a><a href='data:text/html,x'>d</a>"
    )
    assert cleaned == (
        '<h2 id="t">T</h2><p>a<br>b</p><table><thead><tr style="text-align: right;"><th>x</th></tr></thead>'
        '<tbody><tr><td>1</td></tr></tbody></table><img src="data:image/png;base64,AAAA" alt="f">'
        '<img src="x"><a href="tour.html#t">ok</a><a>d</a>'
    )


def test_a_styled_table_escapes_question_types():
    html = styled(_recall_pivot(), "{:.3f}").to_html()
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html and "<script>" not in html
    assert ">0.250<" in html and ">0.500<" in html  # the numbers exactly as .style.format shows them


def test_book_and_index_pages_hold_no_live_script(book):
    page, notebook = book
    for text in (page.read_text(encoding="utf-8"), notebook_html(notebook)):
        assert _live_markup(text) == []
        assert "<b>kept</b>" in text  # harmless markup of an output stays markup
        assert "data:image/png;base64," in text  # the figure is still an inline image
    assert "profile <b>&lt;b&gt;smoke&lt;/b&gt;</b>" in page.read_text(encoding="utf-8")  # the kit's own


def test_nothing_planted_runs_in_a_browser_and_the_figure_shows(book):
    page_file, _ = book
    errors: list[str] = []
    with browser_page(errors) as page:
        page.goto(page_file.as_uri(), wait_until="load")
        assert page.evaluate("typeof window.__pwned") == "undefined"
        scripts = page.eval_on_selector_all("script", "els => els.map(e => e.textContent)")
        assert [s for s in scripts if "__pwned" in s] == []
        handlers = page.eval_on_selector_all(
            "*", "els => els.flatMap(e => [...e.attributes].map(a => a.name)).filter(n => n.startsWith('on'))"
        )
        assert handlers == []
        widths = page.eval_on_selector_all(
            "img[src^='data:image/png']", "els => els.map(e => e.complete ? e.naturalWidth : 0)"
        )
        assert widths and all(w > 0 for w in widths)  # the PNG figure renders as an <img>
        headers = page.eval_on_selector_all("th", "els => els.map(e => e.textContent)")
        assert QTYPE in headers  # the styled table shows the question type as text
