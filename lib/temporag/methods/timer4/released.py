"""The paper vs the first author's released code (qianxinying/TimeR4) vs the kit, as data, and a
re-score of the code's released outputs with the kit's answer rules.

The code was read at two commits: 508cc02 (HEAD, November 2025) and be4d382 (December 2024, the version the
README describes); every claim below cites file and line at one of them.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from temporag.answer.evaluate import lenient_hit, strict_hit
from temporag.answer.readers import parse_ranked_answers

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
        "kit": "1 epoch, 32 questions a step, lr 1e-4, top 2 of 6 layers trained",
        "switch": None,
    },
    {
        "aspect": "Retriever loss",
        "paper": "Eq. 8, weighted by w_p and w_n",
        "released code": "ContrastiveTensionLossInBatchNegatives(scale=1, dot product) "
        "(fine_tuned_retriever.py:54); the 0/1 labels set at :18 and :20 are replaced by the pair index "
        "inside the loss, so the hard negatives are trained as positives",
        "kit": "softmax (InfoNCE, τ = 0.05) over the positive, the three hard negatives and the batch's "
        "other positives, so each negative's w_n follows the softmax; Eq. 8 read pair by pair (φ as cosine "
        "distance) is the loss='pairwise' ablation; loss='code' switch",
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
        f"without before/after/first/last (:58-59). {HEAD} construct_negatives.py:105-122, :133: a time "
        "negative (a random day) is made only when the shifted date is not a known day — almost never for "
        "ICEWS's daily timestamps — so most questions get the content negative alone",
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


PAPER_VS_CODE_CAPTION = (
    "Paper (slides) vs released code (qianxinying/TimeR4; 508cc02 = HEAD, be4d382 = Dec 2024) vs kit. "
    "Effects: answer recall@15 of the kit → with the switch."
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


def released_code_rows() -> list[dict[str, str]]:
    """:data:`PAPER_VS_CODE` as rows of the leaderboard's paper vs released code vs kit table."""
    return [
        {
            "aspect": r["aspect"],
            "paper": r["paper"],
            "released code (our reading)": r["released code"],
            "kit": r["kit"],
            "from": "timer4.released.PAPER_VS_CODE",
        }
        for r in PAPER_VS_CODE
    ]


def _golds(value) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    try:
        parsed = ast.literal_eval(str(value))
    except (ValueError, SyntaxError):
        return [str(value)]
    return [str(v) for v in (parsed if isinstance(parsed, (list, tuple)) else [parsed])]


def rescore(path: str | Path) -> dict:
    """Re-score a released predictions / detailed_eval_result .jsonl of TimeR4 with the kit's rules.

    Each line holds ``prediction`` (a reply, or a list of replies that the code joins with spaces) and
    ``ground_truth`` (a Python-literal list).  Returns n and Hits@1 under the whole-output rule (the
    code's), the lenient first-answer rule and the strict rule; bad lines are counted, not fatal."""
    n = bad = 0
    hits = {"whole": 0, "lenient": 0, "strict": 0}
    path = Path(path).expanduser()
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
