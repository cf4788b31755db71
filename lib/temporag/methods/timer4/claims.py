"""TimeR4's claims as data, and the per-question outcomes they read (``record.outcomes`` stores them).

Judged by the kit's one rule (``temporag.claims.rule``).  The fine-tuning claim is judged on the
retriever as the paper describes it (Eq. 8 read pair by pair, "pairwise loss (old)") against the
off-the-shelf model, both without the rerank on the same candidate subset; the kit's softmax loss is the
kit's own row.  Table 5's ablations are judged on the kit's TimeR4 (softmax-trained TKS): protocol
"paper" is Hits@1 of the kit's reader under the paper's whole-output rule on the ablation reader sample,
protocol "fair" is answer recall@15 of each variant's final ranking on every selected question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from temporag.answer import evaluate
from temporag.claims import BEST, Claim, Measured, Outcomes
from temporag.claims.model import printed
from temporag.methods.timer4 import N_FACTS
from temporag.methods.timer4.experiments import FIG3_NS, whole_output_hits

PAPER = "timer4"
#: the paper's fine-tuned LLaMA2-7B served under the name "timer4" (runbooks/gpu-box-vllm.md)
SERVED = ("TEMPORAG_LLM_BASE_URL=http://HOST:8000/v1 TEMPORAG_LLM_MODEL=timer4 "
          "temporag reproduce --notebook timer4 --profile paper")
ABLATIONS = ("w/o rewrite", "w/o rerank", "w/o fact retrieval", "w/o temporal retrieval")
_WHAT = {"w/o rewrite": "Rewriting the question", "w/o rerank": "The time rerank (Eqs. 9–10)",
         "w/o fact retrieval": "Retrieving facts for the rewrite (vs entity linking)",
         "w/o temporal retrieval": "The time-aware retriever (vs the fact retriever)"}
_RECALL = "answer recall@15 of the final ranking stands in for the fine-tuned reader's Hit@1"
_FINE_TUNE = "3-·-The-time-aware-retriever-(Eqs.-6–8,-Algorithm-1-lines-1–2)"


def _t5(ablation: str) -> str:
    return printed(PAPER, "Table 5", "Hit@1", {"TimeR4": "TimeR4", ablation: ablation}, "MultiTQ")


CLAIMS: tuple[Claim, ...] = (
    Claim(PAPER, "fine-tuning", "§4.3, Table 5", "Contrastive time-aware fine-tuning (Eq. 8, three hard "
          "negatives) improves the second retrieval over the off-the-shelf retriever (answer recall@15)",
          _t5("w/o temporal retrieval"), "loss_recall@15", ("pairwise loss (old)", "base model"), +1,
          "paper", stands_in=_RECALL, section=_FINE_TUNE),
    Claim(PAPER, "kit-softmax-fine-tuning", "kit", "The kit's softmax (InfoNCE) fine-tuning improves the "
          "second retrieval over the off-the-shelf retriever (answer recall@15)", "",
          "loss_recall@15", ("softmax loss", "base model"), +1, "fair", kits_own=True, section=_FINE_TUNE),
    *(
        Claim(PAPER, f"{name[4:].replace(' ', '-')}-hits", "Table 5", f"{_WHAT[name]} raises Hits@1",
              _t5(name), "hits@1_whole", ("TimeR4", name), +1, "paper", reader=True,
              section="7-·-Table-5-—-ablations")
        for name in ABLATIONS
    ),
    *(
        Claim(PAPER, f"{name[4:].replace(' ', '-')}-recall", "Table 5", f"{_WHAT[name]} puts the answer in "
              "the retrieved facts more often (answer recall@15)", _t5(name), "recall@15", ("TimeR4", name),
              +1, "fair", stands_in=_RECALL, section="7-·-Table-5-—-ablations")
        for name in ABLATIONS
    ),
    Claim(PAPER, "fig3-peak", "Fig. 3", f"n = {N_FACTS} facts is about best for the reader's Hits@1 "
          "(more facts add noise)", "Fig. 3: peak at n = 15 (bars not printed)", "fig3_hits@1_whole",
          tuple(f"n={n}" for n in FIG3_NS), BEST, "paper", paper_arm=f"n={N_FACTS}", reader=True,
          section="8-·-Figure-3-—-the-number-of-retrieved-facts"),
    Claim(PAPER, "table4-timequestions", "Table 4", "TimeR4 beats the other methods on TimeQuestions "
          "(Wikidata, year granularity)", "Table 4: TimeQuestions (see the slides)", protocol="paper",
          reader=True, not_testable_here="needs TimeQuestions and its Wikidata KG, which the shared data "
          "does not hold (the kit has no converter for them), and the paper's fine-tuned reader",
          command=f"{SERVED} -p questions_file=TIMEQUESTIONS (converted to MultiTQ's format, its KG with it)",
          section="6-·-Reasoning-and-Table-3-(MultiTQ)"),
    Claim(PAPER, "table3-hits", "Table 3", "TimeR4 reaches Hits@1 0.728 on MultiTQ with its "
          "fine-tuned reader",
          printed(PAPER, "Table 3", "Overall", {"TimeR4": "TimeR4"}, "MultiTQ"),
          protocol="paper", reader=True,
          not_testable_here="needs the paper's LLaMA2-7B fine-tuned on MultiTQ", command=SERVED,
          section="6-·-Reasoning-and-Table-3-(MultiTQ)"),
)


def outcomes(
    kg,
    questions: Sequence,
    ranked_loss: Mapping[str, Sequence],
    recall15: Mapping[str, np.ndarray],
    reads: Mapping[str, Sequence],
    ablation_questions: Sequence,
    reader_questions: Sequence,
    fig3_questions: Sequence = (),
    fig3_hits: Mapping[int, np.ndarray] | None = None,
) -> Measured:
    """The outcomes :data:`CLAIMS` reads (``record.outcomes`` stores them): answer recall@15 per loss on
    the candidate subset (no rerank), answer recall@15 per Table 5 variant, and whole-output Hits@1 per
    variant on the ablation reader sample (TimeR4's own reads, which cover every reader question,
    restricted to it), and Fig. 3's whole-output Hits@1 per number of facts on its reader sample."""
    quids = [q.quid for q in questions]
    loss = {name: ranked_loss[name] for name in ("base model", "pairwise loss (old)", "softmax loss")}
    measured: Measured = {
        "loss_recall@15": Outcomes(
            {n: evaluate.answer_recall_at_k(kg, ids, questions, [15])[15] for n, ids in loss.items()}, quids
        ),
        "recall@15": Outcomes(dict(recall15), quids),
    }
    if fig3_questions and fig3_hits:
        measured["fig3_hits@1_whole"] = Outcomes(
            {f"n={n}": fig3_hits[n] for n in FIG3_NS}, [q.quid for q in fig3_questions]
        )
    else:
        measured["fig3_hits@1_whole"] = "no Fig. 3 reader questions in this run"
    if not ablation_questions:
        measured["hits@1_whole"] = "no ablation reader questions in this run"
        return measured
    hits = {}
    for name, res in reads.items():
        asked = reader_questions if name == "TimeR4" else ablation_questions
        values = whole_output_hits(asked, [r.raw_text for r in res]).astype(float)
        values[evaluate.failed_calls(res)] = np.nan
        hits[name] = {q.quid: v for q, v in zip(asked, values)}
    kept = {q.quid for q in ablation_questions}
    measured["hits@1_whole"] = Outcomes(
        {n: {q: v for q, v in h.items() if q in kept} for n, h in hits.items()}
    )
    return measured
