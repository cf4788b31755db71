"""TimeR4's tables and figures: Fig. 4 (Venn grid), Table 3, Table 5, Fig. 3, retriever recall before and
after fine-tuning, the paper-vs-released-code table, and a re-score of the released outputs.

Every function takes what the notebook computed (rankings, reader results) and returns a frame or a
figure; nothing here retrieves or calls an LLM.
"""

from __future__ import annotations

import ast
import json
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from temporag import evaluate, plots
from temporag.evaluate import LENIENT, STRICT, answer_fact_mask, lenient_hit, strict_hit, table1_masks
from temporag.readers import parse_ranked_answers

QTYPE_ORDER = ("equal", "before_after", "first_last", "equal_multi", "after_first", "before_last")
WHOLE = "lenient over the whole output (TimeR4's predict_answer.py: a gold is a substring of the reply)"
RULE_NAMES = {"strict": STRICT, "lenient": LENIENT, "whole": WHOLE}
COLUMNS = evaluate.TABLE1_GROUPS
VENN_LABELS = ("A: Fact Retriever", "B: Time-aware Retriever", "C: Ground truth")
VENN_NOTE = (
    "Elements are (question, gold answer) pairs of one question type. C: every gold answer. A: the gold "
    "answers that the fact retriever's top-{k} facts contain (an entity as subject or object, a time as "
    "a fact date inside the answer's day, month or year). B: the same for the time-aware retriever "
    "(rewritten question, fine-tuned model, rerank). A and B lie inside C; C alone = answers neither "
    "retriever brings."
)


# ----------------------------------------------------------------------------------------------------
# Figure 4


def coverage_sets(
    kg, questions: Sequence, ranked_a, ranked_b, k: int = 15
) -> dict[str, tuple[set, set, set]]:
    """Per question type: (A, B, C) as sets of (quid, gold answer) — see :data:`VENN_NOTE`."""
    out: dict[str, tuple[set, set, set]] = {}
    for q, a_ids, b_ids in zip(questions, ranked_a, ranked_b, strict=True):
        a_set, b_set, c_set = out.setdefault(q.qtype, (set(), set(), set()))
        for gold in q.answers:
            c_set.add((q.quid, gold))
            if answer_fact_mask(kg, np.asarray(a_ids)[:k], [gold], q.answer_type).any():
                a_set.add((q.quid, gold))
            if answer_fact_mask(kg, np.asarray(b_ids)[:k], [gold], q.answer_type).any():
                b_set.add((q.quid, gold))
    return out


def venn_counts(a: set, b: set, c: set) -> dict[str, int]:
    """The seven region sizes in matplotlib-venn's order (100, 010, 110, 001, 101, 011, 111)."""
    return {
        "100": len(a - b - c),
        "010": len(b - a - c),
        "110": len((a & b) - c),
        "001": len(c - a - b),
        "101": len((a & c) - b),
        "011": len((b & c) - a),
        "111": len(a & b & c),
    }


VENN_COLORS = ("#1f77b4", "#ff7f0e", "#bbbbbb")


