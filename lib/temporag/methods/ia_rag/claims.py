"""IA-RAG's claims as data, and the per-question outcomes they read (``record.outcomes`` stores them).

Judged by the kit's one rule (``temporag.claims.rule``) on retrieval recall at an equal budget of
:data:`BUDGET` cl100k tokens (every gold answer in the text shown; every selected question), per data
set.  The paper's claims are judged on IA-RAG as the paper describes it (τ_sem = 0.8, MEU lines, seeds
first: "IA-RAG (paper reading)"); the kit's calibrated τ with narrowing MEUs and window order is the kit's
own row, never evidence for the paper's claim.  Vanilla RAG as the paper runs it retrieves 1,200-token
chunks; the 200-token windows are the stronger baseline at equal tokens, judged as a row of its own.
Tables 7 and 8 (depth, K1) are swept twice: at the paper's τ and retrieval (the paper's rows) and on the
calibrated graph (the kit's rows).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from temporag.claims import BEST, Claim, Measured, Outcomes
from temporag.claims.judge import EVIDENCE
from temporag.claims.model import LABELS, printed
from temporag.methods.ia_rag.ablations import ABLATION_BUDGET as BUDGET
from temporag.methods.ia_rag.classify import GROUPS
from temporag.methods.ia_rag.setups import K1_DEFAULT, WINDOW_TOKENS

PAPER = "ia_rag"
DATASETS = ("TimeQA", "TempReason", "ComplexTR")
SERVED = ("TEMPORAG_LLM_BASE_URL=http://HOST:8000/v1 TEMPORAG_LLM_MODEL=Qwen/Qwen2.5-72B-Instruct "
          "temporag reproduce --notebook ia_rag --profile paper")
PAPER_IA, KIT_IA = "IA-RAG (paper reading)", "IA-RAG (calibrated)"
CHUNKS, WINDOWS = "Vanilla RAG (1,200-token chunks)", f"Vanilla RAG ({WINDOW_TOKENS}-token windows)"
ABLATIONS = {"w/o IA": ("Table 3", "IA-guided traversal"),
             "w/o Tight.": ("Table 3", "Sub-graph time tightening"),
             "w/o Hier.": ("Table 3", "The thematic forest (hierarchy)"),
             "w/All": ("Table 4", "Following only window-directed Allen relations (vs all)"),
             "w/Top-5": ("Table 4", "Following window-directed Allen relations (vs the top-5 relations)")}
#: the traversal ablations also judged on the whole union: the paper's own retrieval budget, where the
#: arms differ (at the equal 800-token budget they hand the reader the same seeds: identical by construction)
UNION_ABLATIONS = ("w/o IA", "w/All", "w/Top-5")
_UNION = "recall of the whole retrieved union (the paper's own budget) stands in for the reader's accuracy"
DEPTHS, MEUS = (0, 4, 6, 10), (5, 10, 15, 20, 40)
PAPER_DEPTH = 4
_RECALL = "5-·-Query-driven-retrieval-(§3.4)-and-retrieval-recall"
_ABLATE = "7-·-Tables-3-and-4-·-Ablations-and-traversal-strategies"
#: Table 5's reasoning groups of ComplexTR (the kit's T1–T5 labels, grouped as the paper groups them)
TABLE5_GROUPS = {"Explicit": "Explicit", "Relative": "Relative", "Compositional": "Comp."}
_DEPTH = "9-·-Tables-7-and-8-·-Forest-depth-and-number-of-MEUs"


def _paper(source: str, rows: Mapping[str, str], dataset: str) -> str:
    return printed(PAPER, source, "Recall", dict(rows), dataset, "{:.4f}")


def _claims_for(ds: str) -> tuple[Claim, ...]:
    recall = f"recall@{BUDGET}/{ds}"
    vanilla = _paper("Table 2", {"IA-RAG": "IA-RAG", "Vanilla": "Vanilla RAG"}, ds)
    out = [
        Claim(PAPER, f"vs-vanilla-{ds}", "Table 2", f"IA-RAG retrieves better evidence than Vanilla RAG "
              f"on {ds} (recall at {BUDGET} tokens)", vanilla, recall, (PAPER_IA, CHUNKS), +1, "paper",
              section=_RECALL),
        Claim(PAPER, f"vs-windows-{ds}", "Table 2", f"IA-RAG retrieves better evidence than Vanilla RAG "
              f"over {WINDOW_TOKENS}-token windows on {ds} (recall at {BUDGET} tokens)", vanilla, recall,
              (PAPER_IA, WINDOWS), +1, "fair", section=_RECALL),
        Claim(PAPER, f"kit-vs-windows-{ds}", "kit", f"The kit's calibrated IA-RAG retrieves better evidence "
              f"than Vanilla RAG over {WINDOW_TOKENS}-token windows on {ds} (recall at {BUDGET} tokens)", "",
              recall, (KIT_IA, WINDOWS), +1, "fair", kits_own=True, section=_RECALL),
    ]
    out.append(Claim(PAPER, f"vs-vanilla-reader-{ds}", "Table 2", f"IA-RAG's context makes the reader answer "
                     f"better than Vanilla RAG's on {ds} (token accuracy)",
                     printed(PAPER, "Table 2", "Acc.", {"IA-RAG": "IA-RAG", "Vanilla": "Vanilla RAG"}, ds,
                             "{:.4f}"),
                     f"reader_accuracy/{ds}", ("IA-RAG", "Vanilla RAG"), +1, "paper", reader=True,
                     section="6-·-Table-2-·-Vanilla-RAG-vs-IA-RAG-(reader-accuracy-and-recall)"))
    for name, (source, what) in ABLATIONS.items():
        key = name.replace("w/o ", "no-").replace("w/", "with-").replace(".", "").lower()
        numbers = _paper(source, {"IA-RAG": "IA-RAG", name: name}, ds)
        out.append(Claim(PAPER, f"{key}-{ds}", source, f"{what} helps on {ds} (recall at {BUDGET} tokens, "
                         "paper τ)", numbers, f"ablation@{BUDGET}/{ds}", ("IA-RAG", name), +1, "paper",
                         section=_ABLATE))
        if name in UNION_ABLATIONS:  # at 800 tokens the seeds fill the budget before any traversal unit
            statement = (f"{what} helps on {ds} (recall of the whole retrieved union, K1 = "
                         f"{K1_DEFAULT[ds]} MEUs and their traversal, paper τ)")
            out.append(Claim(PAPER, f"{key}-union-{ds}", source, statement, numbers, f"ablation_union/{ds}",
                             ("IA-RAG", name), +1, "paper", stands_in=_UNION, section=_ABLATE))
    depth_numbers = _paper("Table 7", {f"L={d}": f"MAX_LEVELS={d}" for d in DEPTHS}, ds)
    meu_numbers = _paper("Table 8", {f"K1={k}": f"MEU={k}" for k in MEUS}, ds)
    depth = (f"MAX_LEVELS = {PAPER_DEPTH} is about best on {ds} (recall at {BUDGET} tokens", depth_numbers,
             tuple(f"MAX_LEVELS={d}" for d in DEPTHS), f"MAX_LEVELS={PAPER_DEPTH}")
    k1 = K1_DEFAULT[ds]
    meus = (f"K1 = {k1} retrieved MEUs is about best on {ds} (recall at {BUDGET} tokens", meu_numbers,
            tuple(f"MEU={k}" for k in MEUS), f"MEU={k1}")
    for key, source, setting in (("depth", "Table 7", depth), ("k1", "Table 8", meus)):
        text, numbers, arms, paper_arm = setting
        out.append(Claim(PAPER, f"{key}-{ds}", source, f"{text}, paper τ)", numbers,
                         f"sensitivity_paper_tau@{BUDGET}/{ds}", arms, BEST, "paper", paper_arm=paper_arm,
                         section=_DEPTH))
        out.append(Claim(PAPER, f"kit-{key}-{ds}", source, f"{text}, the kit's calibrated graph)", numbers,
                         f"sensitivity@{BUDGET}/{ds}", arms, BEST, "fair", paper_arm=paper_arm, kits_own=True,
                         section=_DEPTH))
    return tuple(out)


def _table5(group: str, column: str) -> Claim:
    numbers = printed(PAPER, "Table 5", column, {"IA-RAG": "IA-RAG", "Vanilla": "Vanilla RAG"}, "ComplexTR",
                      "{:.4f}")
    return Claim(PAPER, f"vs-vanilla-{group.lower()}-ComplexTR", "Table 5", f"IA-RAG retrieves better "
                 f"evidence than Vanilla RAG on ComplexTR's {group.lower()} questions (recall at {BUDGET} "
                 "tokens)", numbers, f"recall@{BUDGET}/ComplexTR", (PAPER_IA, CHUNKS), +1, "paper",
                 stands_in="retrieval recall stands in for Qwen2.5-72B's accuracy; the kit's rule labels "
                 "stand in for the paper's categories", subset=("group", group),
                 section="8-·-Table-5-and-Tables-9–10-·-Reasoning-types")


CLAIMS: tuple[Claim, ...] = (
    *(c for ds in DATASETS for c in _claims_for(ds)),
    *(_table5(group, column) for group, column in TABLE5_GROUPS.items()),
    Claim(PAPER, "table2-reader", "Table 2", "IA-RAG's reader accuracy / recall of Table 2 with "
          "Qwen2.5-72B and BGE-M3",
          printed(PAPER, "Table 2", "Acc.", {"IA-RAG": "IA-RAG"}, "TimeQA", "{:.4f}"),
          protocol="paper", reader=True,
          not_testable_here="needs the paper's Qwen2.5-72B reader and BGE-M3 encoder",
          command=SERVED, section="6-·-Table-2-·-Vanilla-RAG-vs-IA-RAG-(reader-accuracy-and-recall)"),
)


def outcomes(
    setups: Mapping,
    curves: Mapping[tuple, Sequence],
    ablation_paper_tau: Mapping[tuple, Sequence],
    sensitivity: Mapping[tuple, Sequence],
    reads: Mapping[str, Mapping[str, dict]] | None = None,
    ablation_evidence: Mapping[tuple, dict] | None = None,
    sensitivity_paper_tau: Mapping[tuple, Sequence] | None = None,
    type_labels: Mapping[str, Sequence[str]] | None = None,
) -> Measured:
    """The outcomes :data:`CLAIMS` reads (``record.outcomes`` stores them), per data set the run holds:
    recall at :data:`BUDGET` tokens of each retriever of the token curves
    (``curves[(data set, retriever, budget)]``), of each paper-τ ablation
    (``ablation_paper_tau[(data set, variant)]``) and of each calibrated depth / K1 setting
    (``sensitivity[(data set, setting)]``), the reader's token accuracy per question of Table 2's reads
    (``reads[data set][method]``: ``read_scores``; a failed call is NaN), and from
    ``ablation_evidence[(data set, variant)]`` (:func:`.ablations.ablations`) each paper-τ variant's
    per-question union recall and the digests of its text at the budget (``evidence:`` outcomes, from which
    the rule tells arms identical by construction), and each paper-τ depth / K1 setting's recall
    (``sensitivity_paper_tau[(data set, setting)]``)."""
    measured: Measured = {}
    for ds in DATASETS:
        if ds not in setups:
            for measure in ("recall", "ablation", "sensitivity", "sensitivity_paper_tau"):
                measured[f"{measure}@{BUDGET}/{ds}"] = f"{ds} was not run (datasets parameter)"
            for measure in ("reader_accuracy", "ablation_union"):
                measured[f"{measure}/{ds}"] = f"{ds} was not run (datasets parameter)"
            continue
        by_method = (reads or {}).get(ds, {})
        if by_method:
            measured[f"reader_accuracy/{ds}"] = Outcomes({
                "IA-RAG" if name == "IA-RAG" else "Vanilla RAG": {
                    r.quid: float("nan") if bad else float(a)
                    for r, a, bad in zip(scores["records"], scores["accuracy"], scores["failed"])
                }
                for name, scores in by_method.items()
            })
        else:
            measured[f"reader_accuracy/{ds}"] = "the reader read no question of it"
        quids = [q.quid for q in setups[ds].questions]
        at_budget = {m: v for (d, m, b), v in curves.items() if d == ds and b == BUDGET}
        measured[f"recall@{BUDGET}/{ds}"] = Outcomes(at_budget, quids)
        measured[f"ablation@{BUDGET}/{ds}"] = Outcomes(
            {v: r for (d, v), r in ablation_paper_tau.items() if d == ds}, quids
        )
        shown = {v: e for (d, v), e in (ablation_evidence or {}).items() if d == ds}
        if shown:
            measured[f"{EVIDENCE}ablation@{BUDGET}/{ds}"] = Outcomes(
                {v: e["digest"] for v, e in shown.items()}, quids)
            union = {v: e["union_recall"] for v, e in shown.items()}
            measured[f"ablation_union/{ds}"] = Outcomes(union, quids)
        else:
            measured[f"ablation_union/{ds}"] = "the ablations recorded no per-question evidence"
        measured[f"sensitivity@{BUDGET}/{ds}"] = Outcomes(
            {s: r for (d, s), r in sensitivity.items() if d == ds}, quids
        )
        paper_tau = {s: r for (d, s), r in (sensitivity_paper_tau or {}).items() if d == ds}
        measured[f"sensitivity_paper_tau@{BUDGET}/{ds}"] = (
            Outcomes(paper_tau, quids) if paper_tau else "the paper-τ sweep did not run"
        )
    if "ComplexTR" in setups and type_labels and "ComplexTR" in type_labels:
        groups = [GROUPS[t] for t in type_labels["ComplexTR"]]
        measured[LABELS] = Outcomes({"group": groups}, [q.quid for q in setups["ComplexTR"].questions])
    else:
        measured[LABELS] = "ComplexTR's reasoning types were not labelled in this run"
    return measured
