"""The numbers behind the TECQA notebook's tables, computed from what a cell already has, one call per
table or figure: parser accuracy and its error census, subgraph and chain recall, Fig. 2's recall@20,
Fig. 5's integrity, the reader's contexts and scores, latency and the per-question predictions.

The step modules (:mod:`.analysis`, :mod:`.census`, :mod:`.beyond`) hold TECQA's own metrics; :mod:`.report`
draws and formats what these return and :mod:`.record` writes it into the run's results (the table under
its key with its caption, the metrics beside the paper's numbers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.methods.base import Retrieval
from temporag.methods.tecqa.analysis import integrity, parser_accuracy
from temporag.methods.tecqa.census import census_counts, error_census
from temporag.methods.tecqa.chain import EvidenceChain
from temporag.methods.tecqa.tables import CASES, CHAIN_LENGTH, VARIANTS
from temporag.question.parsing import Constraints

# -- parser accuracy (§4.2.1) ---------------------------------------------------------------------------

PARSER_LABELS = {
    "offline": "offline (KG-attested relation)",
    "offline_names_only": "offline (relation over all 251 names)",
    "llm": "LLM, 3 prompts ({reader})",
}


def parser_accuracy_table(
    kg,
    questions: Sequence,
    parses: Mapping[str, Sequence[Constraints]],
    sample_questions: Sequence = (),
    sample_parses: Mapping[str, Sequence[Constraints]] | None = None,
    reader: str = "",
):
    """Parser accuracy of each parse (key in :data:`PARSER_LABELS` → constraints) on the selected set,
    then of each parse of the smaller LLM-parse sample (recorded by :func:`.record.parser_accuracy` as
    ``parser/<key>/...``, ``parser/<key>_parse_sample/...`` for the sample)."""
    runs = [(key, "selected set", questions, c) for key, c in parses.items()]
    if len(sample_questions):
        runs += [(key, "parse sample", sample_questions, c) for key, c in (sample_parses or {}).items()]
    rows = []
    for key, question_set, qs, constraints in runs:
        row = {"parser": PARSER_LABELS[key].format(reader=reader), "questions": question_set}
        row.update(parser_accuracy(kg, qs, constraints))
        rows.append(row)
    return pd.DataFrame(rows)


def parser_error_census(
    kg, questions: Sequence, constraints: Sequence[Constraints], linker
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every wrong main entity and relation of the run's questions, classed (:mod:`.census`): one row
    per question, and the questions per class."""
    census = error_census(kg, linker, questions, constraints)
    return census, census_counts(census, len(questions))


# -- subgraph and chain (§4.2.2–4.3), Figures 2 and 4 ---------------------------------------------------


def _ci(values: np.ndarray, seed: int) -> list[float]:
    return list(evaluate.bootstrap_ci(values, seed=seed))


def subgraph_numbers(chains: Sequence[EvidenceChain], recall: np.ndarray, seed: int = 0) -> dict:
    """The subgraph's answer recall (with its bootstrap interval), its empty rate and size summary."""
    sizes = np.array([len(c.subgraph) for c in chains])
    return {
        "answer_recall": recall.mean(),
        "n": len(recall),
        "ci95": _ci(recall, seed),
        "empty_rate": float((sizes == 0).mean()),
        "chains": len(sizes),
        "size_median": float(np.median(sizes)),
        "size_mean": float(sizes.mean()),
    }


def chain_numbers(chains: Sequence[EvidenceChain], recall: np.ndarray, seed: int = 0) -> dict:
    """The chain's answer recall (with its bootstrap interval) and its mean length in facts."""
    lengths = np.array([len(c) for c in chains])
    return {
        "answer_recall": recall.mean(),
        "n": len(recall),
        "ci95": _ci(recall, seed),
        "avg_facts": lengths.mean(),
        "chains": len(lengths),
    }


def chain_answer_recall(questions: Sequence, recall: np.ndarray, seed: int = 0) -> pd.DataFrame:
    """The chain's answer recall by question label and type, so a loss shows where it happens."""
    return evaluate.breakdown(questions, recall, by=["qlabel", "qtype"], seed=seed)


def closest_to_paper_length(grid, n: int):
    """The grid row at the run's N whose average chain length is nearest the paper's ~20 facts."""
    at_n = grid[grid.N == n]
    target = CHAIN_LENGTH.value() or 20
    return at_n.iloc[(at_n.avg_context_facts - target).abs().argsort()[:1]].iloc[0]


# -- reasoning: Tables 1 and 2 (§4.4, §5.3, §5.5) ------------------------------------------------------


def reader_scores(questions: Sequence, answers: Mapping[str, Sequence]) -> dict[str, dict]:
    """Hits@1 by Table-1 column of each variant's reads; a failed call is left out, not counted wrong."""
    return {
        name: evaluate.hits_by_category(
            questions,
            [read.answers for read in reads],
            failed=[read.error is not None for read in reads],
        )
        for name, reads in answers.items()
    }


def shown_answer_recall(
    kg, questions: Sequence, chains: Mapping[str, Sequence[EvidenceChain]], facts_shown: int | None
) -> dict[str, np.ndarray]:
    """Per variant and question: does the part of the chain the reader is shown hold a gold answer."""
    return {
        name: evaluate.answer_recall(kg, [chain.facts for chain in variant], questions, k=facts_shown)
        for name, variant in chains.items()
    }


# -- speed (appendix E) -----------------------------------------------------------------------------------