def venn_grid(sets: dict[str, tuple[set, set, set]], k: int = 15, note: str = ""):
    """Figure 4: three-set Venns (A fact retriever, B time-aware retriever, C ground truth) in a 2 × 3
    grid, one per MultiTQ question type, with the set definitions written under the figure.  The
    circles are area-proportional (matplotlib-venn); the set names go in one legend, not on each
    circle, so empty or coinciding sets do not stack labels."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib_venn import venn3, venn3_circles, venn3_unweighted

    plots.use_house_style()
    fig, axes = plt.subplots(2, 3, figsize=(12, 7.8))
    for ax, qtype in zip(axes.flat, QTYPE_ORDER):
        ax.grid(False)
        if qtype not in sets:
            ax.set_axis_off()
            ax.set_title(f"{qtype} (no questions)")
            continue
        a, b, c = sets[qtype]
        counts = venn_counts(a, b, c)
        subsets = tuple(counts[key] for key in ("100", "010", "110", "001", "101", "011", "111"))
        labels = ("", "", "")
        with warnings.catch_warnings():  # an empty set is a zero-area circle: expected, not a problem
            warnings.simplefilter("ignore", UserWarning)
            try:
                venn3(subsets=subsets, set_labels=labels, ax=ax, set_colors=VENN_COLORS, alpha=0.45)
                venn3_circles(subsets=subsets, ax=ax, linewidth=0.6, color="#555555")
            except Exception:  # noqa: BLE001 - degenerate sizes: equal areas instead, numbers stay exact
                venn3_unweighted(
                    subsets=subsets, set_labels=labels, ax=ax, set_colors=VENN_COLORS, alpha=0.45
                )
        ax.set_title(
            f"{qtype}\n{len(c)} gold answers · A {len(a)} · B {len(b)} · A∩B {len(a & b)}", fontsize=9
        )
    handles = [Patch(facecolor=col, alpha=0.45, label=lab) for col, lab in zip(VENN_COLORS, VENN_LABELS)]
    fig.legend(handles=handles, loc="upper center", ncols=3, bbox_to_anchor=(0.5, 0.955), frameon=False)
    fig.suptitle(
        "Fig. 4 · Answer coverage of the fact retriever, the time-aware retriever and the ground truth "
        f"(top {k})"
    )
    fig.tight_layout(rect=(0, 0.08, 1, 0.93))
    fig.text(
        0.01,
        0.01,
        _wrap(VENN_NOTE.format(k=k) + (" " + note if note else ""), 190),
        fontsize=7.5,
        color="#333333",
        ha="left",
        va="bottom",
    )
    return fig


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def venn_table(sets: dict[str, tuple[set, set, set]]):
    """The Venn regions as numbers: gold answers, covered by A, by B, by both, by only one, by neither."""
    import pandas as pd

    rows = []
    for qtype in QTYPE_ORDER:
        if qtype not in sets:
            continue
        a, b, c = sets[qtype]
        rows.append(
            {
                "qtype": qtype,
                "gold answers": len(c),
                "A (fact retriever)": len(a),
                "B (time-aware)": len(b),
                "A∩B": len(a & b),
                "A only": len(a - b),
                "B only": len(b - a),
                "neither": len(c - a - b),
            }
        )
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------
# reader scores (Table 3, Table 5, Fig. 3)


def whole_output_hits(questions: Sequence, outputs: Sequence[str]) -> np.ndarray:
    """TimeR4's Hit: some gold is a substring of the whole normalised reply (evaluate.lenient_hit)."""
    return np.array(
        [lenient_hit(str(o), q.answers) for q, o in zip(questions, outputs, strict=True)], dtype=float
    )


def reader_scores(questions: Sequence, results) -> dict:
    """Hits@1 by Table-3 column under the strict, lenient (first answer) and whole-output rules, with n,
    answered and failed (a failed call is left out of the means, never scored as wrong)."""
    answers = [r.answers for r in results]
    failed = np.array([r.error is not None for r in results], dtype=bool)
    out = evaluate.hits_by_category(questions, answers, failed)
    whole = whole_output_hits(questions, [r.raw_text for r in results])
    out["whole"] = {
        g: (float(whole[m & ~failed].mean()) if (m & ~failed).any() else float("nan"))
        for g, m in table1_masks(questions).items()
    }
    listed = [len(a) for a, bad in zip(answers, failed) if not bad]
    out["listed"] = float(np.mean(listed)) if listed else float("nan")  # the whole rule rewards long lists
    return out


def table3_rows(scores: dict, reader: str, paper_row: dict) -> list[dict]:
    """Rows of Table 3: the kit under the three rules beside the paper (which used the whole-output rule)."""
    rows = [
        {
            "model": f"TimeR4 — kit, reader {reader}",
            "rule": rule,
            **{c: scores[rule][c] for c in COLUMNS},
            "answers listed (mean)": scores["listed"],
        }
        for rule in ("strict", "lenient", "whole")
    ]
    rows.append(
        {
            "model": "TimeR4 — paper, LLaMA2-Chat-7B fine-tuned",
            "rule": "whole",
            **paper_row,
            "answers listed (mean)": None,
        }
    )
    return rows


