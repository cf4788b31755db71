"""Embedding backends side by side: throughput on one fixed sample, and what each does to retrieval.

Throughput is measured in the same run on the same seeded sample of MultiTQ fact texts for every backend
(torch fp32 — the reference —, onnx, onnx-int8), so load on a shared machine hits them alike.  The
quality check is the semantic baseline's answer recall@20 on the shared questions over the full KG, with
the question and fact vectors of each backend; a backend may become the default only if it moves recall@20
by at most 0.5 points.  A backend whose full index is not cached yet builds it here (minutes per backend
on two cores); ``--sample-only`` skips the recall part.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from temporag.answer.evaluate import answer_recall_at_k
from temporag.config import get_settings
from temporag.data import multitq
from temporag.methods.semantic import SemanticRetriever
from temporag.retrieval.embed import Encoder
from temporag.retrieval.embed_onnx import BACKENDS, onnx_available

SAMPLE = 5000
ACCEPTED_LOSS_POINTS = 0.5


def throughput(backend: str, texts: list[str]) -> float:
    """Texts per second of ``backend`` on ``texts`` (model load and export excluded)."""
    enc = Encoder(backend=backend)
    enc.encode(texts[:64], progress=False)  # load (and export on first use), warm up
    t0 = time.perf_counter()
    enc.encode(texts, progress=False)
    return len(texts) / (time.perf_counter() - t0)


def recall_at_20(kg, questions, backend: str) -> float:
    """Semantic baseline answer recall@20 with ``backend``'s vectors (builds its full index if needed)."""
    retriever = SemanticRetriever(kg, Encoder(backend=backend))
    ranked = retriever.retrieve(questions, k=20, progress=False).ids
    return float(answer_recall_at_k(kg, ranked, questions, [20])[20].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample-only", action="store_true", help="throughput only, no full-KG recall")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated, torch first")
    args = parser.parse_args()
    backends = [b for b in args.backends.split(",") if b == "torch" or onnx_available()]
    settings = get_settings()
    kg = multitq.load_kg()
    texts = kg.triple_texts()
    pick = np.random.default_rng(0).choice(len(texts), SAMPLE, replace=False)
    sample = [texts[i] for i in pick]
    print(
        f"default backend: {settings.embed_backend} → {Encoder().backend} (TEMPORAG_EMBED_BACKEND); "
        f"threads {settings.threads}; "
        f"sample {SAMPLE:,} of {len(texts):,} distinct fact texts (seed 0)"
    )
    rates = {b: throughput(b, sample) for b in backends}
    for b, rate in rates.items():
        print(
            f"  {b:<10} {rate:7.0f} texts/s  ×{rate / rates[backends[0]]:.2f} vs {backends[0]}  "
            f"→ {len(texts) / rate / 60:5.1f} min for the full index"
        )
    if args.sample_only:
        return
    questions = multitq.load_questions()
    recall = {b: recall_at_20(kg, questions, b) for b in backends}
    ref = recall[backends[0]]
    for b, value in recall.items():
        delta = (value - ref) * 100
        ok = "ok" if abs(delta) <= ACCEPTED_LOSS_POINTS else "OUTSIDE the accepted change"
        print(
            f"  {b:<10} semantic answer recall@20 on {len(questions)} shared questions: {value:.4f} "
            f"({delta:+.2f} points vs {backends[0]}; accepted ±{ACCEPTED_LOSS_POINTS}: {ok})"
        )


if __name__ == "__main__":
    main()