def latency(tecqa_seconds: np.ndarray, semantic_seconds: np.ndarray) -> pd.DataFrame:
    """Retrieval latency per question of TECQA and of the global semantic baseline (p50 / p95 / mean ms)."""
    return latency_table(
        {
            "TECQA (subgraph + anchors + KNTN + serialisation)": tecqa_seconds,
            "global semantic (all 461,329 facts)": semantic_seconds,
        }
    )


def reader_contexts(
    chains: Mapping[str, Sequence[EvidenceChain]], index: Sequence[int], facts: int | None, seed: int = 0
) -> dict[str, Retrieval]:
    """What the reader sees for Table 2's variants: the first ``facts`` facts of each chain of the reader
    questions (``index``); w/o PS is TECQA's shown facts in a seeded random order (appendix C).

    ``chains`` maps "TECQA", "w/o SG" and "w/o KNTN" to every question's chains."""
    rng = np.random.default_rng(seed)
    zero = np.zeros(len(index))

    def shown(chain: EvidenceChain) -> np.ndarray:
        return chain.facts[:facts] if facts else chain.facts

    out = {name: Retrieval([shown(chains[name][i]) for i in index], zero) for name in VARIANTS[:3]}
    out["w/o PS"] = Retrieval([rng.permutation(shown(chains["TECQA"][i])) for i in index], zero)
    return out


def case_questions(questions: Sequence, fallback: Sequence) -> list[tuple[str, object]]:
    """(table, question record) for the paper's worked examples found in ``questions``; the first of
    ``fallback`` (as "Table 5") when neither is there."""
    found = [(table, q) for table, (_, text) in CASES.items() for q in questions if q.question == text]
    return found or [("Table 5", fallback[0])]


def case_prediction(question, chain: EvidenceChain) -> dict:
    """A worked example's prediction row: the question and its chain's record (:func:`.record.case`
    records its subgraph size beside the paper's and its anchors)."""
    return {"quid": question.quid, "question": question.question, **chain.record()}


def latency_table(latencies: Mapping[str, np.ndarray]):
    """Retrieval latency per question of each retriever (evaluate.latency_summary, milliseconds)."""
    return pd.DataFrame([{"retriever": name, **evaluate.latency_summary(s)} for name, s in latencies.items()])


def chain_predictions(
    kg, questions: Sequence, chains: Sequence[EvidenceChain], recalls: Mapping, latency, semantic_ids, k: int
):
    """Per question for ``results.json``: the parse, anchors and chain ids, subgraph / chain recall,
    retrieval seconds and the semantic baseline's top ``k`` (``recalls``: "subgraph", "chain")."""
    return [
        {
            "quid": q.quid,
            "qtype": q.qtype,
            **c.constraints.describe(kg),
            **c.record(),
            "subgraph_recall": float(recalls["subgraph"][i]),
            "chain_recall": float(recalls["chain"][i]),
            "retrieval_s": float(latency[i]),
            "semantic_top": np.asarray(semantic_ids[i][:k]).tolist(),
        }
        for i, (q, c) in enumerate(zip(questions, chains))
    ]


def reader_predictions(
    questions: Sequence, answers: Mapping[str, Sequence], contexts: Mapping[str, Retrieval]
):
    """Per variant and question: the reader's answers, raw reply, error and the facts it was shown."""
    return [
        {
            "quid": q.quid,
            "variant": name,
            "answers": r.answers,
            "raw": r.raw_text,
            "error": r.error,
            "facts": ids.tolist(),
        }
        for name, results in answers.items()
        for q, r, ids in zip(questions, results, contexts[name].ids)
    ]


def recall_at_20_table(kg, questions: Sequence, semantic_ids, chain_ids, seed: int = 0):
    """Answer recall@20 per question type and overall: global semantic retrieval vs the TECQA chain."""
    names = {"semantic@20": semantic_ids, "TECQA@20": chain_ids}
    _, table = evaluate.recall_by_category(kg, questions, names, k=20, seed=seed)
    pivot = evaluate.pivot_by_category(table, list(names))
    by_type = pivot[pivot.group == "qtype"]
    overall = pivot[pivot.group == "overall"].assign(category="overall")
    frame = pd.concat([by_type, overall], ignore_index=True)
    return frame[["category", *names, "n"]]


def integrity_per_question(
    kg, questions: Sequence, contexts: Mapping[str, Sequence], references: Sequence[Constraints]
) -> dict[str, dict[str, np.ndarray]]:
    """Fig. 5's per-question answer / anchor / chain recall of each context, computed once: the figure's
    table (:func:`integrity_table`) and the claims (``claims.outcomes``) both read it."""
    return {name: integrity(kg, questions, facts, references) for name, facts in contexts.items()}


def integrity_table(
    questions: Sequence, contexts: Mapping[str, Sequence], per_question: Mapping[str, dict[str, np.ndarray]]
):
    """Fig. 5's numbers: per context and Single / Multiple group, answer recall over all questions and
    anchor / chain recall over the questions that have a reference anchor."""
    labels = np.array([q.qlabel for q in questions])
    rows = []
    for name, facts in contexts.items():
        res = per_question[name]
        for group in ("Multiple", "Single"):
            members = labels == group
            with_anchor = members & ~np.isnan(res["anchor"])
            rows.append(
                {
                    "method": name,
                    "group": group,
                    "answer_recall": res["answer"][members].mean(),
                    "anchor_recall": np.nanmean(res["anchor"][with_anchor]) if with_anchor.any() else np.nan,
                    "chain_recall": np.nanmean(res["chain"][with_anchor]) if with_anchor.any() else np.nan,
                    "avg_facts": float(np.mean([len(f) for f, keep in zip(facts, members) if keep])),
                    "n": int(members.sum()),
                    "n_with_anchor": int(with_anchor.sum()),
                }
            )
    return pd.DataFrame(rows)