def record_table3(results, scores: dict, reader: str):
    """Table 3 rows recorded in ``results`` (every cell under every rule; the paper's number beside the
    whole-output rule, which is the rule it was computed with) and returned as a frame."""
    import pandas as pd

    from temporag.reported import PaperRef

    refs = {c: PaperRef("timer4", "Table 3", "TimeR4", c) for c in COLUMNS}
    for rule in ("strict", "lenient", "whole"):
        for c in COLUMNS:
            results.compare(
                f"table3/{rule}/{c}",
                scores[rule][c],
                refs[c] if rule == "whole" else None,
                n=scores["answered"][c],
                reader=reader,
                rule=RULE_NAMES[rule],
            )
    results.metric(
        "table3/answers_listed_mean", scores["listed"], reader=reader, n=scores["answered"]["Overall"]
    )
    return pd.DataFrame(table3_rows(scores, reader, {c: refs[c].value() for c in COLUMNS}))


def record_table5(results, scores: dict, recall15: dict, reader: str):
    """Table 5: reader Hits@1 (three rules) and answer recall@15 per variant, recorded and returned."""
    import pandas as pd

    from temporag.reported import PaperRef

    rows = []
    for name, sc in scores.items():
        ref = PaperRef("timer4", "Table 5", name, "Hit@1")
        results.compare(
            f"table5/{name}/hits@1_whole",
            sc["whole"]["Overall"],
            ref,
            n=sc["answered"]["Overall"],
            reader=reader,
            rule=WHOLE,
        )
        results.metric(f"table5/{name}/hits@1_strict", sc["strict"]["Overall"], reader=reader)
        results.metric(f"table5/{name}/recall@15", float(recall15[name].mean()), n=len(recall15[name]))
        rows.append(
            {
                "variant": name,
                **{f"Hits@1 {r}": sc[r]["Overall"] for r in ("strict", "lenient", "whole")},
                "paper Hit@1": ref.value(),
                "answer recall@15 (all questions)": float(recall15[name].mean()),
            }
        )
    return pd.DataFrame(rows)


def headline(
    overall, trained, table3: dict, table5: dict, effects: dict, tks_latency, reader: str, n_reader: int
):
    """The closing table: each kit number with the paper's where the paper prints one."""
    import pandas as pd

    from temporag.reported import PaperRef

    def paper(source, row, column):
        value = PaperRef("timer4", source, row, column).value()
        return "—" if value is None else f"{value:.4f}"

    rows = [
        (
            "retriever answer recall@15: base → fine-tuned (→ with rerank)",
            f"{overall['base model (before)']:.3f} → {overall['fine-tuned (after)']:.3f} "
            f"(→ {overall['fine-tuned + rerank']:.3f})",
            "—",
        ),
        (
            "time-aware retriever training: pairs / seconds",
            f"{trained.pairs:,} / {trained.seconds:.0f}",
            "MultiTQ train (~100k questions), 10 epochs, GPU",
        ),
    ]
    for rule in ("whole", "strict", "lenient"):
        rows.append(
            (
                f"Table 3 Overall Hits@1, {rule} rule ({reader}, n={n_reader})",
                f"{table3[rule]['Overall']:.3f}",
                paper("Table 3", "TimeR4", "Overall") if rule == "whole" else "—",
            )
        )
    for name, sc in table5.items():
        rows.append(
            (
                f"Table 5 {name}, whole rule (n={sc['answered']['Overall']})",
                f"{sc['whole']['Overall']:.3f}",
                paper("Table 5", name, "Hit@1"),
            )
        )
    for switch, text in effects.items():
        rows.append((f"released-code switch '{switch}': answer recall@15", text, "—"))
    rows.append(("time-aware retrieval p50 (ms)", f"{np.median(tks_latency) * 1e3:.1f}", "—"))
    return pd.DataFrame(rows, columns=["number", "kit", "paper"])


