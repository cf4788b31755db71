"""TimeR4's time-aware retriever outside the notebook: answer recall@15 of the base model and of the
models fine-tuned with the softmax (InfoNCE) loss and with the kit's earlier pairwise reading of Eq. 8,
on the shared MultiTQ questions, rewritten and original, by question type.

Two measurements, both exact (no IVF cut):

* a **subset** of the KG — every fact of the union of each question's 30 most similar triples by the
  base model, for the rewritten and the original question (15,887 triples for the 954 shared
  questions): every model is searched exhaustively on it, and the base model on the whole KG beside it;
* the **full store** (all 166,760 triples re-embedded) for the softmax model, exact search, and the
  share of its exact top-15 that the IVF index returns.

The models are trained from KG facts of the train period only (negatives.py), with the notebook's
training config, so the paper profile finds them (and the full store) in the cache.

    TEMPORAG_DATA=../shared/data .venv/bin/python bench/timer4_retriever_recall.py OUT_DIR [--full]

``--embed LOSS`` only trains that model and embeds its subset store (to run beside another process on a
busy machine); ``--full`` adds the full-store measurement.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from temporag.data import multitq
from temporag.methods import tecqa, timer4
from temporag.methods.timer4 import experiments, negatives, train
from temporag.retrieval.embed import Encoder

TRAIN_EXAMPLES = 4800  # the paper profile's (--examples N for a smaller run)
SUBSET_TRIPLES = 30  # per question and question form
LOSSES = ("softmax", "pairwise")


def main(
    out: Path, embed_only: str | None = None, full_store: bool = False, n_examples: int = TRAIN_EXAMPLES
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    kg = multitq.load_kg()
    questions = multitq.load_questions("test_sample_shared")
    texts = [q.question for q in questions]
    encoder = Encoder()
    fks = timer4.fact_store(kg, encoder)
    saved = out / "subset.npy"
    if saved.exists() and embed_only not in (None, "none"):  # a model's subset store only
        examples = negatives.build_examples(kg, n_examples, seed=0)
        model = train.train_retriever(kg, examples, train.TrainConfig(loss=embed_only, seed=0))
        timer4.time_store(kg, model.path, triple_ids=np.load(saved), name=f"TKS {embed_only} subset")
        return
    parser = tecqa.make_offline_parser(kg, encoder)
    base = timer4.TimeR4(kg, fks, parser=parser, temporal=False)
    rewritten = [r.rewritten for r in base.rewrite_questions(texts)[1]]
    if saved.exists() and embed_only != "none":
        subset = np.load(saved)
    else:
        subset = np.union1d(
            timer4.candidate_triples(fks, base.question_vectors(fks, rewritten), SUBSET_TRIPLES),
            timer4.candidate_triples(fks, base.question_vectors(fks, texts), SUBSET_TRIPLES),
        )
    print(f"subset: {len(subset):,} triples", flush=True)
    if embed_only == "none":  # the subset alone (it warms the base store, parser and rewrite)
        np.save(out / "subset.npy", subset)
        return
    summary: dict = {"subset_triples": int(len(subset)), "train_examples": n_examples}

    examples = negatives.build_examples(kg, n_examples, seed=0)
    if embed_only:
        model = train.train_retriever(kg, examples, train.TrainConfig(loss=embed_only, seed=0))
        timer4.time_store(kg, model.path, triple_ids=subset, name=f"TKS {embed_only} subset")
        return
    trained = {}
    for loss in LOSSES:
        trained[loss] = train.train_retriever(kg, examples, train.TrainConfig(loss=loss, seed=0))
        t = trained[loss]
        summary[f"train_seconds/{loss}"] = round(t.seconds, 1)
        print(f"{loss}: {t.seconds:.0f} s (cached {t.cached}), loss {t.losses[0]} → {t.losses[-1]}")

    def rankings(store_of: dict, tag: str) -> dict:
        ranked = {}
        for name, store in store_of.items():
            m = base.variant(tks=store, temporal=True, rerank="eq9")
            ranked[f"{name}"] = m.variant(rerank="off").retrieve(questions, progress=False).ids
            ranked[f"{name} + rerank"] = m.retrieve(questions, progress=False).ids
            ranked[f"{name} (original q)"] = m.variant(rerank="off", rewrite="none").retrieve(questions).ids
        frame = experiments.recall_by_qtype(kg, questions, ranked, k=15)
        frame.to_csv(out / f"recall15_{tag}.csv", index=False)
        print(frame.round(3).to_string(), flush=True)
        return frame

    t0 = time.perf_counter()
    stores = {"base": fks.restrict(subset)}
    for loss in LOSSES:
        stores[loss] = timer4.time_store(kg, trained[loss].path, triple_ids=subset, name=f"TKS {loss} subset")
    frame = rankings(stores, "subset")
    summary["subset_seconds"] = round(time.perf_counter() - t0, 1)
    summary["subset"] = frame.to_dict(orient="records")
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    frame = rankings({"base (whole KG)": fks.exhaustive()}, "base_whole_kg")
    summary["base_whole_kg"] = frame.to_dict(orient="records")
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    if not full_store:
        return

    t0 = time.perf_counter()
    full = timer4.time_store(kg, trained["softmax"].path, exact=True)
    q_vecs = base.question_vectors(full, rewritten)
    summary["full/ivf_agreement@15"] = full.agreement(q_vecs, 15)
    print(
        f"full TKS built in {time.perf_counter() - t0:.0f} s; IVF agreement "
        f"{summary['full/ivf_agreement@15']:.3f}",
        flush=True,
    )
    base_exact = dataclasses.replace(fks, exact_search=True)
    frame = rankings({"base": base_exact, "softmax": full}, "full")
    summary["full"] = frame.to_dict(orient="records")
    (out / "summary.json").write_text(json.dumps(summary, indent=1))

    code = train.train_retriever(kg, examples, train.TrainConfig(loss="code", seed=0))  # warms the cache
    print(f"code loss: {code.seconds:.0f} s", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    embed = args[args.index("--embed") + 1] if "--embed" in args else None
    n = int(args[args.index("--examples") + 1]) if "--examples" in args else TRAIN_EXAMPLES
    values = {embed, str(n)}
    folder = next((a for a in args if not a.startswith("--") and a not in values), "timer4_retriever_recall")
    main(Path(folder), embed, "--full" in args, n)
