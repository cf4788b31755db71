"""`temporag claims` and the declarations of the five papers, on run folders written here."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest

from temporag import cli
from temporag.batch import scorecard
from temporag.batch.sanitize import clean_html
from temporag.claims import BEST, Claim
from temporag.claims.rule import CONTRADICTED, NO_DIFFERENCE, NOT_RUN, NOT_TESTABLE, REPRODUCED

PAPERS = ("star_rag", "tecqa", "timer4", "ia_rag", "sar")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_declares_its_claims_once_with_a_section(paper):
    claims = scorecard.declared(paper)
    assert len(claims) >= 5
    assert len({c.key for c in claims}) == len(claims)
    assert all(c.section and c.paper == paper for c in claims)
    assert any(c.not_testable_here for c in claims)  # the reader-level claim, with its command
    assert all("temporag reproduce --notebook " + paper in c.command for c in claims if c.not_testable_here)


def _write_run(folder, notebook: str, first_arm_gain: float, skip: tuple[str, ...] = ()):
    """A run whose every declared outcome exists: the first arm scores ``first_arm_gain`` more on half
    of 200 questions; best-setting claims see the paper's setting as best."""
    rng = np.random.default_rng(0)
    base = (rng.random(200) < 0.5).astype(float)
    better = base.copy()
    better[np.flatnonzero(base == 0)[: int(first_arm_gain * 200)]] = 1.0
    outcomes = {}
    for claim in scorecard.declared(notebook):
        if claim.not_testable_here or claim.measure in skip:
            continue
        for i, key in enumerate(claim.outcome_keys()):
            if claim.direction == BEST:
                values = better if claim.arms[i] == claim.paper_arm else base
            else:
                values = better if i == 0 else base
            outcomes.setdefault(key, {f"q{j}": v for j, v in enumerate(values)})
    data = {"notebook": notebook, "parameters": {"profile": "smoke", "split": "s"}, "outcomes": outcomes,
            "outcomes_skipped": {m: "not in this profile" for m in skip}}
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_a_run_is_judged_from_its_recorded_outcomes(tmp_path):
    run = scorecard.judge_run(_write_run(tmp_path / "star_rag", "star_rag", 0.3, skip=("hits@1",)))
    verdicts = {r["claim"]: r["verdict"] for r in run.rows}
    assert verdicts["rule-graph-recall"] == REPRODUCED and verdicts["k2-gain"] == REPRODUCED
    assert verdicts["k2-plateau"] == REPRODUCED  # K2 = 20 and 40 both carry the gain: equivalent
    assert verdicts["rule-graph-hits"] == NOT_RUN and verdicts["table2-hits"] == NOT_TESTABLE


def test_the_command_prints_every_claim_and_compares_two_runs(tmp_path, capsys):
    gain = _write_run(tmp_path / "a" / "star_rag", "star_rag", 0.3)
    loss = tmp_path / "b" / "star_rag"
    _write_run(loss, "star_rag", 0.3)
    data = json.loads((loss / "results.json").read_text())
    data["outcomes"]["answer_recall/STAR-RAG"], data["outcomes"]["answer_recall/STAR-RAG-no-rule"] = (
        data["outcomes"]["answer_recall/STAR-RAG-no-rule"], data["outcomes"]["answer_recall/STAR-RAG"])
    (loss / "results.json").write_text(json.dumps(data))
    assert cli.main(["claims", str(gain)]) == 0
    out = capsys.readouterr().out
    assert "rule-graph-recall" in out and "reproduced" in out and "exact McNemar" in out
    assert cli.main(["claims", str(gain), str(loss)]) == 0
    out = capsys.readouterr().out
    changed = [line for line in out.splitlines() if line.rstrip().endswith("CHANGED")]
    # STAR-RAG now scores what no-rule did: it loses to no-rule and ties the uniform ablation
    assert [line.split()[0] for line in changed] == ["rule-graph-recall", "uniform-recall"]
    assert CONTRADICTED in changed[0] and NO_DIFFERENCE in changed[1]


