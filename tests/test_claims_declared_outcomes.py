"""Each paper's ``claims.outcomes`` measures (or skips) every outcome its declarations read and its
``record.outcomes`` stores them: judged on what it records, no claim fails as undeclared.  The metrics
are replaced by constants: what is checked is the wiring between the notebook's values, the recorded keys
and the declarations.  Six questions are too few for a verdict: every judged row says so, reader rows
are plumbing."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np

from temporag.claims import judge_all
from temporag.claims.rule import IDENTICAL, NOT_RUN, NOT_TESTABLE, PLUMBING, TOO_FEW
from temporag.notebook.results import Results

QUESTIONS = [SimpleNamespace(quid=f"q{i}", answers=("x",)) for i in range(6)]


def _ones(*args, **kwargs):
    questions = next(a for a in args if isinstance(a, list) and a and hasattr(a[0], "quid"))
    return np.ones(len(questions))


def _judged(results, claims) -> dict[str, str]:
    data = json.loads((results.dir / "results.json").read_text())
    return {r["claim"]: r["verdict"] for r in judge_all(claims, data)}  # raises on an undeclared key


def _results(tmp_path) -> Results:
    return Results("demo", {}, out_dir=tmp_path / "demo")


def test_ia_rag_records_every_measure_per_data_set(tmp_path, tmp_cache):
    from temporag.methods.ia_rag import claims, record

    setups = {ds: SimpleNamespace(questions=QUESTIONS) for ds in ("TimeQA", "ComplexTR")}  # no TempReason
    ones = np.ones(len(QUESTIONS))
    curves = {(ds, m, b): ones for ds in setups for m in (claims.PAPER_IA, claims.KIT_IA, claims.CHUNKS,
                                                           claims.WINDOWS) for b in (400, 800)}
    ablation = {(ds, v): ones for ds in setups for v in ("IA-RAG", *claims.ABLATIONS)}
    settings = {(ds, f"MAX_LEVELS={d}"): ones for ds in setups for d in claims.DEPTHS}
    settings |= {(ds, f"MEU={k}"): ones for ds in setups for k in claims.MEUS}
    read = SimpleNamespace(quid="q0")
    scores = {"records": [read], "accuracy": [1.0], "failed": [False]}
    reads = {"TimeQA": {"IA-RAG": scores, "Vanilla RAG (chunks, top-2)": scores}}
    same = [f"digest {i}" for i in range(len(QUESTIONS))]  # w/o IA shows IA-RAG's text on every question
    evidence = {(ds, v): {"digest": same if v in ("IA-RAG", "w/o IA") else [f"{v} {i}" for i in range(6)],
                          "union_recall": ones} for (ds, v) in ablation}
    results = _results(tmp_path)
    types = {"ComplexTR": ["T3", "T3", "T1", "T4", "T5", "T2"]}  # three compositional questions
    measured = claims.outcomes(setups, curves, ablation, settings, reads, evidence, None, types)
    record.outcomes(results, measured)
    verdicts = _judged(results, claims.CLAIMS)
    assert verdicts["vs-vanilla-compositional-ComplexTR"] == TOO_FEW
    assert verdicts["no-ia-TimeQA"] == IDENTICAL and verdicts["with-all-TimeQA"] == TOO_FEW
    assert verdicts["no-ia-union-ComplexTR"] == TOO_FEW and verdicts["no-ia-union-TempReason"] == NOT_RUN
    assert verdicts["vs-vanilla-TimeQA"] == TOO_FEW and verdicts["kit-depth-ComplexTR"] == TOO_FEW
    assert verdicts["vs-vanilla-TempReason"] == NOT_RUN and verdicts["depth-TimeQA"] == NOT_RUN
    assert verdicts["table2-reader"] == NOT_TESTABLE and verdicts["vs-vanilla-reader-ComplexTR"] == NOT_RUN
    assert verdicts["vs-vanilla-reader-TimeQA"] == PLUMBING  # one question, read by the reader


def test_timer4_records_loss_recall_and_table5(tmp_path, tmp_cache, monkeypatch):
    from temporag.methods.timer4 import claims, record

    monkeypatch.setattr(claims.evaluate, "answer_recall_at_k", lambda kg, ids, qs, ks: {ks[0]: _ones(qs)})
    monkeypatch.setattr(claims, "whole_output_hits", lambda qs, outs: np.ones(len(qs), dtype=bool))
    ranked = dict.fromkeys(("base model", "pairwise loss (old)", "softmax loss", "softmax loss + rerank"), [])
    recall15 = dict.fromkeys(("TimeR4", *claims.ABLATIONS), np.ones(len(QUESTIONS)))
    read = SimpleNamespace(raw_text="x", error=None)
    reads = {name: [read] * (len(QUESTIONS) if name == "TimeR4" else 3) for name in recall15}
    results = _results(tmp_path)
    fig3 = {n: np.array([1.0, np.nan]) for n in claims.FIG3_NS}
    measured = claims.outcomes(None, QUESTIONS, ranked, recall15, reads, QUESTIONS[:3], QUESTIONS,
                               QUESTIONS[:2], fig3)
    record.outcomes(results, measured)
    verdicts = _judged(results, claims.CLAIMS)
    assert set(verdicts.values()) == {TOO_FEW, PLUMBING, NOT_TESTABLE}
    assert verdicts["rewrite-hits"] == PLUMBING and verdicts["rewrite-recall"] == TOO_FEW
    assert verdicts["fig3-peak"] == PLUMBING and verdicts["table4-timequestions"] == NOT_TESTABLE


def test_sar_records_agent_offline_and_sweeps(tmp_path, tmp_cache, monkeypatch):
    from temporag.methods.sar import claims, record

    monkeypatch.setattr(claims, "_hits", lambda qs, records, n=None: np.ones(len(qs)))
    monkeypatch.setattr(
        claims.evaluate, "answered_hits", lambda answers, qs, failed=None: {1: np.ones(len(qs))},
    )
    monkeypatch.setattr(claims.evaluate, "answer_recall", lambda kg, ids, qs, k=None: np.ones(len(qs)))
    searched = SimpleNamespace(evidence_ids=[1])
    agent = {name: ([searched] * 2, None) for name in ("SAR", "Naive RAG", "ReAct RAG", "w/o Decompose",
                                                     "w/o Validation")}
    offline = {name: ([], None) for name in ("SAR", "w/o Decompose", "w/o Validation")}
    recall = {"SAR SEARCH evidence (K=15 per SEARCH)": np.ones(6), "semantic top-15": np.ones(6),
              "semantic, as many facts as SAR": np.ones(6)}
    sweep = {(kind, k): np.ones(6 if kind == "template" else 2) for kind in ("template", "reader")
             for k in claims.K_GRID}
    results = _results(tmp_path)
    measured = claims.outcomes(None, QUESTIONS, QUESTIONS[:2], agent, offline, [[]] * 6, recall, sweep, [], 2)
    record.outcomes(results, measured)
    verdicts = _judged(results, claims.CLAIMS)
    assert NOT_RUN not in verdicts.values() and verdicts["k-plateau-offline"] == TOO_FEW
    assert verdicts["k-gain"] == verdicts["n-gain"] == PLUMBING


def test_tecqa_records_recall_reader_and_the_k_n_grid(tmp_path, tmp_cache, monkeypatch):
    from temporag.methods.tecqa import claims, record

    monkeypatch.setattr(claims.evaluate, "answer_recall", lambda kg, ids, qs, k=None: np.ones(len(qs)))
    monkeypatch.setattr(
        claims.evaluate, "answered_hits", lambda answers, qs, failed=None: {1: np.ones(len(qs))},
    )
    ones = np.ones(len(QUESTIONS))
    shown = dict.fromkeys(("TECQA", *claims.ABLATIONS), ones)
    grid = {(k, n): ones for k in claims.KS for n in claims.NS}
    answers = dict.fromkeys(("TECQA", *claims.ABLATIONS), [])
    results = _results(tmp_path)
    beyond = {"improved": [[]] * 6, "faithful": [[]] * 6}
    ids = [[]] * 6
    chain = {"TECQA": ones, "Global Semantic": ones, "SG + semantic pruning": np.full(6, np.nan)}
    measured = claims.outcomes(None, QUESTIONS, ids, ids, QUESTIONS[:2], answers, shown, grid, beyond, chain)
    record.outcomes(results, measured)
    verdicts = _judged(results, claims.CLAIMS)
    assert NOT_RUN not in verdicts.values() and verdicts["k"] == TOO_FEW and verdicts["sg-hits"] == PLUMBING
    # Fig. 5 reads the Multiple questions only (none here) and a question without an anchor (NaN) drops out
    fig5 = {verdicts["chain-integrity-vs-global-semantic"], verdicts["chain-integrity-vs-sg-semantic"]}
    assert fig5 == {TOO_FEW}


def test_star_rag_records_recall_reader_and_fig5(tmp_path, tmp_cache, monkeypatch):
    from temporag.methods.star_rag import claims, record

    monkeypatch.setattr(claims.evaluate, "answer_recall", lambda kg, ids, qs, k=None: np.ones(len(qs)))
    ones = np.ones(len(QUESTIONS))
    methods = ("STAR-RAG", "STAR-RAG-no-rule", "STAR-RAG-uniform")
    recall = dict.fromkeys(methods, ones)
    hits = {name: {1: np.ones(2)} for name in methods}
    sweep = {(k1, k2): [[]] * 6 for k1 in claims.GRID for k2 in claims.GRID}
    results = _results(tmp_path)
    record.outcomes(results, claims.outcomes(None, QUESTIONS, recall, QUESTIONS[:2], hits, sweep, 10))
    verdicts = _judged(results, claims.CLAIMS)
    assert verdicts["k1-gain"] == verdicts["k1-plateau"] == NOT_RUN  # no Hit@1 heatmap
    assert verdicts["table2-hits"] == NOT_TESTABLE
    assert verdicts["k2-gain"] == verdicts["k2-plateau"] == TOO_FEW
    assert verdicts["rule-graph-hits"] == PLUMBING
