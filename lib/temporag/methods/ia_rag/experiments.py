"""The notebook's experiments as functions, so each notebook cell stays a few lines.

``Setup`` holds one data set's documents, questions, build and baselines.  Two builds per data set are
compared: the **paper reading** (τ_sem = 0.8, MEU summaries shown as evidence lines, seeds first) and
the **calibrated** one (τ_sem by :func:`.graph.calibrate_tau`, MEUs narrowing the unit search, the
union ranked by fit to the question's window: :data:`CALIBRATED`).  Every retrieval is also compared
at equal context tokens (:mod:`.budget`) with Vanilla RAG over 1,200-token chunks and over raw-text
windows of about a unit's size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from temporag.evaluate import answered_mean, evidence_recall, squad_normalise, token_accuracy_recall
from temporag.methods.ia_rag import Build, build_index
from temporag.methods.ia_rag.budget import BUDGETS, curve_table, recall_at_budgets
from temporag.methods.ia_rag.classify import GROUPS, classify
from temporag.methods.ia_rag.corpus import QA, Doc, load
from temporag.methods.ia_rag.retrieval import (
    IARAG,
    IAIndex,
    VanillaRAG,
    chunk_pieces,
    chunk_vectors,
    score_retrieval,
)
from temporag.reported import PaperRef
from temporag.sampling import stratified_sample

score = score_retrieval  # LLM-free recall, tokens and latency of one retriever
__all__ = [
    "IARAG",
    "build_index",
    "score",
    "prepare",
    "variants",
    "read_scores",
    "reader_mean",
    "documents_for",
    "unit_coverage",
    "operating_points",
    "token_curves",
    "ablations",
    "depth_and_meus",
    "reasoning_groups",
    "load_datasets",
    "reader_reads",
    "record_table2",
]

K1_DEFAULT = {"TimeQA": 10, "TempReason": 20, "ComplexTR": 10}  # Appendix B.1
CALIBRATED = {"meus": "narrow", "order": "window"}  # the calibrated retrieval's options
WINDOW_TOKENS = 200  # Vanilla RAG's raw-text windows: about five units' worth of text
CURVE_K2 = 60  # IEU seeds in the token curves: enough units to fill the largest budget
ABLATION_BUDGET = 800  # cl100k tokens every ablation is compared at
UNION_K = 500  # the whole union (no method returns more)

#: Unit coverage of the kit's first offline extractor (commit 4016c6a: whole TimeQA pages, undated
#: sentences mostly dropped, clauses cut at commas, TempReason with its ReasonQA fact blocks), measured
#: with :func:`unit_coverage`'s rule on every shared question that has a gold document.
COVERAGE_BEFORE = {"TimeQA": 0.906, "ComplexTR": 0.731, "TempReason": 0.378}


def load_datasets(
    datasets: Sequence[str],
    questions_file: str | None,
    sample_size: int | None,
    rng: np.random.Generator,
    smoke_extra: int | None = None,
) -> tuple[dict[str, tuple[list[Doc], list[QA], int]], list]:
    """Each data set's documents, its seeded question sample and its number of questions, and the files
    read (for their checksums).  ``questions_file`` replaces ComplexTR's questions only; ``smoke_extra``
    (smoke runs) keeps just the documents the sample needs plus that many distractors."""
    loaded, files = {}, []
    for dataset in datasets:
        own_questions = questions_file if dataset == "ComplexTR" else None
        docs, questions, paths = load(dataset, questions_file=own_questions)
        selected = stratified_sample(questions, sample_size, rng)
        if smoke_extra is not None:
            docs = documents_for(selected, docs, smoke_extra, rng)
        loaded[dataset] = (docs, selected, len(questions))
        files += paths
    return loaded, files


def data_table(loaded: Mapping[str, tuple[list[Doc], list[QA], int]]) -> pd.DataFrame:
    """What the run reads per data set: documents, selected questions and all questions."""
    return pd.DataFrame(
        [
            {"dataset": dataset, "documents": len(docs), "questions (selected)": len(questions),
             "questions (all)": total}
            for dataset, (docs, questions, total) in loaded.items()
        ]
    )


def documents_for(
    questions: Sequence[QA], docs: Sequence[Doc], extra: int, rng: np.random.Generator
) -> list[Doc]:
    """The documents whose title the questions name (or hold their answer, ``QA.gold_docs``), plus
    ``extra`` seeded distractors (smoke corpora)."""
    names = [squad_normalise(q.question) for q in questions]
    gold = {i for q in questions for i in q.gold_docs}
    hit = [
        d
        for d in docs
        if d.doc_id in gold or ((t := squad_normalise(d.title)) and any(t in n for n in names))
    ]
    rest = [d for d in docs if d not in hit]
    pick = rng.choice(len(rest), size=min(extra, len(rest)), replace=False) if rest else []
    return hit + [rest[i] for i in sorted(pick)]


@dataclass
class Setup:
    """One data set ready for the tables: documents, questions, the IA-RAG build, the baselines."""

    dataset: str
    docs: list[Doc]
    questions: list[QA]
    build: Build
    k1: int
    encoder: object
    chunk_vecs: np.ndarray | None = None
    extra: dict = field(default_factory=dict)

    def ia_rag(self, **kw) -> IARAG:
        kw.setdefault("k1", self.k1)
        return IARAG(self.build.index, self.encoder, **kw)

    def vanilla_chunks(self) -> VanillaRAG:
        if self.chunk_vecs is None:
            self.chunk_vecs = chunk_vectors(self.build.chunks, self.encoder)
        return VanillaRAG(
            [c.text for c in self.build.chunks], self.chunk_vecs, self.encoder, "Vanilla RAG (chunks)"
        )

    def vanilla_units(self) -> VanillaRAG:
        units = self.build.index.graph.units
        return VanillaRAG(
            [u.line() for u in units], self.build.index.graph.vectors, self.encoder, "Vanilla RAG (IEUs)"
        )

    def vanilla_windows(self, size: int = WINDOW_TOKENS) -> VanillaRAG:
        """Dense retrieval over consecutive raw-text windows of ``size`` tokens (no extraction at all):
        the chunks' ``size``-token pieces, whose vectors the chunk vectors already average."""
        key = f"windows{size}"
        if key not in self.extra:
            texts, _ = chunk_pieces(self.build.chunks, size)
            self.extra[key] = (texts, self.encoder.encode_cached(texts, desc="embedding chunk windows"))
        texts, vectors = self.extra[key]
        return VanillaRAG(texts, vectors, self.encoder, f"Vanilla RAG ({size}-token windows)")


