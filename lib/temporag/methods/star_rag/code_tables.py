"""The paper, the released code and the kit side by side: where can STAR-RAG's gain come from?

* :func:`paper_vs_code` — what the paper says, what the released code does (our reading, every row
  cited by file and line of ``MarshmallowLight/RAGverse`` @ 94e4905, ``dynamic_RAG/``) and what the kit
  runs for it;
* :func:`decomposition` — the released code's retrieval (:class:`released.ReleasedCodeRAG`) taken apart
  step by step beside semantic search and Alg. 1: answer recall of what the reader is shown (LLM-free,
  every selected question, by qtype and Single/Multiple), its prompt tokens, and reader Hit@1 on a
  seeded sample; :func:`.report.decomposition_figure` draws it.

:mod:`.report` draws and formats these; :mod:`.record` writes the decomposition's numbers into the
run's results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.methods.base import Retrieval
from temporag.methods.star_rag.paper_tables import positions_in
from temporag.methods.star_rag.reader import prompt_tokens

SOURCE = "MarshmallowLight/RAGverse @ 94e4905, folder dynamic_RAG/ (paths below are inside it)"
_H = "src/hipporag/HippoRAG.py"
_MISC = "src/hipporag/utils/misc_utils.py"

#: (step, paper, released code — our reading, evidence, what the kit runs)
PAPER_VS_CODE = (
    (
        "PPR restart probability",
        "α = 0.2 (Eq. 8, App. C)",
        "0.2, named `_ppr_gamma`: π ← 0.8·πÃ + 0.2·v — as in the paper",
        f"{_H}:208, 586, 591-592",
        "α = 0.2",
    ),
    (
        "coverage/rank mixture of γ",
        "s = (1 − θ)c̃ + θp̃, θ = 0.6, β = 0.7, τ = 1 / number of seeds (App. C)",
        "the same; θ is named `_ppr_alpha` = 0.6 and weighs the rank signal",
        f"{_H}:206-209, 523-539",
        "θ = 0.6, β = 0.7, τ = 1 / number of seeds",
    ),
    (
        "entity labels",
        "Apriori over each entity's relations, first K_type subsets (Alg. 2)",
        "precomputed types read from types_bad.txt and e2types_bad.txt (not released)",
        "graph.py:33-35, 80-103",
        "not reproducible: Apriori in every row",
    ),
    (
        "rule nodes",
        "every ⟨c_s, r, c_o⟩ that has an event (Eq. 1)",
        "typed rules ⟨c_s, r, c_o, in/out⟩ with c_s ≠ c_o, kept only when a KGist-style MDL (rule code + "
        "binomial exception codes) prefers them; only kept rules carry events",
        "graph.py:215-258 (223); searcher.py:604-677; evaluator.py:130-169, 184-203; "
        "temporal_model.py:25, 175-186",
        "not reproduced: every rule node kept",
    ),
    (
        "candidate edges and spans",
        "Hamming-1 node pairs; T_uv from every event pair sharing two of (s, r, o) (Eq. 2, fn. 3)",
        "consecutive events of one entity pair; the two rules share at least two of three parts",
        "searcher.py:29-83; graph.py:285-289",
        'released-code rows: GraphParams(temporal_pairs="consecutive")',
    ),
    (
        "edge selection costs",
        "L_cov (Eq. 5) + L_time (Eq. 6), greedy until no edge lowers L",
        "KGist-style: per edge −log frequency of its two rules + log n + log C(n, n − explained) over the "
        "follow-on rule's events; unexplained events by a binomial code; spans never priced; one pass",
        "evaluator.py:61-93, 139-147, 171-181, 206-230, 268-311; searcher.py:534-599",
        "not reproduced: Eqs. 5–6 with the kit's L_null in every row",
    ),
    (
        "edge weights of Ã",
        "'normalizing edge weights' (the weight is not given)",
        "the number of follow-on events the edge explains, both directions summed",
        f"temporal_model.py:279-284; {_H}:567-572, 621-646",
        'released-code rows: the event pairs in T_uv (edge_weight="spans"); Alg. 1: 1/mean span',
    ),
    (
        "nodes without an edge",
        "not stated",
        "a self-loop, so such a seed keeps its restart mass",
        f"{_H}:651-662",
        "released-code rows: self_loops=True; Alg. 1: their mass returns to γ",
    ),
    (
        "K2 (rules kept after the PPR)",
        "20 (§4.1)",
        "5",
        f"{_H}:212, 698",
        "released-code rows: k2=5; Alg. 1: 20",
    ),
    (
        "embeddings",
        "NV-Embed of the events (§4.1, fn. 4)",
        "NV-Embed-v2 of the string of each 4-tuple (s, r, o, date); a triple is scored with the vector of "
        "one of its dated tuples (the last one indexed)",
        f"src/hipporag/utils/config_utils.py:128-131; run.py:88-91; {_H}:443-494, 960-966",
        "not reproduced (7B model): MiniLM of each distinct (s, r, o); Alg. 1 adds a date bonus",
    ),
    (
        "anchors",
        "top-K1 events by cosine (Alg. 1 line 8)",
        "top-200 distinct triples, each its 5 earliest events (looked up through the kept rules, so a "
        "triple whose rules were all dropped has none); only the top triple's relation; a hard "
        "before/after filter around a date named in the question (else the first event's); sorted by "
        "(violates, days away, −score)",
        f"{_H}:3173-3342, 2904-2965; {_MISC}:213-276",
        "ReleasedCodeRAG.anchors (relation_filter, time_filter, time_order)",
    ),
    (
        "what is re-ranked",
        "the top-K2 rules' events by cosine, top K1 returned (Alg. 1 lines 15-16)",
        "intended: the top rules' events, top 50 by cosine; as released the rules are read from "
        "`_ppr_topk_rules`, which holds the count 5, so that pool is empty and anchors ∪ rule events are "
        "ranked",
        f"{_H}:212, 1226-1338",
        'pool="rules" (intended, the "released code" rows); pool="anchors+rules" (as released)',
    ),
    (
        "after the re-ranking",
        "nothing: the top K1 events are returned",
        "each pool event followed by up to 5 same-relation events of its rules sharing its subject or "
        "object, nearest in time, until 10; merged with the anchors, one event per triple; filtered again "
        "before/after the first anchor's date by a second word list",
        f"{_H}:1341-1526",
        "neighbours, time_filter",
    ),
    (
        "what the reader is shown",
        "K1 = 10 events; 601 tokens per question (§4.4)",
        "10 lines, one per (subject, relation), each listing objects and dates; objects and dates are "
        "de-duplicated separately and zipped, so a shared date drops an object and shifts the dates",
        f"{_H}:1179-1183, 1548-1594; src/hipporag/utils/config_utils.py:180-183",
        'grouping; pairing="released" (as released); every row is read with the kit\'s STAR-RAG prompt',
    ),
    (
        "questions run",
        "1,000 random test questions, mean of five runs (§4.1)",
        "run.py reads the first 100 questions of train.json",
        "run.py:68, 96-106",
        "the 954 shared test questions",
    ),
)


def paper_vs_code() -> pd.DataFrame:
    """The paper's choices, the released code's (our reading, file:line) and what the kit runs."""
    columns = ["step", "paper", "released code (our reading)", "evidence (file:line)", "kit"]
    return pd.DataFrame(list(PAPER_VS_CODE), columns=columns)


def released_code_rows() -> list[dict[str, str]]:
    """:data:`PAPER_VS_CODE` as rows of the leaderboard's paper vs released code vs kit table."""
    return [
        {
            "aspect": step,
            "paper": paper,
            "released code (our reading)": f"{code} [{evidence}]",
            "kit": kit,
            "from": "star_rag.code_tables.PAPER_VS_CODE",
        }
        for step, paper, code, evidence, kit in PAPER_VS_CODE
    ]


