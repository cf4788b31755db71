"""A failed LLM call is never a wrong answer, in every method's reader numbers.

Each test reads real questions through the method's own reader with a fake endpoint that fails some
calls, then checks the reported number is the mean over the answered questions with n answered and n
failed beside it (``evaluate.hits_by_category``'s rule), never a 0 for the failed ones."""

from __future__ import annotations

import json

import numpy as np
from fakes import FixedEncoder, fake_llm
from slices import iraq_visits

from temporag.answer import evaluate


def _gold_reader(questions, failing):
    """A fake endpoint answering each question's first gold answer; calls for ``failing`` questions fail."""

    def reply(user: str) -> str:
        q = next(q for q in questions if q.question in user)
        return json.dumps([q.answers[0]])

    return fake_llm(reply, fail_when=lambda user: any(q.question in user for q in failing))


def test_tour_reader_table_counts_failed_calls_beside_hits(kg, questions, tmp_cache, tmp_path):
    from temporag.methods.semantic import SemanticRetriever, record, report
    from temporag.notebook.results import Results

    picked = [q for q in questions if q.quid in (3000029, 3000030)]
    retriever = SemanticRetriever(iraq_visits(kg))
    llm = _gold_reader(picked, failing=picked[1:])
    answers = retriever.read(llm, picked, retriever.retrieve(picked, k=3, progress=False), progress=False)
    failed = [r.error is not None for r in answers]
    assert failed == [False, True]
    scores = evaluate.hits_by_category(picked, [r.answers for r in answers], failed=failed)
    results = Results("tour", {"seed": 0}, out_dir=tmp_path / "out")
    table = report.reader_table(scores, llm.model_name)
    record.reader_hits(results, scores, table, llm.model_name, 3, usage={}, predictions=[])
    assert table[["Hits@1", "n", "answered", "failed"]].values.tolist() == [[1.0, 2, 1, 1]] * 2
    assert "Naive RAG (top-3 facts) + reader" in results.tables_md.read_text()
    assert "on a seeded sample of 2 questions." in results.tables_md.read_text()
    assert "| Hits@1   | n   | answered   | failed   |" in results.tables_md.read_text()
    metric = results.data["metrics"]["semantic_reader/hits@1_strict"]
    assert (metric["value"], metric["n"], metric["answered"], metric["failed"]) == (1.0, 2, 1, 1)


def test_answered_mean_leaves_failed_calls_out():
    score = evaluate.answered_mean([1.0, 0.0, 1.0, np.nan], [False, True, False, False])
    assert score == {"value": 1.0, "n": 4, "answered": 2, "failed": 2}
    assert np.isnan(evaluate.answered_mean([0.0, 0.0], [True, True])["value"])  # never a 0


def test_ia_rag_reader_means_leave_failed_calls_out():
    """IA-RAG's Table 2 and Fig. 3 averaged a failed call's empty reply as accuracy 0."""
    from temporag.methods.ia_rag.corpus import QA, Doc, chunk_documents
    from temporag.methods.ia_rag.extract import OfflineExtractor
    from temporag.methods.ia_rag.forest import build_forest
    from temporag.methods.ia_rag.graph import build_graph
    from temporag.methods.ia_rag.reader_tables import read_scores, reader_mean
    from temporag.methods.ia_rag.retrieval import IARAG, IAIndex

    text = (
        "Karl Menger taught at the University of Amsterdam from 1925 to 1927. "
        "Karl Menger worked for the University of Vienna from 1927 to 1938."
    )
    docs = [Doc(0, "Karl Menger", text)]
    units = OfflineExtractor().extract(docs, chunk_documents(docs))
    graph = build_graph(units, np.array([[1, 0], [0.6, 0.8]], dtype=np.float32), tau=0.5)

    method = IARAG(IAIndex(graph, build_forest(graph)), FixedEncoder([1.0, 0.0]), k1=0, k2=1)
    asked = [
        QA(
            "q1",
            "Which employer did Karl Menger work for in 1926?",
            ("University of Amsterdam",),
            "ComplexTR",
        ),
        QA(
            "q2",
            "Which employer did Karl Menger work for in 1925?",
            ("University of Amsterdam",),
            "ComplexTR",
        ),
    ]
    llm = fake_llm("['University of Amsterdam']", fail_when=lambda user: "in 1925?" in user)
    scores = read_scores(method, asked, llm, k=10)
    assert scores["failed"].tolist() == [False, True]
    assert reader_mean(scores) == {"value": 1.0, "n": 2, "answered": 1, "failed": 1}  # not 0.5
    assert reader_mean(scores, "recall")["value"] == 1.0


def _reads_with_failures(questions, failing):
    """The kit's reader with a fake endpoint: gold answers, failed calls for ``failing``."""
    from temporag.answer.readers import read_many

    llm = _gold_reader(questions, failing)
    texts = [q.question for q in questions]
    return read_many(llm, texts, [["(no evidence)"]] * len(texts), progress=False)


def test_timer4_reader_tables_count_failed_calls(questions, tmp_path):
    from temporag.methods.timer4 import experiments, record, report
    from temporag.notebook.results import Results

    picked = [q for q in questions if q.answer_type == "entity"][:4]
    reads = _reads_with_failures(picked, failing=picked[:1])
    assert [r.error is not None for r in reads] == [True, False, False, False]
    scores = experiments.reader_scores(picked, reads)
    assert scores["strict"]["Overall"] == 1.0 and scores["failed"]["Overall"] == 1  # not 0.75
    results = Results("timer4", {"seed": 0}, out_dir=tmp_path / "out")
    table = report.table3(scores, "fake-model")
    record.table3(results, scores, "fake-model")
    kit = table[table.model.str.startswith("TimeR4 — kit")]
    assert kit[["answered", "failed"]].values.tolist() == [[3, 1]] * 3
    metric = results.data["metrics"]["table3/strict/Overall"]
    assert (metric["value"], metric["n"], metric["failed"]) == (1.0, 3, 1)


def test_tecqa_reader_tables_count_failed_calls(questions, tmp_path):
    from temporag.methods.tecqa import record, report
    from temporag.notebook.results import Results

    picked = [q for q in questions if q.answer_type == "entity"][:4]
    reads = _reads_with_failures(picked, failing=picked[2:])
    failed = [r.error is not None for r in reads]
    scores = evaluate.hits_by_category(picked, [r.answers for r in reads], failed=failed)
    results = Results("tecqa", {"seed": 0}, out_dir=tmp_path / "out")
    frame = report.table1_frame(scores, "fake-model")
    record.table1_multitq(results, frame, scores, "fake-model", 4, 20)
    metric = results.data["metrics"]["table1/strict/Overall"]
    assert (metric["value"], metric["n"], metric["failed"]) == (1.0, 4, 2)
    assert frame["failed"].tolist()[:2] == [2, 2]