def prepare(dataset: str, docs, questions, encoder, *, k1: int | None = None, **build_kw) -> Setup:
    build = build_index(docs, encoder, **build_kw)
    return Setup(dataset, list(docs), list(questions), build, k1 or K1_DEFAULT[dataset], encoder)


def calibrated(setup: Setup, build_kw: Mapping) -> Setup:
    """The same documents and questions on a build whose τ_sem is calibrated for the encoder."""
    build = build_index(setup.docs, setup.encoder, **{**build_kw, "tau": None})
    return Setup(setup.dataset, setup.docs, setup.questions, build, setup.k1, setup.encoder, setup.chunk_vecs)


# ----------------------------------------------------------------------------------------------------
# extraction

EXTRACTION_COUNTS = ("documents", "chunks", "chunk_tokens", "ieus_extracted", "duplicates_merged")


def extraction_table(setups: Mapping[str, Setup]) -> pd.DataFrame:
    """IEUs per data set: the build's counts, the share of fuzzy units and one column per conversion-table
    rule (A day ... G relative, "inherited", "undated")."""
    rows = []
    for dataset, setup in setups.items():
        units = setup.build.raw_units
        rows.append(
            {
                "dataset": dataset,
                **{name: setup.build.stats[name] for name in EXTRACTION_COUNTS},
                "fuzzy share": np.mean([u.fuzzy for u in units]),
                **pd.Series([u.rule for u in units]).value_counts().to_dict(),
            }
        )
    return pd.DataFrame(rows)