# ---------------------------------------------------------------------------------------------------
# the decomposition

SEMANTIC, ALG1, RELEASED = "semantic top-10", "Alg. 1 as printed", "released code"
#: released-code rows: label → the switches that differ from the released code (intended behaviour)
RELEASED_ROWS = {
    RELEASED: {},
    "released code, no PPR (rule graph off)": {"ppr": False},
    "released code, no temporal filters": {"time_filter": False},
    "released code, no time-nearest neighbours": {"neighbours": 0},
    "released code, no grouping": {"grouping": False},
    "released code, anchors only (no PPR, neighbours, grouping)": {
        "ppr": False,
        "neighbours": 0,
        "grouping": False,
    },
    "released code as it runs (both bugs)": {"pool": "anchors+rules", "pairing": "released"},
}


def decomposition_methods(star, released) -> dict:
    """The table's rows as retrievers: semantic search (= STAR-RAG-no-rule), Alg. 1 (``star``) and the
    released code (``released``, intended behaviour) with one step switched off per row."""
    rows = {SEMANTIC: star.variant(use_rules=False), ALG1: star}
    for label, changes in RELEASED_ROWS.items():
        rows[label] = released.variant(label=label, **changes)
    return rows


def decomposition_retrievals(
    methods: Mapping, questions: Sequence, q_vecs: np.ndarray, known: Mapping[str, Retrieval] | None = None
) -> dict[str, Retrieval]:
    """Every row's retrieval on ``questions``; ``known`` rows (semantic, Alg. 1: already retrieved for the
    earlier sections) are reused, not recomputed."""
    known = dict(known or {})
    return {
        name: known[name] if name in known else m.retrieve(questions, q_vecs=q_vecs)
        for name, m in methods.items()
    }