# ----------------------------------------------------------------------------------------------------
# retrieval recall


def recall_by_qtype(kg, questions: Sequence, ranked: dict[str, Sequence], k: int = 15):
    """Answer recall@k of several rankings: overall, Single / Multiple and per question type."""
    _, long = evaluate.recall_by_category(kg, questions, ranked, k)
    return evaluate.pivot_by_category(long, list(ranked))


def recall_bars(frame, methods: Sequence[str], title: str, note: str = ""):
    rows = frame[frame.group != "qlabel"]
    return plots.grouped_bars(
        rows.category.tolist(),
        {m: rows[m].tolist() for m in methods},
        title=title,
        ylabel="answer recall@15",
        note=note,
    )


# ----------------------------------------------------------------------------------------------------
# worked examples


def examples_frame(kg, examples, n: int = 6):
    """Training examples as a table: the question, its positive and the three negatives."""
    import pandas as pd

    from temporag.methods.timer4.store import date_text

    rows = []
    for e in examples[:n]:
        row = {"qtype": e.qtype, "question": e.question}
        for (f, _), kind in zip(
            e.facts(), ("positive", "time incorrect", "content incorrect", "both incorrect")
        ):
            row[kind] = f"{kg.triple_text(f.s, f.r, f.o)} {date_text(f.day)}"
        rows.append(row)
    return pd.DataFrame(rows)


def rerank_frame(kg, pool: np.ndarray, sims: np.ndarray, constraint, mu: float, rows: int = 10):
    """One question's candidates before and after Eq. 10: similarity, φ_t, final score, rank change."""
    import pandas as pd

    from temporag.methods.timer4.rerank import phi_t
    from temporag.methods.timer4.store import fact_text

    phi = phi_t(kg.t_start[pool], constraint)
    final = mu * np.asarray(sims, dtype=float) + (1 - mu) * phi
    new_rank = np.empty(len(pool), dtype=int)
    new_rank[np.lexsort((np.arange(len(final)), -final))] = np.arange(len(final))
    frame = pd.DataFrame(
        {
            "fact": [fact_text(kg, f) for f in pool],
            "similarity rank": np.arange(len(pool)) + 1,
            "φ_TKS": np.round(sims, 4),
            "φ_t (Eq. 9)": np.round(phi, 3),
            "φ (Eq. 10)": np.round(final, 4),
            "rank after rerank": new_rank + 1,
        }
    )
    return frame.sort_values("rank after rerank").head(rows).reset_index(drop=True)


def rewrite_frame(kg, rewrites, rows: int = 8):
    """Rewritten questions with the reference that was replaced and the fact the date came from."""
    import pandas as pd

    from temporag.methods.timer4.store import fact_text

    shown = [r for r in rewrites if r.changed][:rows]
    return pd.DataFrame(
        [
            {
                "question": r.question,
                "rewritten": r.rewritten,
                "reference": r.reference,
                "date from": fact_text(kg, r.source_fact) if r.source_fact is not None else "",
            }
            for r in shown
        ]
    )


def latency_table(named: dict[str, np.ndarray]):
    """p50 / p95 / mean milliseconds per stage (evaluate.latency_summary)."""
    import pandas as pd

    return pd.DataFrame([{"stage": k, **evaluate.latency_summary(v)} for k, v in named.items()])


def effect(kit: float, switched: float) -> str:
    """'0.650 → 0.612 (−0.038)': the kit's recall, the switch's, and the change."""
    return f"{kit:.3f} → {switched:.3f} ({switched - kit:+.3f})"


# ----------------------------------------------------------------------------------------------------
# paper vs released code vs kit