def unit_examples(units: Sequence, n: int = 10) -> pd.DataFrame:
    """The first ``n`` units as the paper's IEU record: interval ends, fuzzy flag, rule, time, sentence."""
    rows = []
    for unit in units[:n]:
        ends = unit.span().split(" – ")
        rows.append(
            {"t_start": ends[0], "t_end": ends[-1], "fuzzy": unit.fuzzy, "rule": unit.rule,
             "time expression": unit.time_text, "sentence": unit.sentence[:110]}
        )
    return pd.DataFrame(rows)


def unit_coverage(setup: Setup) -> dict:
    """Share of the questions with a known gold document whose gold answers are all in that document's
    units (the extractor's ceiling for any retrieval over units), beside the same share for the raw text."""
    by_doc: dict[int, list[str]] = {}
    for u in setup.build.raw_units:
        by_doc.setdefault(u.source, []).append(u.sentence)
    text = {d.doc_id: d.text for d in setup.docs}
    asked = [q for q in setup.questions if q.gold_docs]
    golds = [q.answers for q in asked]
    units = ["\n".join(s for i in q.gold_docs for s in by_doc.get(i, [])) for q in asked]
    raw = ["\n".join(text.get(i, "") for i in q.gold_docs) for q in asked]
    return {
        "dataset": setup.dataset,
        "questions with a gold document": len(asked),
        "answer in the gold text": float(evidence_recall(raw, golds).mean()) if asked else np.nan,
        "unit coverage before": COVERAGE_BEFORE.get(setup.dataset, np.nan),
        "unit coverage": float(evidence_recall(units, golds).mean()) if asked else np.nan,
    }


def record_coverage(results, coverage: pd.DataFrame) -> None:
    """``coverage/<data set>``: the unit coverage, with the previous extractor's as ``before``."""
    for row in coverage.to_dict("records"):
        before = float(row["unit coverage before"])
        results.metric(f"coverage/{row['dataset']}", float(row["unit coverage"]), before=before)


# ----------------------------------------------------------------------------------------------------
# the graph, tightening and the forest, for each build (``builds``: (name, setups) pairs)


def graph_table(builds: Sequence[tuple[str, Mapping[str, Setup]]]) -> pd.DataFrame:
    """The event graph of each build before tightening, with its τ_sem and number of MEUs."""
    return pd.DataFrame(
        [
            {"dataset": dataset, "build": name, "tau": setup.build.stats["tau"],
             **setup.build.stats["graph_before_tightening"], "meus": setup.build.stats["meus"]}
            for name, group in builds
            for dataset, setup in group.items()
        ]
    )


def record_graphs(results, paper: Mapping[str, Setup], tuned: Mapping[str, Setup]) -> None:
    """``graph/<data set>/...``: edges and units of the paper-τ graph, the calibrated τ and its edges."""
    for dataset, setup in paper.items():
        calibrated_stats = tuned[dataset].build.stats
        results.metric(f"graph/{dataset}/edges", setup.build.stats["graph"]["edges"])
        results.metric(f"graph/{dataset}/ieus", setup.build.stats["graph"]["ieus"])
        results.metric(f"graph/{dataset}/calibrated_tau", calibrated_stats["tau"])
        results.metric(f"graph/{dataset}/calibrated_edges", calibrated_stats["graph"]["edges"])


def record_allen(results, allen: pd.DataFrame) -> None:
    """``fig4/<data set>/<relation>``: edges per merged Allen relation
    (:func:`.report.allen_distribution`)."""
    for row in allen.to_dict("records"):
        results.metric(f"fig4/{row['dataset']}/{row['relation']}", int(row["edges"]))