def shown_recall(kg, method, retrieval: Retrieval, questions: Sequence) -> np.ndarray:
    """Per question 0/1: a gold answer is among the subjects, objects or dates the reader is shown."""
    shown = getattr(method, "shown_tuples", None)
    out = np.zeros(len(questions))
    for i, (q, ids) in enumerate(zip(questions, retrieval.ids)):
        s, o, first, last = shown(ids) if shown else (kg.s[ids], kg.o[ids], kg.t_start[ids], kg.t_end[ids])
        out[i] = evaluate.answer_tuple_mask(kg, s, o, first, last, q.answers, q.answer_type).any()
    return out


def decomposition(
    methods: Mapping,
    retrievals: Mapping[str, Retrieval],
    questions: Sequence,
    *,
    llm=None,
    reader_questions: Sequence = (),
    n_read: int = 0,
    seed: int = 0,
) -> tuple[pd.DataFrame, dict]:
    """One row per retriever: events and prompt tokens (cl100k) per question, answer recall of what the
    reader is shown overall / Single / Multiple / per qtype (LLM-free, every question), and — with an
    ``llm`` and ``n_read`` > 0 — strict Hit@1 on a seeded sample of ``reader_questions``.  Returns the
    table and the numbers :func:`.record.decomposition` records (``decomposition/<row>/...`` with every
    category, and the released code's traces)."""
    kg = next(iter(methods.values())).kg
    sample, rows_of_sample = _reader_sample(questions, reader_questions, n_read, seed)
    reader = getattr(llm, "model_name", "") if llm is not None and sample else ""
    rows, numbers = [], {"questions": len(questions), "reader": reader, "n_read": len(sample), "rows": {}}
    for name, method in methods.items():
        retrieval = retrievals[name]
        recall = shown_recall(kg, method, retrieval, questions)
        by = evaluate.breakdown(questions, recall, by=["qlabel", "qtype"], seed=seed, ci=False)
        means = dict(zip(by.category, by["mean"]))
        tokens = float(
            np.mean([prompt_tokens(method.prompt(q, ids)) for q, ids in zip(questions, retrieval.ids)])
        )
        categories = [c for c in ("Single", "Multiple") if c in means]
        categories += sorted(by.category[by.group == "qtype"])
        row = {
            "retrieval": name,
            "events shown": float(np.mean(retrieval.sizes())),
            "prompt tokens (cl100k)": tokens,
            "answer recall": means["all"],
            **{f"recall {c}": means[c] for c in categories},
        }
        numbers["rows"][name] = {"answer_recall": means["all"], "recall_by": means, "prompt_tokens": tokens}
        if reader:
            shown = retrieval.select(rows_of_sample)
            reads = method.read(llm, sample, shown, progress=len(sample) > 20, desc=f"reader: {name}")
            hits = evaluate.hits_by_category(
                sample, [r.answers for r in reads], [r.error is not None for r in reads]
            )
            row.update({"reader": reader, "n read": hits["answered"]["Overall"]})
            row.update(
                {
                    f"Hit@1{'' if g == 'Overall' else ' ' + g}": hits["strict"][g]
                    for g in ("Overall", "Single", "Multiple")
                }
            )
            numbers["rows"][name]["hits@1_by"] = hits["strict"]
        rows.append(row)
        if name == RELEASED and retrieval.traces is not None:
            traces = zip(questions, retrieval.traces)
            numbers["released_code"] = [{"quid": q.quid, **trace} for q, trace in traces]
    return pd.DataFrame(rows), numbers


def _reader_sample(questions, reader_questions, n: int, seed: int):
    """A seeded sample of ``n`` reader questions and their positions in ``questions``."""
    if n <= 0 or not reader_questions:
        return [], []
    positions = positions_in(questions, reader_questions)
    chosen = sorted(
        np.random.default_rng(seed + 3).choice(len(positions), min(n, len(positions)), replace=False)
    )
    return [reader_questions[i] for i in chosen], [positions[i] for i in chosen]
