"""Write TimeR4 reader fine-tuning records (chat JSONL) for MultiTQ training questions — step 2 of
"Fine-tuning TimeR4's reader" in runbooks/gpu-box-vllm.md.

The retrieval is the notebook's: the fact store, the offline rewrite, the time-aware retriever fine-tuned
with Eq. 8 on ``--train-examples`` template questions (cached; trained on the GPU when torch sees one,
TEMPORAG_DEVICE), the time store over every triple (``--tks full``, the paper profile) or over a candidate
pool per question (``--tks pool``, for a quick check), and the Eq. 9/10 rerank.  Each record is the kit's
reader prompt over the reranked facts plus the gold answers as a Python list (``runs.export_reader_sft``).

Use MultiTQ's own train.json, never the evaluation questions.
"""

from __future__ import annotations

import argparse
import time

from temporag.data import multitq
from temporag.retrieval.embed import Encoder
from temporag.methods import tecqa, timer4
from temporag.methods.timer4 import negatives, runs, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions-file", required=True, help="MultiTQ-format training questions")
    parser.add_argument("--out", required=True, help="JSONL file to write")
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--train-examples", type=int, default=4800, help="retriever training (paper: 4800)")
    parser.add_argument("--tks", choices=["full", "pool"], default="full")
    parser.add_argument("--pool-triples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    t0 = time.perf_counter()
    questions = multitq.load_questions(questions_file=args.questions_file)[: args.limit]
    kg = multitq.load_kg()
    encoder = Encoder()
    fks = timer4.fact_store(kg, encoder)
    base = timer4.TimeR4(kg, fks, parser=tecqa.make_offline_parser(kg, encoder), temporal=False)
    trained = train.train_retriever(
        kg, negatives.build_examples(kg, args.train_examples, seed=args.seed), train.TrainConfig(seed=args.seed)
    )
    pool = None
    if args.tks == "pool":
        _, rewrites = base.rewrite_questions([q.question for q in questions])
        vectors = base.question_vectors(fks, [r.rewritten for r in rewrites])
        pool = timer4.candidate_triples(fks, vectors, args.pool_triples)
    method = base.variant(tks=timer4.time_store(kg, trained.path, triple_ids=pool), temporal=True, rerank="eq9")
    n = runs.export_reader_sft(method, questions, args.out)
    print(
        f"{n} records → {args.out} in {time.perf_counter() - t0:.0f} s (retriever trained on {trained.device}"
        f"{', cached' if trained.cached else ''}; encoder on {encoder.device}; TKS {args.tks})"
    )


if __name__ == "__main__":
    main()