@pytest.mark.parametrize("paper", PAPERS)
def test_a_run_recorded_before_the_claims_layer_says_re_run_in_one_line(paper, tmp_path, monkeypatch, capsys):
    """An old local run (per-question records, no outcomes) is not rebuilt: one line says which file and
    that the notebook must be re-run, without reading a data set."""
    folder = tmp_path / paper
    folder.mkdir()
    old = {"notebook": paper, "metrics": {}, "predictions": {"reader": [{"quid": 1, "answers": ["x"]}]}}
    (folder / "results.json").write_text(json.dumps(old))
    monkeypatch.setenv("TEMPORAG_DATA", str(tmp_path / "no-data"))
    assert cli.main(["claims", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"claims: {folder}/results.json: recorded before the claims layer (no per-question outcomes): "
        f"re-run this notebook (temporag run {paper}) to judge its claims\n"
    )
    with pytest.raises(scorecard.NoRecords, match="re-run this notebook"):
        scorecard.judge_run(folder)


def test_the_book_opens_with_the_scorecard_linking_each_claim_to_its_section(tmp_path):
    import html
    from types import SimpleNamespace
    from urllib.parse import quote

    from temporag.batch.scorecard_page import scorecard_html

    judged = SimpleNamespace(folder=_write_run(tmp_path / "smoke" / "star_rag", "star_rag", 0.3))
    old = tmp_path / "figures" / "star_rag"
    old.mkdir(parents=True)
    (old / "results.json").write_text(json.dumps({"notebook": "star_rag"}))
    page = scorecard_html({"star_rag": SimpleNamespace(folder=old)}, {"star_rag": judged}, ["star_rag"],
                          {"star_rag": "STAR-RAG"})
    assert page.startswith("<h2>Scorecard")
    assert "No per-question records (re-run to judge): star_rag (paper profile) of star_rag" in page
    assert "(smoke run)" in page
    section = next(c.section for c in scorecard.declared("star_rag") if c.key == "rule-graph-recall")
    anchor = html.escape(quote(section, safe="?/:@!$&'()*+,;="))  # nbconvert's heading id
    assert f"<a href='star_rag-smoke.html#{anchor}'>The rule graph retrieves better" in page
    full = page[page.index("<table class='book scorecard'>"):]
    assert full.count("<tr>") == 1 + len(scorecard.declared("star_rag"))  # every claim, by tier
    summary = page[:page.index("<table class='book scorecard'>")]
    central = [c for c in scorecard.declared("star_rag")
               if c.tier.startswith("a") and not c.not_testable_here]
    assert summary.count("<tr>") == 1 + len(central)  # the one screen: the paper's LLM-free claims
    assert "<th>paper's Δ</th>" in summary and "+0.122" in summary  # Table 4: 0.305 − 0.183
    # the forest plot: an SVG image the book's sanitiser keeps (it drops inline <svg> markup)
    images = re.findall(r"src='data:image/svg\+xml;base64,([^']+)'", summary)
    assert len(images) == 1 and "rule-graph-recall · reproduced" in base64.b64decode(images[0]).decode()
    assert clean_html(summary).count("data:image/svg+xml;base64,") == 1


def test_the_leaderboard_pairs_every_row_with_the_semantic_baseline():
    from types import SimpleNamespace

    from temporag.leaderboard.paired import MEASURES, vs_baseline

    def row(name, hits):
        hits = np.asarray(hits, dtype=float)
        return SimpleNamespace(name=name, per_question=lambda: dict.fromkeys(MEASURES, hits))

    base = [0.0] * 50 + [1.0] * 150
    frame = vs_baseline([row("Semantic baseline", base), row("better", [1.0] * 200), row("same", base)])
    assert list(frame.method) == ["better", "better", "same", "same"]
    assert list(frame["verdict vs baseline"]) == [REPRODUCED, REPRODUCED, NO_DIFFERENCE, NO_DIFFERENCE]
    assert frame.effect.iloc[0] == 0.25 and frame.n.iloc[0] == 200


@pytest.mark.parametrize("paper", PAPERS)
def test_every_claim_links_to_a_heading_of_its_notebook(paper):
    from pathlib import Path

    notebook = json.loads((Path(__file__).parents[1] / "notebooks" / f"{paper}.ipynb").read_text())
    headings = {
        line.lstrip("#").strip().replace(" ", "-")
        for cell in notebook["cells"] if cell["cell_type"] == "markdown"
        for line in "".join(cell["source"]).splitlines() if line.startswith("#")
    }
    assert {c.section for c in scorecard.declared(paper)} - headings == set()


def test_star_rag_token_claim_is_judged_in_tokens_and_left_out_of_the_forest_plot():
    from temporag.batch.forest import plotted
    from temporag.claims import judge_all
    from temporag.leaderboard import claims

    claim = next(c for c in claims.CLAIMS if c.key == "star_rag-fewer-tokens")
    assert claim.paper_delta == 601 - 20453 and claim.tier.startswith("a")
    rng = np.random.default_rng(0)
    quids = [f"q{i}" for i in range(40)]
    star = dict(zip(quids, 300 + rng.integers(0, 50, 40).astype(float)))
    semantic = dict(zip(quids, 900 + rng.integers(0, 50, 40).astype(float)))
    outcomes = {f"{claims.TOKENS}/{claim.arms[0]}": star, f"{claims.TOKENS}/{claims.BASELINE}": semantic}
    (row,) = judge_all([claim], {"outcomes": outcomes})
    assert row["verdict"] == REPRODUCED and row["effect"] == pytest.approx(
        np.mean(list(star.values())) - np.mean(list(semantic.values())))
    assert row["test"] == "sign-flip permutation" and plotted([row]) == []  # tokens: not on the ±1 axis


def test_an_mde_of_zero_is_shown_as_a_dash_not_as_perfect_power():
    from temporag.claims.judge import mde_text

    assert [mde_text({"mde": v}) for v in (0.0, 0.01234, None, float("nan"))] == ["—", "0.012", "", ""]
    outcomes = {"m/a": {f"q{i}": 1.0 for i in range(40)}, "m/b": {f"q{i}": 1.0 for i in range(40)}}
    claim = Claim("demo", "same", "Table 1", "a beats b", "", "m", ("a", "b"), +1, "fair")
    (row,) = scorecard.judge_all([claim], {"outcomes": outcomes})
    assert row["verdict"] == NO_DIFFERENCE and row["mde"] == 0 and mde_text(row) == "—"
