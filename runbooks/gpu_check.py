"""Check the kit's GPU path against its CPU runs — section 1 of runbooks/gpu-box-vllm.md.

Three measurements on the device torch sees (TEMPORAG_DEVICE), each printed and written to
``OUT/gpu_check.json``:

* **embedder**: MultiTQ's 166,760 distinct fact texts and 4,017 day texts embedded into a fresh cache
  (texts/s); with ``--reference`` (made on the CPU by ``--make-reference``, same weights) the cosine of
  the device's vectors to the CPU's for the same rows;
* **training**: TimeR4's time-aware retriever, softmax loss, on the paper profile's 4,800 template
  questions (19,200 pairs) of the KG's train period: seconds and pairs/s;
* **recall**: answer recall@15 of the base and the fine-tuned store over every triple (exact search,
  rewritten questions, no rerank) on the shared MultiTQ questions, beside the CPU run's committed
  numbers (figures/timer4/recall15_before_after.csv).

    python runbooks/gpu_check.py --make-reference ref.npz                        # always on the CPU
    TEMPORAG_DEVICE=cuda python runbooks/gpu_check.py OUT --reference ref.npz    # on the GPU box

Point TEMPORAG_CACHE at an empty folder on the GPU box so that nothing comes from the CPU's cache.
``--subset K`` restricts both stores to the union of each question's K most similar base triples (a
quick check on a CPU; the committed comparison is with the full store).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np

from temporag.config import get_settings
from temporag.data import multitq
from temporag.retrieval.embed import Encoder
from temporag.methods import timer4
from temporag.methods.timer4 import negatives, report, train
from temporag.question.parsing import make_offline_parser

EXAMPLES = 4800  # the paper profile's training questions
REFERENCE_STEP = 331  # every 331st distinct fact text: 504 rows, spread over the whole KG
CPU_RECALL = Path(__file__).resolve().parents[1] / "figures/timer4/recall15_before_after.csv"


def make_reference(path: Path) -> None:
    """The CPU's vectors for every REFERENCE_STEP-th fact text, with the model they came from (on the CPU
    whatever TEMPORAG_DEVICE says: a GPU box can make its own reference)."""
    kg = multitq.load_kg()
    encoder = Encoder(get_settings(device="cpu"))
    rows = np.arange(0, kg.n_triples, REFERENCE_STEP)
    texts = kg.triple_texts()
    vectors = encoder.encode([texts[i] for i in rows], progress=False)
    np.savez(path, rows=rows, vectors=vectors, device=encoder.device, model=encoder.model_name)
    print(f"{path}: {len(rows)} reference vectors from {encoder.device}")


def embed_check(kg, encoder: Encoder, reference: Path | None) -> tuple[object, dict]:
    """Build the base fact store into the (empty) cache and time it; compare rows with the reference."""
    encoder.encode(["warm-up"], progress=False)  # the model load is not embedding time
    t0 = time.perf_counter()
    fks = timer4.fact_store(kg, encoder)
    seconds = time.perf_counter() - t0
    n = len(fks.triple_vectors) + len(fks.date_vectors)
    out = {"device": encoder.device, "texts": n, "seconds": round(seconds, 2)}
    out["texts_per_s"] = round(n / seconds)
    if reference is not None:
        ref = np.load(reference)
        cos = np.einsum("ij,ij->i", fks.triple_vectors[ref["rows"]], ref["vectors"])
        out["reference"] = {
            "rows": int(len(cos)),
            "device": str(ref["device"]),
            "cosine_min": round(float(cos.min()), 7),
            "cosine_mean": round(float(cos.mean()), 7),
        }
    return fks, out


def train_check(kg, n_examples: int):
    """Train the paper profile's retriever (softmax loss, seed 0) and time it."""
    examples = negatives.build_examples(kg, n_examples, seed=0)
    trained = train.train_retriever(kg, examples, train.TrainConfig(loss="softmax", seed=0))
    summary = {
        "device": trained.device,
        "examples": trained.examples,
        "pairs": trained.pairs,
        "seconds": round(trained.seconds, 1),
        "pairs_per_s": round(trained.pairs / trained.seconds, 1),
        "cached": trained.cached,
        "loss_first": trained.losses[0],
        "loss_last": trained.losses[-1],
    }
    return trained, summary