def tightening_table(builds: Sequence[tuple[str, Mapping[str, Setup]]]) -> pd.DataFrame:
    """One :func:`tightening_row` per build and data set."""
    return pd.DataFrame(
        [
            tightening_row(dataset, name, setup.build)
            for name, group in builds
            for dataset, setup in group.items()
        ]
    )


def record_tightening(results, tightening: pd.DataFrame) -> None:
    """``tightening/<data set>/<build>/narrowed`` with the widened count (which must be 0)."""
    for row in tightening.to_dict("records"):
        results.metric(
            f"tightening/{row['dataset']}/{row['build']}/narrowed",
            row["narrowed"],
            widened=row["widened (must be 0)"],
        )


def tightening_example(setups: Mapping[str, Setup], evidence: int = 3) -> list[str]:
    """The first narrowed unit that had evidence: its days before and after and up to ``evidence`` of the
    units that bounded it (no lines when no narrowing had evidence)."""
    for setup in setups.values():
        for change in setup.build.changes:
            if change["evidence"]:
                units = setup.build.index.graph.units
                narrowed = f"narrowed: {units[change['unit']].line()} "
                days = f"  days before: {change['old']} after: {change['new']}"
                shown = [f"  evidence: {units[j].line()}" for j in change["evidence"][:evidence]]
                return [narrowed, days, *shown]
    return []


def forest_table(builds: Sequence[tuple[str, Mapping[str, Setup]]]) -> pd.DataFrame:
    """The thematic forest of each build, one row per level."""
    return pd.DataFrame(
        [
            {"dataset": dataset, "build": name, **level}
            for name, group in builds
            for dataset, setup in group.items()
            for level in setup.build.stats["forest_levels"]
        ]
    )


def record_forests(results, paper: Mapping[str, Setup], tuned: Mapping[str, Setup]) -> None:
    """``forest/<data set>/meus`` and ``.../calibrated_meus``: MEUs of the paper-τ and calibrated forests."""
    for dataset, setup in paper.items():
        results.metric(f"forest/{dataset}/meus", setup.build.stats["meus"])
        results.metric(f"forest/{dataset}/calibrated_meus", tuned[dataset].build.stats["meus"])


def tree_index(tuned: Mapping[str, Setup], datasets: Sequence[str]) -> IAIndex | None:
    """The calibrated index whose forest Fig. 5 draws a tree of: ComplexTR's (the paper's example), else
    the first data set's with an MEU; None when no forest has one."""
    for dataset in ["ComplexTR", *datasets]:
        if dataset in tuned and tuned[dataset].build.index.forest.meus:
            return tuned[dataset].build.index
    return None


# ----------------------------------------------------------------------------------------------------
# retrieval at one operating point (the paper's protocol) and at equal tokens


def operating_points(setups: Mapping[str, Setup], k2: int, vanilla_chunks: int):
    """The paper's protocol: IA-RAG's whole union against Vanilla RAG's top chunks (and the units by
    plain cosine), each at its own size.  Returns (retrievers, scores, table)."""
    chunks_name = f"Vanilla RAG (chunks, top-{vanilla_chunks})"
    retrievers, scores, rows = {}, {}, []
    for dataset, setup in setups.items():
        shown = {"IA-RAG": UNION_K, chunks_name: vanilla_chunks, "Vanilla RAG (IEUs, top-40)": 40}
        retrievers[dataset] = {
            "IA-RAG": setup.ia_rag(k2=k2),
            chunks_name: setup.vanilla_chunks(),
            "Vanilla RAG (IEUs, top-40)": setup.vanilla_units(),
        }
        scores[dataset] = {
            name: score(method, setup.questions, shown[name]) for name, method in retrievers[dataset].items()
        }
        for name, found in scores[dataset].items():
            rows.append(
                {
                    "dataset": dataset,
                    "method": name,
                    "retrieval recall": float(found["recall"].mean()),
                    "n": len(found["recall"]),
                    "tokens / question": float(found["tokens"].mean()),
                    "units / question": float(found["units"].mean()),
                    "latency p50 ms": float(np.median(found["latency_s"]) * 1e3),
                }
            )
    return retrievers, scores, pd.DataFrame(rows)


