"""Tables 3, 4, 7 and 8 on the builds: IA-RAG's ablations and settings, each compared at an equal token
budget (:mod:`.budget`) and over its whole union, with no reader involved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from temporag.methods.ia_rag import build_index
from temporag.methods.ia_rag.budget import recall_at_budgets
from temporag.methods.ia_rag.corpus import QA
from temporag.methods.ia_rag.retrieval import IARAG, score_retrieval
from temporag.methods.ia_rag.setups import CALIBRATED, UNION_K, Setup

ABLATION_BUDGET = 800  # cl100k tokens every ablation is compared at


def variants(setup: Setup, build_kw: Mapping, k2: int, options: Mapping | None = None) -> dict[str, IARAG]:
    """Tables 3 and 4: IA-RAG and its ablations with the same retrieval ``options`` (w/o Tight. needs
    a build without tightening; the build's τ_sem is kept)."""
    options = dict(options or {})
    tau = setup.build.stats.get("tau", build_kw.get("tau"))
    untight = build_index(setup.docs, setup.encoder, **{**build_kw, "tau": tau, "tightening": "none"})
    out = {
        "IA-RAG": setup.ia_rag(k2=k2, **options),
        "w/o IA": setup.ia_rag(k2=k2, traversal="none", **options),
        "w/o Tight.": IARAG(untight.index, setup.encoder, k1=setup.k1, k2=k2, **options),
        "w/o Hier.": setup.ia_rag(k2=k2, hierarchy=False, **options),
        "w/All": setup.ia_rag(k2=k2, traversal="all", **options),
        "w/Top-5": setup.ia_rag(k2=k2, traversal="top5", **options),
    }
    if options.get("meus") == "narrow":
        out["MEU lines instead of narrowing"] = setup.ia_rag(k2=k2, **{**options, "meus": "lines"})
    if options.get("order") == "window":
        out["seeds first instead of window ranking"] = setup.ia_rag(k2=k2, **{**options, "order": "seeds"})
    return out


def budget_and_union(
    method, questions: Sequence[QA], budget: int = ABLATION_BUDGET, per_question: list | None = None,
    evidence: list | None = None,
) -> dict[str, float]:
    """Recall at an equal token budget and of the whole union (with the union's size); appends the
    per-question recall at the budget to ``per_question`` when given (the claims' outcomes), and to
    ``evidence`` the digest of each question's text at the budget and its per-question union recall."""
    at = recall_at_budgets(method, questions, (budget,), UNION_K)[budget]
    if per_question is not None:
        per_question.append(at["recall"])
    whole = score_retrieval(method, questions, UNION_K)
    if evidence is not None:
        evidence.append({"digest": at["digest"], "union_recall": whole["recall"]})
    return {
        f"recall @{budget}": float(at["recall"].mean()),
        "union recall": float(whole["recall"].mean()),
        "union tokens": float(whole["tokens"].mean()),
        "union units": float(whole["units"].mean()),
    }


def ablations(
    setups: Mapping[str, Setup],
    build_kw: Mapping,
    k2: int,
    options: Mapping | None = None,
    per_question: dict | None = None,
    evidence: dict | None = None,
) -> pd.DataFrame:
    """Every Table 3 / 4 variant, compared at :data:`ABLATION_BUDGET` tokens and over the whole union;
    ``options`` are the retrieval's (default :data:`CALIBRATED`; ``{}`` for the paper reading).  Fills
    ``per_question[(data set, variant)]`` with each question's recall at the budget, and
    ``evidence[(data set, variant)]`` with the digests of the text at the budget and the per-question
    union recall, when given."""
    options = CALIBRATED if options is None else options
    rows = []
    for dataset, setup in setups.items():
        for name, method in variants(setup, build_kw, k2, options).items():
            sink: list = []
            shown: list = []
            found = budget_and_union(method, setup.questions, per_question=sink, evidence=shown)
            if per_question is not None:
                per_question[(dataset, name)] = sink[0]
            if evidence is not None:
                evidence[(dataset, name)] = shown[0]
            rows.append({"dataset": dataset, "variant": name, **found})
    return pd.DataFrame(rows)


def depth_and_meus(
    tuned: Mapping[str, Setup],
    build_kw: Mapping,
    k2: int,
    depths: Sequence[int] = (0, 4, 6, 10),
    meu_counts: Sequence[int] = (5, 10, 15, 20, 40),
    per_question: dict | None = None,
    options: Mapping | None = None,
) -> pd.DataFrame:
    """Tables 7 and 8: MAX_LEVELS (a build each, at each setup's own τ) and K1 retrieved MEUs, with the
    retrieval ``options`` (default :data:`CALIBRATED` on the calibrated setups; ``{}`` with the paper-τ
    setups is the paper's reading).  Fills ``per_question[(data set, setting)]`` with each question's
    recall at the budget when given."""
    options = CALIBRATED if options is None else options
    rows = []
    sink: list = []
    for dataset, setup in tuned.items():
        tau = setup.build.stats["tau"]
        settings = []
        for levels in depths:
            build = build_index(setup.docs, setup.encoder, **{**build_kw, "tau": tau, "max_levels": levels})
            method = IARAG(build.index, setup.encoder, k1=setup.k1, k2=k2, **options)
            found = budget_and_union(method, setup.questions, per_question=sink)
            settings.append(f"MAX_LEVELS={levels}")
            rows.append({"dataset": dataset, "table": "Table 7", "variant": settings[-1], **found})
        for k1 in meu_counts:
            method = setup.ia_rag(k1=k1, k2=k2, **options)
            found = budget_and_union(method, setup.questions, per_question=sink)
            settings.append(f"MEU={k1}")
            rows.append({"dataset": dataset, "table": "Table 8", "variant": settings[-1], **found})
        if per_question is not None:
            per_question.update({(dataset, s): v for s, v in zip(settings, sink[-len(settings):])})
    return pd.DataFrame(rows)