HEAD, DEC = "508cc02", "be4d382"
PAPER_VS_CODE: tuple[dict, ...] = (
    {
        "aspect": "Retriever backbone",
        "paper": "SentenceBERT (setup slide)",
        "released code": f"all-mpnet-base-v2 (fine_tuned_retriever.py:36; {DEC} main.py:84)",
        "kit": "all-MiniLM-L6-v2 (CPU)",
        "switch": None,
    },
    {
        "aspect": "Fine-tuning budget",
        "paper": "10 epochs (setup slide)",
        "released code": "2 epochs, batch 256 pairs, lr 5e-5, 1,000 warm-up steps "
        "(fine_tuned_retriever.py:52, :58)",
        "kit": "1 epoch, 32 questions (128 pairs) a step, lr 3e-5, top 2 of 6 layers trained",
        "switch": None,
    },
    {
        "aspect": "Retriever loss",
        "paper": "Eq. 8, weighted by w_p and w_n",
        "released code": "ContrastiveTensionLossInBatchNegatives(scale=1, dot product) "
        "(fine_tuned_retriever.py:54); the 0/1 labels set at :18 and :20 are replaced by the pair index "
        "inside the loss, so the hard negatives are trained as positives",
        "kit": "Eq. 8 with φ read as cosine distance (as printed it trains backwards); loss='code' switch",
        "switch": "code_loss",
    },
    {
        "aspect": "Time tokens",
        "paper": "—",
        "released code": "4,017 [Time_i] and 4 separator tokens added to the tokenizer "
        "(fine_tuned_retriever.py:38-43), never used by the fact texts",
        "kit": "none",
        "switch": None,
    },
    {
        "aspect": "Time-incorrect negative",
        "paper": "the positive with a wrong time",
        "released code": f"{DEC} construct_negatives.py:50-57: date ± 0–10 days, but a date object is tested "
        "against string keys, so it is always replaced by a random date; no negatives at all for questions "
        f"without before/after/first/last (:58-59). {HEAD} construct_negatives.py:105-122: the shifted date "
        "is kept only when it is not a known day, i.e. almost never for ICEWS",
        "kit": "a date outside the question's time window (a real date of the same triple when there is one)",
        "switch": None,
    },
    {
        "aspect": "Content-incorrect negative",
        "paper": "the positive with wrong content",
        "released code": f"random relation and random non-answer entity, subject kept ({DEC} "
        f"construct_negatives.py:64-69; {HEAD} :124-134)",
        "kit": "a real train-period triple of the question's entity with another relation and no gold answer",
        "switch": None,
    },
    {
        "aspect": "Training questions",
        "paper": "MultiTQ train, 80% dropped (~100k)",
        "released code": f"MultiTQ train; the positive is retrieved with the question plus its gold answers "
        f"({DEC} construct_negatives.py:100, :129-135); {HEAD} :175, :178 truncate to 100 facts / "
        "10 questions",
        "kit": "own templates for the six question types over facts of the train period (lines 1–322,958)",
        "switch": None,
    },
    {
        "aspect": "Rewrite input",
        "paper": "the retrieved facts f (Eq. 5); gpt-3.5-turbo, temperature 0.4",
        "released code": f"only the top-1 fact, temperature 1.0 ({HEAD} main.py:103, :109; {DEC} main.py:55, "
        f":59; {DEC} rewrites TimeQuestions' Implicit questions only, :54)",
        "kit": "offline rule over the top-15 facts, or the LLM with the top-15 facts at temperature 0",
        "switch": None,
    },
    {
        "aspect": "Second retrieval",
        "paper": "the TKS with the rewritten question q* (Algorithm 1 line 8)",
        "released code": f"the original questions ({HEAD} main.py:161; {DEC} main.py:91); the rewrites are "
        f"only written to a file ({HEAD} main.py:154-158)",
        "kit": "q* (rewrite='none' for the code's behaviour)",
        "switch": "original_question",
    },
    {
        "aspect": "Rerank",
        "paper": "Eq. 9 (normalised time difference, −100 on violation) and Eq. 10",
        "released code": f"switched off: get_result(..., re_rank=False) ({HEAD} main.py:36; "
        f"{DEC} main.py:18)",
        "kit": "Eq. 9 / Eq. 10 with μ = 0.8; rerank='off' switch",
        "switch": "rerank_off",
    },
    {
        "aspect": "Rerank score where implemented",
        "paper": "Eq. 9",
        "released code": f"fixed window: 1 − d/30 inside 30 days, −100 on the wrong side, −1 beyond, α = 0.8 "
        f"({HEAD} retrival.py:194, :239-264); 15 days, 0.4 · sim − 0.6 · penalty "
        f"({DEC} retrival.py:97, :106-117)",
        "kit": "rerank='window' switch (30 days)",
        "switch": "window",
    },
    {
        "aspect": "Index",
        "paper": "FAISS",
        "released code": f"IndexIVFFlat, inner product: 1,024 cells, nprobe 128 ({DEC} retrival.py:57-61); "
        f"2 cells ({HEAD} retrival.py:111-126)",
        "kit": "IndexIVFFlat 1,024 / 128 over the distinct triples; every fact of the best 256 triples "
        "scored exactly",
        "switch": None,
    },
    {
        "aspect": "Facts shown to the reader",
        "paper": "n = 15 (Fig. 3 peak)",
        "released code": f"15 (main.py:33), prompt cut to 1,024 characters ({DEC} main.py:104-107)",
        "kit": "15",
        "switch": None,
    },
    {
        "aspect": "Reader",
        "paper": "LLaMA2-Chat-7B fine-tuned 2 epochs (setup slide)",
        "released code": "Llama-X fine-tuning, 3 epochs in the README",
        "kit": "the configured reader, not fine-tuned",
        "switch": None,
    },
    {
        "aspect": "Evaluation",
        "paper": "Hits@1",
        "released code": "predict_answer.py:22-46, :86-87: normalised gold is a substring of the whole "
        "generated output (all listed answers)",
        "kit": "strict MultiTQ Hits@1, lenient first answer, and the code's whole-output rule",
        "switch": None,
    },
)