def recall_check(kg, encoder: Encoder, fks, trained, subset: int | None) -> dict:
    """Answer recall@15 of the base and fine-tuned stores (exact search, rewritten questions).

    Every search is exhaustive, the rewrite's background facts too (the notebook's go through the IVF
    index, which returns 99.3–99.5 % of the exact top 15): no index, and no FAISS, on either side."""
    questions = multitq.load_questions("test_sample_shared")
    fks = fks.exhaustive()
    base = timer4.TimeR4(kg, fks, parser=make_offline_parser(kg, encoder), temporal=False)
    triple_ids = None
    if subset:
        rewritten = [r.rewritten for r in base.rewrite_questions([q.question for q in questions])[1]]
        triple_ids = timer4.candidate_triples(fks, base.question_vectors(fks, rewritten), subset)
    t0 = time.perf_counter()
    tks = timer4.time_store(kg, trained.path, triple_ids=triple_ids, exact=True)
    tks_seconds = time.perf_counter() - t0
    base_store = fks.restrict(triple_ids) if subset else fks
    ranked = {
        name: base.variant(tks=store, temporal=True, rerank="off").retrieve(questions, progress=False).ids
        for name, store in (("base model (before)", base_store), ("fine-tuned (after)", tks))
    }
    frame = report.recall_by_qtype(kg, questions, ranked, k=15)
    out = {"triples": int(len(tks.triple_vectors)), "tks_seconds": round(tks_seconds, 1), "rows": []}
    cpu = _cpu_recall() if not subset else {}
    for row in frame.to_dict(orient="records"):
        item = {"category": row["category"], "n": int(row["n"])}
        for name in ranked:
            item[name] = round(float(row[name]), 4)
            if (row["category"], name) in cpu:
                item[f"{name}, CPU run"] = round(cpu[row["category"], name], 4)
        out["rows"].append(item)
    print(frame.round(3).to_string(index=False), flush=True)
    return out


def _cpu_recall() -> dict:
    """The committed CPU run's recall@15 by category, for the two columns this check measures."""
    with open(CPU_RECALL, newline="") as f:
        rows = list(csv.DictReader(f))
    columns = ("base model (before)", "fine-tuned (after)")
    return {(r["category"], c): float(r[c]) for r in rows for c in columns}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default="gpu_check", help="folder for gpu_check.json")
    parser.add_argument("--reference", type=Path, help="CPU vectors from --make-reference")
    parser.add_argument("--make-reference", type=Path, help="write the CPU reference vectors and stop")
    parser.add_argument("--examples", type=int, default=EXAMPLES, help="training questions (paper: 4800)")
    parser.add_argument("--subset", type=int, default=None, help="K triples per question, not the full store")
    args = parser.parse_args()
    if args.make_reference:
        make_reference(args.make_reference)
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict = {}

    def save(step: str, value: dict) -> None:  # written after each step: a crash keeps what was measured
        summary[step] = value
        (out / "gpu_check.json").write_text(json.dumps(summary, indent=1))
        print(step, json.dumps(value), flush=True)

    t0 = time.perf_counter()
    kg = multitq.load_kg()
    encoder = Encoder()
    save("load", {"kg_facts": len(kg), "seconds": round(time.perf_counter() - t0, 1)})
    fks, embedded = embed_check(kg, encoder, args.reference)
    save("embedder", embedded)
    trained, training = train_check(kg, args.examples)
    save("training", training)
    save("recall@15", recall_check(kg, encoder, fks, trained, args.subset))
    save("total_seconds", {"seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
