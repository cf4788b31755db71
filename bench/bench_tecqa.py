"""TECQA retrieval latency per question on the full MultiTQ KG, next to global semantic retrieval.

Parsing and question embedding are excluded on both sides: TECQA's timed part is the structure-guided
subgraph (CSR index look-ups), the similarity of its distinct triples, anchors, k-nearest temporal
neighbours and proximity serialisation; the baseline's is cosine over all 461,329 facts and a top-k.
"""

from __future__ import annotations

import time

import numpy as np

from temporag.data import multitq
from temporag.methods import tecqa
from temporag.methods.semantic import SemanticRetriever
from temporag.retrieval.embed import Encoder

N_QUESTIONS = 256
TARGET_P50_MS = 20.0


def main() -> None:
    kg = multitq.load_kg()
    questions = multitq.load_questions()[:N_QUESTIONS]
    texts = [q.question for q in questions]
    enc = Encoder()
    semantic = SemanticRetriever(kg, enc)
    model = tecqa.TECQA(kg, enc, semantic.triple_vectors)
    _ = kg.by_entity, kg.triple_of_fact  # build the indexes before timing

    t0 = time.perf_counter()
    constraints = model.offline_parser.parse_many(texts)
    parse_s = (time.perf_counter() - t0) / len(texts)
    q_vecs = model.embed_questions(texts)

    model.chains(constraints[:8], q_vecs[:8], progress=False)  # warm-up
    chains, latency = model.chains(constraints, q_vecs, tecqa.DEFAULT_K, tecqa.DEFAULT_N, progress=False)
    sem_latency = semantic.retrieve(texts, k=tecqa.DEFAULT_K, q_vecs=q_vecs, progress=False).latency_s

    p50, p95 = np.median(latency) * 1e3, np.percentile(latency, 95) * 1e3
    sizes = np.array([len(c.subgraph) for c in chains])
    lengths = np.array([len(c) for c in chains])
    print(
        f"TECQA retrieval per question (K={tecqa.DEFAULT_K}, N={tecqa.DEFAULT_N}; parsing and embedding "
        f"excluded, {len(kg):,} facts, {len(texts)} questions): p50 {p50:.1f} ms, p95 {p95:.1f} ms "
        f"[target p50 ≤ {TARGET_P50_MS:.0f} ms: {'ok' if p50 <= TARGET_P50_MS else 'MISSED'}]"
    )
    print(
        f"semantic retrieval per question (same cut): p50 {np.median(sem_latency) * 1e3:.1f} ms, "
        f"p95 {np.percentile(sem_latency, 95) * 1e3:.1f} ms"
    )
    print(
        f"  subgraph size median {np.median(sizes):.0f} / max {sizes.max():,} facts; chain length mean "
        f"{lengths.mean():.1f}; offline parse {parse_s * 1e3:.1f} ms per question (batched, not timed above)"
    )


if __name__ == "__main__":
    main()