def record_retrieval_recall(results, recall: pd.DataFrame) -> None:
    """``retrieval_recall/<data set>/<method>`` of :func:`operating_points`' table, with n and tokens."""
    for row in recall.to_dict("records"):
        results.metric(
            f"retrieval_recall/{row['dataset']}/{row['method']}",
            float(row["retrieval recall"]),
            n=int(row["n"]),
            tokens=float(row["tokens / question"]),
        )


def curve_methods(paper: Setup, tuned: Setup) -> dict:
    """The retrievers of the tokens-vs-recall comparison for one data set."""
    return {
        "IA-RAG (paper reading)": paper.ia_rag(k2=CURVE_K2),
        "IA-RAG (calibrated)": tuned.ia_rag(k2=CURVE_K2, **CALIBRATED),
        "Vanilla RAG (1,200-token chunks)": paper.vanilla_chunks(),
        f"Vanilla RAG ({WINDOW_TOKENS}-token windows)": paper.vanilla_windows(),
        "Vanilla RAG (IEUs)": tuned.vanilla_units(),
    }


def token_curves(
    paper: Mapping[str, Setup], tuned: Mapping[str, Setup], budgets: Sequence[int] = BUDGETS
) -> pd.DataFrame:
    """Recall at each token budget, per data set and retriever (:func:`.budget.curve_table`)."""
    frames = []
    for dataset, setup in paper.items():
        frame = curve_table(curve_methods(setup, tuned[dataset]), setup.questions, budgets, UNION_K)
        frames.append(frame.assign(dataset=dataset))
    out = pd.concat(frames, ignore_index=True)
    return out[["dataset", "method", "budget", "recall", "tokens shown", "n"]]


def record_token_curves(results, curves: pd.DataFrame) -> None:
    """``tokens_recall/<data set>/<method>/<budget>``: each retriever's recall at each budget."""
    for row in curves.to_dict("records"):
        results.metric(f"tokens_recall/{row['dataset']}/{row['method']}/{row['budget']}", row["recall"])


def budget_verdicts(
    curves: pd.DataFrame, datasets: Sequence[str], budget: int = ABLATION_BUDGET
) -> list[str]:
    """Per data set, whether calibrated IA-RAG reaches the best Vanilla RAG over raw text at ``budget``
    tokens, and, where it trails, what the same units reach by plain cosine."""
    at_budget = curves[curves.budget == budget]
    lines = []
    for dataset in datasets:
        recall = at_budget[at_budget.dataset == dataset].set_index("method").recall
        vanilla = recall[[m for m in recall.index if m.startswith("Vanilla RAG (") and "IEU" not in m]]
        ia_rag = recall["IA-RAG (calibrated)"]
        if ia_rag < vanilla.max():
            lines.append(
                f"{dataset}: IA-RAG still trails Vanilla RAG at {budget} tokens "
                f"({ia_rag:.3f} vs {vanilla.idxmax()} {vanilla.max():.3f}). "
                f"The same units by plain cosine reach {recall['Vanilla RAG (IEUs)']:.3f}; the ablations "
                "above show which stage moves recall (w/o IA, w/o Hier., MEU lines, seeds first)."
            )
        else:
            lines.append(
                f"{dataset}: IA-RAG matches or beats Vanilla RAG at {budget} tokens "
                f"({ia_rag:.3f} vs {vanilla.max():.3f})."
            )
    return lines


def curve_grid(curves: pd.DataFrame) -> pd.DataFrame:
    """The curves as one row per (data set, method) and one recall column per budget."""
    grid = curves.pivot_table(index=["dataset", "method"], columns="budget", values="recall", sort=False)
    grid.columns = [f"recall @{b}" for b in grid.columns]
    return grid.reset_index()


