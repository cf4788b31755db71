"""Beyond the paper, without an LLM: the paper-faithful variant and the kit's improved one side by side.

Everything here is LLM-free and cheap on the 954 shared questions: parser accuracy by class, subgraph
recall and size, answer recall of what the reader sees (~20 facts), per question type, the failure classes
of the unseen-question audit counted before and after, and the held-out check of the one tuned rule (the
relation union's m and margin): 5-fold and leave-one-type-out over the questions given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from temporag.answer import evaluate
from temporag.linking import date_word_mask, tokenize, top_relations
from temporag.methods.tecqa.analysis import main_entity_supported, relation_supported
from temporag.methods.tecqa.chain import EvidenceChain
from temporag.methods.tecqa.tables import CHAIN_LENGTH, CHAIN_RECALL, SUBGRAPH_RECALL
from temporag.question.parsing import Constraints, subgraph

#: (m, margin, whole-phrase relation) settings the held-out check chooses among
RELATION_GRID = tuple(
    (m, margin, whole)
    for whole in (False, True)
    for m, margin in [(1, 0.0)] + [(m, g) for m in (2, 3, 4) for g in (0.05, 0.1, 0.2, 1.0)]
)
#: (alternatives, cosine margin) settings of an uncertain main mention the held-out check chooses among
ENTITY_GRID = ((0, 0.0),) + tuple((a, g) for a in (1, 2, 3) for g in (0.02, 0.05, 0.1, 0.2, 0.3))
FIRST_LAST_TYPES = ("first_last", "after_first", "before_last")  # questions asking for a first / last


@dataclasses.dataclass
class Variant:
    """One row of the comparison: a parse, the chains built on it and how many facts the reader sees."""

    constraints: Sequence[Constraints]
    chains: Sequence[EvidenceChain]
    shown: int | None = 20  # facts of each chain shown to the reader (None: the whole chain)

    def shown_facts(self) -> list[np.ndarray]:
        return [c.facts[: self.shown] if self.shown else c.facts for c in self.chains]


def _per_question(kg, questions: Sequence, v: Variant) -> dict[str, np.ndarray]:
    pairs = list(zip(questions, v.constraints))
    return {
        "main_entity_acc": np.array(
            [main_entity_supported(kg, c, q.answers, q.answer_type) for q, c in pairs]
        ),
        "relation_acc": np.array([relation_supported(kg, c, q.answers, q.answer_type) for q, c in pairs]),
        "subgraph_recall": evaluate.answer_recall(kg, [c.subgraph for c in v.chains], questions),
        "subgraph_size": np.array([len(c.subgraph) for c in v.chains], dtype=float),
        "chain_recall": evaluate.answer_recall(kg, v.shown_facts(), questions),
        "chain_facts": np.array([len(f) for f in v.shown_facts()], dtype=float),
    }


def comparison_table(kg, questions: Sequence, variants: Mapping[str, Variant]):
    """The paper's numbers, then one row per variant: parser accuracy, subgraph recall and size, answer
    recall and length of what the reader sees."""
    rows = [
        {
            "variant": "paper (Gemini parser, K=40, N=2)",
            "subgraph_recall": SUBGRAPH_RECALL.value(),
            "chain_recall": CHAIN_RECALL.value(),
            "chain_facts": CHAIN_LENGTH.value(),
        }
    ]
    for name, v in variants.items():
        per = _per_question(kg, questions, v)
        rows.append(
            {
                "variant": name,
                "n": len(questions),
                **{k: float(per[k].mean()) for k in ("main_entity_acc", "relation_acc", "subgraph_recall")},
                "subgraph_size_mean": float(per["subgraph_size"].mean()),
                "subgraph_size_median": float(np.median(per["subgraph_size"])),
                "chain_recall": float(per["chain_recall"].mean()),
                "chain_facts": float(per["chain_facts"].mean()),
            }
        )
    return pd.DataFrame(rows)


def by_qtype_table(kg, questions: Sequence, variants: Mapping[str, Variant]):
    """Per question type: subgraph recall, chain recall and chain length of every variant."""
    qtypes = np.array([q.qtype for q in questions])
    rows = []
    for name, v in variants.items():
        per = _per_question(kg, questions, v)
        for t in sorted(set(qtypes)):
            m = qtypes == t
            rows.append(
                {
                    "qtype": t,
                    "variant": name,
                    "n": int(m.sum()),
                    **{
                        k: float(per[k][m].mean())
                        for k in (
                            "main_entity_acc",
                            "relation_acc",
                            "subgraph_recall",
                            "chain_recall",
                            "chain_facts",
                        )
                    },
                }
            )
    return pd.DataFrame(rows)


def date_token_linked(question: str, constraints: Constraints) -> bool:
    """A mention of the parse contains a date word of the question (a month linked as an entity); an
    exact KG name that holds one ("Theresa May") is a name, not a date."""
    tokens = tokenize(question)
    dates = [t for t, d in zip(tokens, date_word_mask(tokens)) if d and not t.norm.isdigit()]
    methods = constraints.raw.get("mention_methods") or ["?"] * len(constraints.entity_mentions)
    mentions = [m for m, how in zip(constraints.entity_mentions, methods) if how != "exact"]
    return any(m.lower() == t.text.lower() or t.text in m.split() for t in dates for m in mentions)


def failure_classes(kg, questions: Sequence, v: Variant) -> dict[str, int]:
    """The audit's failure classes counted on one variant (questions, not facts)."""
    per = _per_question(kg, questions, v)
    fl = np.array([q.qtype in FIRST_LAST_TYPES for q in questions])
    return {
        "date word linked as an entity": int(
            sum(date_token_linked(q.question, c) for q, c in zip(questions, v.constraints))
        ),
        "wrong main entity (incl. role phrases, names)": int((~per["main_entity_acc"]).sum()),
        "relation grounded to a neighbour (main entity right)": int(
            (per["main_entity_acc"] & ~per["relation_acc"]).sum()
        ),
        "first/last: answer in subgraph, not in the shown chain": int(
            (fl & (per["subgraph_recall"] > 0) & (per["chain_recall"] == 0)).sum()
        ),
        "other: answer in subgraph, not in the shown chain": int(
            (~fl & (per["subgraph_recall"] > 0) & (per["chain_recall"] == 0)).sum()
        ),
    }


