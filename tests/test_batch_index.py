"""The HTML index of executed notebooks: what it lists, and that it works offline in
a real headless browser — the page loads, every link resolves, no console errors."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from browser import browser_page
from fakes import CountingEndpoint

from temporag.batch.index import build_index, headline, reader_model
from temporag.run.runner import run_notebook

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "batch"


def test_headline_and_reader_come_from_results_json():
    results = {
        "metrics": {
            "kg/facts": {"value": 461329, "paper": 461329.0},
            "table2/hits@1": {"value": 0.125, "paper": 0.305, "n": 200, "reader": "SmolLM2"},
            "table2/hits@1-no-paper": {"value": 0.2, "paper": None},
            "plain": 0.4,
            "usage": {"value": {"calls": 3}},
        },
        "settings": {"llm_model": None},
    }
    assert [h["metric"] for h in headline(results)] == ["kg/facts", "table2/hits@1"]
    assert headline(results)[1] == {
        "metric": "table2/hits@1",
        "kit": 0.125,
        "paper": 0.305,
        "n": 200,
        "reader": "SmolLM2",
    }
    assert reader_model(results) == "SmolLM2"
    assert reader_model({"metrics": {}, "settings": {"llm_model": "qwen"}}) == "qwen"
    assert reader_model({"metrics": {}, "settings": {}, "llm_calls": {"calls": 0}}) == "no reader calls"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Three real runs of the fixture notebook (a smoke run, a paper-profile run in figures/, a failed run)
    and the index built from them."""
    tmp = tmp_path_factory.mktemp("index")
    kw = {"notebook_dir": FIXTURES, "figures_dir": tmp / "figures", "runs_dir": tmp / "runs"}
    with pytest.MonkeyPatch.context() as mp, CountingEndpoint() as server:
        mp.setenv("TEMPORAG_CACHE", str(tmp / "cache"))
        mp.setenv("TEMPORAG_LLM_BASE_URL", server.url)
        mp.setenv("TEMPORAG_LLM_MODEL", "fake-model")
        outcomes = [
            run_notebook("ask", {"profile": "smoke", "prefix": "a"}, **kw),
            run_notebook("ask", {"profile": "paper", "prefix": "p"}, **kw),
            run_notebook(
                "ask",
                {
                    "profile": "smoke",
                    "prefix": "f",
                    "fail": True,
                    "output_dir": str(tmp / "runs" / "x" / "ask"),
                },
                **kw,
            ),
        ]
    assert [o.status for o in outcomes] == ["ok", "ok", "failed"]
    committed = tmp / "figures" / "star_rag"  # as git keeps a committed run: numbers, no executed notebook
    committed.mkdir(parents=True)
    for name in ("results.json", "tables.md"):
        shutil.copyfile(REPO / "figures" / "star_rag" / name, committed / name)
    page = build_index(tmp / "runs" / "index", figures_dir=tmp / "figures", runs_dir=tmp / "runs")
    return page, outcomes


@pytest.mark.slow
def test_index_lists_every_run_with_status_duration_reader_and_numbers(site):
    page, outcomes = site
    text = page.read_text(encoding="utf-8")
    rows = re.findall(
        r"<tr><td><a href='([^']+)'>ask</a></td><td><code>([^<]+)</code></td>"
        r"<td>(\w+)</td><td class='(\w+)'>\w+</td><td class='num'>([0-9.,]+) s</td><td>([^<]*)</td>"
        r"<td class='small'>([^<]*)",
        text,
    )
    assert [(r[1], r[2], r[3], r[5]) for r in rows] == [
        ("figures/ask", "paper", "ok", "fake-model"),
        ("runs/smoke/ask", "smoke", "ok", "fake-model"),
        ("runs/x/.ask.failed", "smoke", "failed", "fake-model"),  # the configured model
    ]
    assert [float(r[4]) for r in rows[:2]] == [round(outcomes[1].seconds, 1), round(outcomes[0].seconds, 1)]
    assert html.unescape(rows[0][6]) == "ask/score: kit 1.000 · paper 0.500"
    assert "this run was asked to fail" in text  # the failed run's error, in its section
    # the committed run: listed with its real numbers beside the paper's, without a notebook link
    assert re.search(
        r"<tr><td>star_rag</td><td><code>figures/star_rag</code></td><td>paper</td>"
        r"<td class='results'>results only</td><td class='num'></td><td>SmolLM2-135M-Instruct.Q4_1</td>"
        r"<td class='small'>table2/MultiTQ/STAR-RAG-no-rule/hits@1: kit 0.115 · paper 0.183<br>",
        html.unescape(text),
    ), text
    assert "http://" not in text and "https://" not in text
    for link, *_ in rows:
        notebook_page = page.parent / link
        assert notebook_page.exists()
        body = notebook_page.read_text(encoding="utf-8")
        assert not re.search(r"<script[^>]+src=['\"]https?:", body)  # nothing fetched from the network
    assert "3 answers, score 1.00" in (page.parent / rows[0][0]).read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.browser
def test_index_works_offline_in_a_headless_browser(site):
    page_file, _ = site
    errors: list[str] = []
    with browser_page(errors) as page:
        page.goto(page_file.as_uri())
        assert page.title() == "temporag runs"
        assert page.locator("table").first.locator("tr").count() == 5  # header + 4 runs
        hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
        assert len(hrefs) >= 9
        anchors = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
        visited = set()
        for href in hrefs:
            url = urlparse(href)
            target = Path(unquote(url.path))
            assert target.exists(), f"broken link {href}"
            if url.fragment:
                assert url.fragment in anchors, f"no anchor for {href}"
            if target.suffix == ".html" and target != page_file and target not in visited:
                visited.add(target)
                page.goto(target.as_uri())
                assert page.locator(".jp-Notebook").count() == 1, target
                assert page.locator(".jp-Cell").count() >= 4
        assert len(visited) == 3
        page.goto(page_file.as_uri())
        page.click("text=details >> nth=0")
        assert page.url.endswith("#figures_ask")
    assert errors == [], errors