def paper_vs_code(effects: dict[str, str] | None = None):
    """The table, with the measured effect of each switch on answer recall@15 where one was run."""
    import pandas as pd

    effects = effects or {}
    rows = [
        {k: v for k, v in row.items() if k != "switch"}
        | {"effect on recall@15 (kit)": effects.get(row["switch"], "")}
        for row in PAPER_VS_CODE
    ]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------------
# released outputs


def _golds(value) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    try:
        parsed = ast.literal_eval(str(value))
    except (ValueError, SyntaxError):
        return [str(value)]
    return [str(v) for v in (parsed if isinstance(parsed, (list, tuple)) else [parsed])]


def rescore_released(path: str | Path) -> dict:
    """Re-score a released predictions / detailed_eval_result .jsonl of TimeR4 with the kit's rules.

    Each line holds ``prediction`` (a reply, or a list of replies that the code joins with spaces) and
    ``ground_truth`` (a Python-literal list).  Returns n and Hits@1 under the whole-output rule (the
    code's), the lenient first-answer rule and the strict rule; bad lines are counted, not fatal."""
    n = bad = 0
    hits = {"whole": 0, "lenient": 0, "strict": 0}
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
                pred, golds = rec["prediction"], _golds(rec["ground_truth"])
            except (json.JSONDecodeError, KeyError, TypeError):
                bad += 1
                continue
            text = " ".join(map(str, pred)) if isinstance(pred, list) else str(pred)
            answers = parse_ranked_answers(text, top_k=50)
            n += 1
            hits["whole"] += lenient_hit(text, golds)
            hits["lenient"] += lenient_hit(answers, golds)
            hits["strict"] += strict_hit(answers, golds, k=1)
    if not n:
        raise ValueError(
            f"{path}: no line with 'prediction' and 'ground_truth' — is this a TimeR4 output file?"
        )
    return {"n": n, "bad_lines": bad, **{rule: v / n for rule, v in hits.items()}}
