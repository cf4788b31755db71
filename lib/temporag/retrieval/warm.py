"""Build the caches every MultiTQ notebook shares before the notebooks run.

On a cold machine the first notebook would otherwise spend minutes embedding MultiTQ's 166,760 distinct
fact texts and its entity and relation names; ``temporag warm`` (run by ``make reproduce`` while
llama-cpp-python compiles) builds them up front, chunk by chunk with a progress bar and an ETA, resumable
and shared by every later run through the embedding cache.
"""

from __future__ import annotations

import time

from temporag.config import get_settings
from temporag.data import multitq
from temporag.retrieval.embed import Encoder, kg_name_vectors, kg_triple_vectors, run_backend


def warm_multitq(progress: bool = True, profile: str = "smoke") -> dict[str, float]:
    """Embed MultiTQ's fact texts and names with the backend ``profile``'s runs use; seconds per step."""
    settings = run_backend(get_settings(), profile)
    seconds = {}
    t0 = time.perf_counter()
    kg = multitq.load_kg()
    seconds["load_kg"] = time.perf_counter() - t0
    encoder = Encoder(settings)
    if progress:
        print(
            f"warming {settings.cache_dir}: {kg.n_triples:,} fact texts and the names of MultiTQ "
            f"(backend {encoder.backend}, {settings.threads} threads)",
            flush=True,
        )
    t0 = time.perf_counter()
    kg_triple_vectors(kg, encoder)
    seconds["fact_vectors"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    kg_name_vectors(kg, encoder)
    seconds["name_vectors"] = time.perf_counter() - t0
    return seconds