# ----------------------------------------------------------------------------------------------------
# ablations on the calibrated graph


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


def budget_and_union(method, questions: Sequence[QA], budget: int = ABLATION_BUDGET) -> dict[str, float]:
    """Recall at an equal token budget and of the whole union (with the union's size)."""
    at = recall_at_budgets(method, questions, (budget,), UNION_K)[budget]
    whole = score(method, questions, UNION_K)
    return {
        f"recall @{budget}": float(at["recall"].mean()),
        "union recall": float(whole["recall"].mean()),
        "union tokens": float(whole["tokens"].mean()),
        "union units": float(whole["units"].mean()),
    }


def ablations(
    setups: Mapping[str, Setup], build_kw: Mapping, k2: int, options: Mapping | None = None
) -> pd.DataFrame:
    """Every Table 3 / 4 variant, compared at :data:`ABLATION_BUDGET` tokens and over the whole union;
    ``options`` are the retrieval's (default :data:`CALIBRATED`; ``{}`` for the paper reading)."""
    options = CALIBRATED if options is None else options
    rows = []
    for dataset, setup in setups.items():
        for name, method in variants(setup, build_kw, k2, options).items():
            rows.append({"dataset": dataset, "variant": name, **budget_and_union(method, setup.questions)})
    return pd.DataFrame(rows)


def record_ablations(results, ablation: pd.DataFrame, prefix: str) -> None:
    """``<prefix>/<data set>/<variant>``: recall at :data:`ABLATION_BUDGET` tokens, with the whole
    union's recall and tokens."""
    for row in ablation.to_dict("records"):
        results.metric(
            f"{prefix}/{row['dataset']}/{row['variant']}",
            float(row[f"recall @{ABLATION_BUDGET}"]),
            union_recall=float(row["union recall"]),
            union_tokens=float(row["union tokens"]),
        )


def depth_and_meus(
    tuned: Mapping[str, Setup],
    build_kw: Mapping,
    k2: int,
    depths: Sequence[int] = (0, 4, 6, 10),
    meu_counts: Sequence[int] = (5, 10, 15, 20, 40),
) -> pd.DataFrame:
    """Tables 7 and 8 on the calibrated graph: MAX_LEVELS (a build each) and K1 retrieved MEUs."""
    rows = []
    for dataset, setup in tuned.items():
        tau = setup.build.stats["tau"]
        for levels in depths:
            build = build_index(setup.docs, setup.encoder, **{**build_kw, "tau": tau, "max_levels": levels})
            method = IARAG(build.index, setup.encoder, k1=setup.k1, k2=k2, **CALIBRATED)
            found = budget_and_union(method, setup.questions)
            rows.append({"dataset": dataset, "table": "Table 7", "variant": f"MAX_LEVELS={levels}", **found})
        for k1 in meu_counts:
            found = budget_and_union(setup.ia_rag(k1=k1, k2=k2, **CALIBRATED), setup.questions)
            rows.append({"dataset": dataset, "table": "Table 8", "variant": f"MEU={k1}", **found})
    return pd.DataFrame(rows)


def record_sensitivity(results, sensitivity: pd.DataFrame) -> None:
    """``sensitivity/<data set>/<setting>``: recall at :data:`ABLATION_BUDGET` tokens and of the union."""
    for row in sensitivity.to_dict("records"):
        results.metric(
            f"sensitivity/{row['dataset']}/{row['variant']}",
            float(row[f"recall @{ABLATION_BUDGET}"]),
            union_recall=float(row["union recall"]),
        )


def reasoning_types(setups: Mapping[str, Setup], classifier: str, llm=None) -> dict[str, list[str]]:
    """T1–T5 labels of each data set's selected questions (``llm`` only for ``classifier="llm"``)."""
    llm = llm if classifier == "llm" else None
    return {
        dataset: classify([q.question for q in setup.questions], classifier, llm)
        for dataset, setup in setups.items()
    }