def failure_class_table(kg, questions: Sequence, variants: Mapping[str, Variant]):
    counts = {name: failure_classes(kg, questions, v) for name, v in variants.items()}
    return pd.DataFrame(counts).rename_axis("failure class").reset_index()


def with_relation_union(kg, c: Constraints, m: int, margin: float, whole: bool) -> Constraints:
    """A parse's relation set re-chosen from its recorded candidates (no re-embedding)."""
    row = np.full(len(kg.relation_labels), -np.inf, dtype=np.float32)
    for r, score in c.raw.get("relation_candidates", []):
        row[r] = score
    if not np.isfinite(row).any():
        return c
    rels = top_relations(row, m, margin)
    extra = c.raw.get("relation_whole_phrase")
    if whole and extra is not None and extra not in rels:
        rels.append(int(extra))
    return dataclasses.replace(c, relations=tuple(rels))


def _held_out_choice(
    questions: Sequence, grid: Sequence[tuple], recall: dict, size: dict, folds: int, seed: int
):
    """For each split (k folds, then each question type held out) the grid setting with the smallest mean
    subgraph reaching 99% answer recall on the other questions (else the highest recall), scored on the
    held-out ones: (split name, n held out, setting, held-out recall, held-out mean size) rows."""

    def choose(idx):
        ok = [p for p in grid if recall[p][idx].mean() >= 0.99]
        if ok:
            return min(ok, key=lambda p: size[p][idx].mean())
        return max(grid, key=lambda p: (recall[p][idx].mean(), -size[p][idx].mean()))

    n = len(questions)
    fold_of = np.random.default_rng(seed).permutation(n) % folds
    qtypes = np.array([q.qtype for q in questions])
    splits = [(f"fold {f + 1} of {folds}", fold_of == f) for f in range(folds)]
    splits += [(f"held-out type {t}", qtypes == t) for t in sorted(set(qtypes))]
    rows = []
    for name, test in splits:
        p = choose(np.flatnonzero(~test))
        rows.append((name, int(test.sum()), p, float(recall[p][test].mean()), float(size[p][test].mean())))
    return rows


def _scores(kg, questions: Sequence, parses: Mapping[tuple, Sequence[Constraints]]):
    recall, size = {}, {}
    for p, constraints in parses.items():
        subs = [subgraph(kg, c) for c in constraints]
        recall[p] = evaluate.answer_recall(kg, subs, questions)
        size[p] = np.array([len(s) for s in subs], dtype=float)
    return recall, size


def _check_frames(questions, grid, names, recall, size, folds, seed):
    rows = [
        {
            "held out": name,
            "n": n,
            **dict(zip(names, p)),
            "held-out subgraph recall": r,
            "held-out mean size": z,
        }
        for name, n, p, r, z in _held_out_choice(questions, grid, recall, size, folds, seed)
    ]
    table = pd.DataFrame(
        [
            {
                **dict(zip(names, p)),
                "subgraph_recall": float(recall[p].mean()),
                "mean_size": float(size[p].mean()),
            }
            for p in grid
        ]
    )
    return table, pd.DataFrame(rows)


def relation_union_check(
    kg, questions: Sequence, constraints: Sequence[Constraints], folds: int = 5, seed: int = 0
):
    """Held-out choice of (m, margin, whole phrase): on the training part pick the smallest mean subgraph
    reaching 99% answer recall (else the highest recall), score it on the held-out part.  Returns the
    grid (recall, size on every question) and the 5-fold and leave-one-type-out results."""
    parses = {p: [with_relation_union(kg, c, *p) for c in constraints] for p in RELATION_GRID}
    recall, size = _scores(kg, questions, parses)
    return _check_frames(questions, RELATION_GRID, ("m", "margin", "whole phrase"), recall, size, folds, seed)


def main_alternatives_check(kg, questions: Sequence, parser, folds: int = 5, seed: int = 0):
    """Held-out choice of the main entity's alternatives (how many, within which cosine margin), the
    parser's other switches fixed: the questions are linked once and re-parsed per setting; the choice
    rule and the splits are those of :func:`relation_union_check`."""
    texts = [q.question for q in questions]
    mentions = parser.linker.link_many(texts)
    parses = {
        p: parser.parse_linked(texts, mentions, main_alternatives=p[0], main_margin=p[1]) for p in ENTITY_GRID
    }
    recall, size = _scores(kg, questions, parses)
    return _check_frames(questions, ENTITY_GRID, ("alternatives", "margin"), recall, size, folds, seed)
