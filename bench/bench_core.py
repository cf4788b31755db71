"""Core benchmarks: KG load, embedding throughput, FAISS batched latency, semantic retrieval, peak RSS."""

from __future__ import annotations

import resource
import time

import numpy as np

from temporag.config import describe_device
from temporag.data import multitq
from temporag.methods.semantic import SemanticRetriever
from temporag.retrieval.embed import Encoder, VectorIndex, kg_triple_vectors


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    print(f"device (embedding, TimeR4 training): {describe_device()}")
    t0 = time.perf_counter()
    multitq._KG_CACHE.clear()
    kg = multitq.load_kg()
    print(f"KG load (461,329 facts, parse + ids): {time.perf_counter() - t0:.2f} s")
    t0 = time.perf_counter()
    _ = kg.by_entity, kg.by_relation, kg.triple_of_fact
    print(f"KG indexes (entity, relation, distinct triples): {time.perf_counter() - t0:.2f} s")

    enc = Encoder()
    sample = kg.triple_texts()[:2048]
    enc.encode(sample[:64])  # warm-up
    t0 = time.perf_counter()
    enc.encode(sample, progress=False)
    rate = len(sample) / (time.perf_counter() - t0)
    print(
        f"embedding throughput (MiniLM, backend {enc.backend} on {enc.device}, {len(sample)} fact texts): "
        f"{rate:.0f} sentences/s "
        f"→ {kg.n_triples / rate / 60:.1f} min for the distinct triples "
        f"({len(kg) / rate / 60:.1f} min for one text per fact)"
    )

    vectors = kg_triple_vectors(kg, enc)
    fact_vectors = vectors[kg.triple_of_fact]
    index = VectorIndex(fact_vectors)
    questions = multitq.load_questions()
    q_vecs = enc.encode([q.question for q in questions[:256]])
    t0 = time.perf_counter()
    index.search(q_vecs, k=20, batch=256)
    batched = (time.perf_counter() - t0) / len(q_vecs)
    singles = []
    for v in q_vecs[:20]:
        t1 = time.perf_counter()
        index.search(v[None], k=20)
        singles.append(time.perf_counter() - t1)
    print(
        f"FAISS IndexFlatIP over {len(index):,} vectors: batched {batched * 1e3:.2f} ms/query, "
        f"one at a time p50 {np.median(singles) * 1e3:.1f} ms "
        f"/ p95 {np.percentile(singles, 95) * 1e3:.1f} ms"
    )
    del index, fact_vectors

    retriever = SemanticRetriever(kg, enc)
    latency = retriever.retrieve(questions[:256], k=20, q_vecs=q_vecs, progress=False).latency_s
    print(
        f"semantic retrieval per question (embedding excluded, 461K facts): "
        f"p50 {np.median(latency) * 1e3:.1f} ms, "
        f"p95 {np.percentile(latency, 95) * 1e3:.1f} ms"
    )
    print(f"peak RSS: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