def record_types(results, labels: Mapping[str, Sequence[str]]) -> None:
    """``types/<data set>/<T1..T5>``: questions per reasoning type, most frequent first."""
    for dataset, dataset_labels in labels.items():
        for label, count in pd.Series(dataset_labels).value_counts().items():
            results.metric(f"types/{dataset}/{label}", int(count))


def reasoning_groups(
    scores: Mapping, labels: Mapping[str, Sequence[str]], names: Sequence[str]
) -> pd.DataFrame:
    """Table 5 (ComplexTR): retrieval recall of ``names`` by Explicit / Relative / Compositional group."""
    rows = []
    for dataset in [d for d in ("ComplexTR",) if d in scores]:
        groups = np.array([GROUPS[t] for t in labels[dataset]])
        for name in names:
            recall = scores[dataset][name]["recall"]
            row = {"method": name}
            for g in ("Explicit", "Relative", "Compositional"):
                row[g] = float(recall[groups == g].mean()) if (groups == g).any() else np.nan
            row["Overall"] = float(recall.mean())
            row["paper row (accuracy)"] = "Vanilla RAG" if name.startswith("Vanilla") else "IA-RAG"
            rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------
# the reader


def read_scores(method, questions: Sequence[QA], llm, k: int, top_k: int = 1) -> dict:
    """Reader answers for ``questions`` through ``Method.pipeline`` and their DyG-RAG scores."""
    records = method.pipeline(list(questions), llm, k=k, top_k=top_k, progress=False)
    responses = [" ".join(r.answers) for r in records]
    acc, rec = token_accuracy_recall(responses, [q.answers for q in questions])
    failed = np.array([not r.answered for r in records])
    return {
        "records": records,
        "accuracy": acc,
        "recall": rec,
        "failed": failed,
        "prompt_tokens": np.array([r.prompt_tokens for r in records], dtype=float),
    }


def reader_reads(
    methods: Mapping[str, Mapping],
    setups: Mapping[str, Setup],
    llm,
    *,
    sample_size: int | None,
    seed: int,
    reader_units: int,
    vanilla_chunks: int,
) -> dict[str, dict[str, dict]]:
    """Table 2's reader runs (:func:`read_scores`) per data set: IA-RAG showing its first ``reader_units``
    units and Vanilla RAG its ``vanilla_chunks`` chunks, on the same seeded sample of ``sample_size``
    questions (seed + 1, so it is drawn apart from the LLM-free sample)."""
    reads = {}
    for dataset, setup in setups.items():
        sample = stratified_sample(setup.questions, sample_size, np.random.default_rng(seed + 1))
        shown = {"IA-RAG": reader_units, f"Vanilla RAG (chunks, top-{vanilla_chunks})": vanilla_chunks}
        reads[dataset] = {
            name: read_scores(methods[dataset][name], sample, llm, k=k) for name, k in shown.items()
        }
    return reads


def paper_row(method: str) -> str:
    """Table 2's row of a reader method: IA-RAG, or Vanilla RAG for any Vanilla RAG variant."""
    return "IA-RAG" if method == "IA-RAG" else "Vanilla RAG"


def record_table2(results, reads: Mapping[str, Mapping[str, dict]], reader: str) -> pd.DataFrame:
    """Table 2: each row's reader accuracy and recall per data set beside the paper's, recorded as
    ``table2/<data set>/<row>/<metric>`` (means over the answered questions: a failed call is not a wrong
    answer)."""
    records = []
    for row in ("Vanilla RAG", "IA-RAG"):
        for dataset, by_method in reads.items():
            for method, scores in by_method.items():
                if paper_row(method) != row:
                    continue
                for metric, column in (("accuracy", "Acc."), ("recall", "Recall")):
                    mean = reader_mean(scores, metric)
                    paper = PaperRef("ia_rag", "Table 2", row, column, dataset)
                    records.append(
                        results.compare(
                            f"table2/{dataset}/{row}/{metric}", mean["value"], paper, n=mean["n"],
                            failed=mean["failed"], reader=reader, rule="DyG-RAG token-level",
                        )
                    )
    return pd.DataFrame(records)


