"""STAR-RAG's claims as data, and the per-question outcomes they read (``record.outcomes`` stores them).

Judged by the kit's one rule (``temporag.claims.rule``).  The paper compares Hit@1 of a 70B reader
(protocol "paper": the kit's reader on its reader sample, a *plumbing* row offline); the LLM-free test of
a retriever is whether the events it returns hold the answer (protocol "fair": answer recall of the K1
returned events, every selected question), which stands in for the reader's Hit@1.  Fig. 5 is stated as
§4.6 states it: K2 10 → 20 a clear gain, 20 → 40 marginal (a plateau); K1 helps at first, then plateaus.
K1 is only judged with the reader: recall of the top-K1 events grows with K1 by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from temporag.answer import evaluate
from temporag.claims import PLATEAU, Claim, Measured, Outcomes
from temporag.claims.model import printed

PAPER = "star_rag"
SERVED = ("TEMPORAG_LLM_BASE_URL=http://HOST:8000/v1 TEMPORAG_LLM_MODEL=meta-llama/Llama-3.3-70B-Instruct "
          "temporag reproduce --notebook star_rag --profile paper")
GRID = (5, 10, 20, 40)  # Fig. 5's K1 × K2 grid
PAPER_K1, PAPER_K2 = 10, 20
_T4 = {"STAR-RAG": "STAR-RAG", "no-rule": "STAR-RAG-no-rule", "uniform": "STAR-RAG-uniform"}
_RECALL = "answer recall of the K1 returned events stands in for the 70B reader's Hit@1"
_FIG5 = "10-·-Fig.-5:-sensitivity-to-K1-and-K2"
_FIG5_TEXT = "§4.6: K2 10 → 20 a clear gain, 40 only marginal; K1 helps at first, then plateaus (no values)"


def _t4(*labels: str) -> str:
    return printed(PAPER, "Table 4", "Acc.", {label: _T4[label] for label in labels}, "MultiTQ")


CLAIMS: tuple[Claim, ...] = (
    Claim(PAPER, "rule-graph-recall", "Table 4", "The rule graph retrieves better events than no-rule "
          "semantic retrieval (answer recall of the K1 returned events)", _t4("STAR-RAG", "no-rule"),
          "answer_recall", ("STAR-RAG", "STAR-RAG-no-rule"), +1, "fair", stands_in=_RECALL,
          section="7-·-Answer-recall-of-the-retrieved-events-(LLM-free,-every-selected-question)"),
    Claim(PAPER, "rule-graph-hits", "Table 4", "The rule graph raises Hit@1 over no-rule retrieval",
          _t4("STAR-RAG", "no-rule"), "hits@1", ("STAR-RAG", "STAR-RAG-no-rule"), +1, "paper", reader=True,
          section="8-·-Reading:-Tables-2,-3-and-4"),
    Claim(PAPER, "uniform-recall", "Table 4", "Question-weighted personalisation beats a uniform one "
          "(answer recall of the K1 returned events)", _t4("STAR-RAG", "uniform"), "answer_recall",
          ("STAR-RAG", "STAR-RAG-uniform"), +1, "fair", stands_in=_RECALL,
          section="7-·-Answer-recall-of-the-retrieved-events-(LLM-free,-every-selected-question)"),
    Claim(PAPER, "uniform-hits", "Table 4", "Question-weighted personalisation raises Hit@1 over a "
          "uniform one", _t4("STAR-RAG", "uniform"), "hits@1", ("STAR-RAG", "STAR-RAG-uniform"), +1,
          "paper", reader=True, section="8-·-Reading:-Tables-2,-3-and-4"),
    Claim(PAPER, "k2-gain", "Fig. 5", f"Raising K2 from 10 to {PAPER_K2} rule nodes is a clear gain (answer "
          f"recall of the K1 = {PAPER_K1} returned events)", _FIG5_TEXT, "fig5_recall",
          (f"K2={PAPER_K2}", "K2=10"), +1, "fair", stands_in=_RECALL, section=_FIG5),
    Claim(PAPER, "k2-plateau", "Fig. 5", f"Raising K2 from {PAPER_K2} to 40 gives only a marginal benefit "
          f"(answer recall of the K1 = {PAPER_K1} returned events)", _FIG5_TEXT, "fig5_recall",
          ("K2=40", f"K2={PAPER_K2}"), PLATEAU, "fair", stands_in=_RECALL, section=_FIG5),
    Claim(PAPER, "k1-gain", "Fig. 5", f"Raising K1 from 5 to {PAPER_K1} events improves Hit@1 "
          f"(K2 = {PAPER_K2})", _FIG5_TEXT, "fig5_hits@1", (f"K1={PAPER_K1}", "K1=5"), +1, "paper",
          reader=True, section=_FIG5),
    Claim(PAPER, "k1-plateau", "Fig. 5", f"Beyond K1 = {PAPER_K1} events Hit@1 plateaus (K2 = {PAPER_K2})",
          _FIG5_TEXT, "fig5_hits@1", ("K1=20", f"K1={PAPER_K1}"), PLATEAU, "paper", reader=True,
          section=_FIG5),
    Claim(PAPER, "table2-hits", "Table 2", "STAR-RAG reaches Hit@1 0.305 on MultiTQ with its reader",
          printed(PAPER, "Table 2", "Hit@1", {"STAR-RAG": "STAR-RAG"}, "MultiTQ"),
          protocol="paper", reader=True,
          not_testable_here="needs the paper's Llama-3.3-70B reader", command=SERVED,
          section="8-·-Reading:-Tables-2,-3-and-4"),
)


def outcomes(
    kg,
    questions: Sequence,
    recall: Mapping,
    reader_questions: Sequence,
    hits: Mapping,
    sweep: Mapping,
    k1: int,
    fig5_hits: Mapping | None = None,
) -> Measured:
    """The outcomes :data:`CLAIMS` reads (``record.outcomes`` stores them): answer recall of the K1
    returned events per method (every question), strict Hit@1 per method (reader sample), recall at
    K1 = 10 for each K2 of the sweep, and Fig. 5's per-question Hit@1 when the reader heatmap ran
    (``paper_tables.hits_grid``)."""
    quids = [q.quid for q in questions]
    measured: Measured = {"answer_recall": Outcomes(dict(recall), quids)}
    if reader_questions:
        per_method = {name: values[1] for name, values in hits.items()}
        measured["hits@1"] = Outcomes(per_method, [q.quid for q in reader_questions])
    else:
        measured["hits@1"] = "no reader questions in this run"
    if all((PAPER_K1, k2) in sweep for k2 in GRID):
        recall_by_k2 = {
            f"K2={k2}": evaluate.answer_recall(kg, sweep[(PAPER_K1, k2)], questions, k=PAPER_K1)
            for k2 in GRID
        }
        measured["fig5_recall"] = Outcomes(recall_by_k2, quids)
    else:
        measured["fig5_recall"] = f"the sweep lacks K1 = {PAPER_K1}"
    if fig5_hits:
        measured["fig5_hits@1"] = Outcomes({f"K1={k}": fig5_hits[(k, PAPER_K2)] for k in GRID})
    else:
        measured["fig5_hits@1"] = "the Hit@1 heatmap did not run (heatmap_reader_sample = 0)"
    return measured