def accuracy_tokens(reads: Mapping[str, Mapping[str, dict]]) -> pd.DataFrame:
    """Fig. 3's points: each reader method's accuracy against its mean prompt tokens (failed calls left
    out of both means), with n read and failed."""
    return pd.DataFrame(
        [
            {"dataset": dataset, "method": name.split(" (")[0], "accuracy": reader_mean(scores)["value"],
             "tokens": reader_mean(scores, "prompt_tokens")["value"], "n": len(scores["accuracy"]),
             "failed": int(scores["failed"].sum())}
            for dataset, by_method in reads.items()
            for name, scores in by_method.items()
        ]
    )


def reader_predictions(reads: Mapping[str, Mapping[str, dict]]) -> list[dict]:
    """Every reader record with its data set, method and DyG-RAG accuracy (``predictions.reader``)."""
    return [
        {"dataset": dataset, "method": name, **record.to_dict(), "accuracy": float(accuracy)}
        for dataset, by_method in reads.items()
        for name, scores in by_method.items()
        for record, accuracy in zip(scores["records"], scores["accuracy"])
    ]


def reader_mean(scores: dict, metric: str = "accuracy") -> dict:
    """One reader number of :func:`read_scores` (``accuracy``, ``recall``, ``prompt_tokens``) over the
    questions answered, with n, answered and failed: a failed call is never a wrong answer (its per-question
    0 stays in ``scores`` for the predictions, but no mean counts it)."""
    return answered_mean(scores[metric], scores["failed"])


def tightening_row(dataset: str, build_name: str, build: Build) -> dict:
    """One row of the tightening table: fuzzy units before and after, how many were narrowed, and how many
    intervals came out wider than extracted (tightening may only narrow, so that count must be 0)."""
    raw = {u.key: u for u in build.raw_units}

    def lower(t):
        return -1e9 if t is None else t

    def upper(t):
        return 1e9 if t is None else t

    widened = sum(
        lower(u.t_start) < lower(raw[u.key].t_start) or upper(u.t_end) > upper(raw[u.key].t_end)
        for u in build.index.graph.units
        if u.key in raw
    )
    stats = build.stats
    return {"dataset": dataset, "build": build_name,
            "fuzzy before": stats["graph_before_tightening"]["fuzzy_ieus"],
            "narrowed": stats["tightened"], "flags cleared": stats["flags_cleared"],
            "fuzzy after": stats["graph"]["fuzzy_ieus"], "widened (must be 0)": widened}


# ----------------------------------------------------------------------------------------------------
# speed and per-question records

BUILD_TIMES = ("extract_s", "embed_s", "dedup_s", "graph_s", "tighten_s", "forest_s")


def build_times(setups: Mapping[str, Setup]) -> pd.DataFrame:
    """Seconds of each index-build stage per data set (a cached build reports its first build's)."""
    return pd.DataFrame(
        [
            {"dataset": dataset, **{stage: round(setup.build.stats[stage], 2) for stage in BUILD_TIMES}}
            for dataset, setup in setups.items()
        ]
    )


def retrieval_predictions(setups: Mapping[str, Setup], scores: Mapping, shown: int = 60) -> list[dict]:
    """IA-RAG's evidence ids (the first ``shown``) and retrieval recall per question
    (``predictions.ia_rag``), from :func:`operating_points`' scores."""
    records = []
    for dataset, by_method in scores.items():
        found = by_method["IA-RAG"]
        for question, ids, recall in zip(setups[dataset].questions, found["retrieval"].ids, found["recall"]):
            records.append(
                {"dataset": dataset, "quid": question.quid, "answers": list(question.answers),
                 "evidence_ids": ids.tolist()[:shown], "retrieval_recall": float(recall)}
            )
    return records
