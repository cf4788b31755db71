"""IA-RAG (Wang, Zhang et al.): interval event units, Allen's interval algebra, a thematic forest.

The method in the order of its §3, and where each part lives:

* §3.2 IEU extraction, Eq. 1 ⟨s, c, [t_start, t_end], f, src⟩ → :mod:`.corpus` (documents, 1,200 / 64-token
  chunks) and :mod:`.extract` (:class:`~.extract.OfflineExtractor` with the conversion tables of Figs. 7/9
  via :mod:`temporag.timeutil`, or :class:`~.extract.LLMExtractor` with Fig. 7's task; same :class:`IEU`).
* §3.2 deduplication over top-Q neighbours (Fig. 8) → :func:`.graph.deduplicate`.
* §3.3 interval-aware event graph, Eqs. 2–4 → :func:`.graph.build_graph` (cosine > τ_sem, Allen relation per
  edge, components).
* §3.3 sub-graph time tightening, Eq. 5 (Fig. 9) → :func:`.tighten.tighten` (offline constraint propagation
  that never widens, or the LLM operator).
* §3.3 MEUs and the thematic forest, Eqs. 6–8 (Table 6) → :func:`.forest.build_forest`.
* §3.4 window Φ_d, matching, IA-guided traversal Ψ and the union, Eqs. 9–18 → :class:`.retrieval.IARAG`;
  Vanilla RAG → :class:`.retrieval.VanillaRAG`; answers through the kit's one reader (Fig. 10's rules in
  ``READER_RULES``).
* Appendix D's T1–T5 classifier (Fig. 6) → :mod:`.classify`.  Tables and figures → :mod:`.report`.

Choices the paper leaves open: the encoder is MiniLM (the paper uses BGE-M3), Q = 10 for deduplication,
the level thresholds (:func:`.forest.level_threshold`), and the offline rules named in each module.
:func:`build_index` runs §3.2–3.3 end to end and caches the result by content hash.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from temporag.cache import cache_path, content_hash, load_tree, save_tree
from temporag.methods import artifacts
from temporag.methods.ia_rag.corpus import Chunk, Doc, chunk_documents
from temporag.methods.ia_rag.extract import IEU, make_extractor
from temporag.methods.ia_rag.forest import MAX_LEVELS, MEU, Forest, build_forest
from temporag.methods.ia_rag.graph import (
    CALIBRATION_SEED,
    K_NEIGHBOURS,
    TAU_PERCENTILE,
    TAU_SEM,
    EventGraph,
    build_graph,
    calibrate_tau,
    deduplicate,
    embed_units,
)
from temporag.methods.ia_rag.retrieval import IARAG, IAIndex, VanillaRAG
from temporag.methods.ia_rag.tighten import tighten
from temporag.timeutil import Allen

log = logging.getLogger(__name__)
CACHE_VERSION = 2  # 2: sections, undated sentences kept, units embedded with title and context

__all__ = ["IEU", "IARAG", "IAIndex", "VanillaRAG", "build_index", "Build"]


class Build:
    """What :func:`build_index` made: the index plus every intermediate count and timing."""

    def __init__(
        self, index: IAIndex, raw_units: list[IEU], chunks: list[Chunk], stats: dict, changes: list[dict]
    ):
        self.index, self.raw_units, self.chunks, self.stats, self.changes = (
            index,
            raw_units,
            chunks,
            stats,
            changes,
        )


# every class a cached build is made of: all that loading one may build (a signed, data-only .npz)
BUILD_TYPES = (Build, IAIndex, EventGraph, Forest, MEU, IEU, Chunk, Allen)


def build_index(
    docs: Sequence[Doc],
    encoder,
    *,
    extractor: str = "offline",
    tightening: str = "offline",
    dedup: str = "offline",
    max_levels: int = MAX_LEVELS,
    tau: float | None = TAU_SEM,
    k: int = K_NEIGHBOURS,
    llm=None,
    cache: bool = True,
    progress: bool = True,
) -> Build:
    """§3.2–3.3 over ``docs``: chunk, extract IEUs, embed, deduplicate, graph, tighten, forest.

    ``tau=None`` calibrates τ_sem for the encoder (:func:`.graph.calibrate_tau`, recorded in
    ``stats["tau"]``); a number is used as given (the paper's 0.8 by default).

    With ``cache`` the finished build is stored under the kit cache keyed by the documents' content, the
    embedder and every argument (LLM-backed steps also by the model name), so a re-run loads it."""
    key = content_hash(
        CACHE_VERSION,
        [(d.doc_id, d.title, d.text) for d in docs],
        getattr(encoder, "cache_id", encoder.model_name),
        extractor,
        tightening,
        dedup,
        max_levels,
        tau if tau is not None else ("calibrated", TAU_PERCENTILE),
        k,
        llm.model_name if llm is not None else None,
    )
    path = cache_path("ia_rag", key, ".npz", encoder.settings.cache_dir)
    calibrated = tau is None
    cached = load_tree(path, BUILD_TYPES) if cache and path.exists() else None  # invalid: None, rebuilt
    if isinstance(cached, Build):
        return _calibration_noted(cached, key, calibrated, made=False, cache_dir=path.parent.parent)
    timings = {}
    t = time.perf_counter()
    chunks = chunk_documents(docs)
    units = make_extractor(extractor, llm).extract(docs, chunks, progress=progress)
    timings["extract_s"] = time.perf_counter() - t
    t = time.perf_counter()
    vectors = embed_units(units, encoder)
    timings["embed_s"] = time.perf_counter() - t
    if tau is None:
        tau = calibrate_tau(vectors)
    t = time.perf_counter()
    deduped = deduplicate(units, vectors, llm=llm if dedup == "llm" else None, tau=tau)
    timings["dedup_s"] = time.perf_counter() - t
    t = time.perf_counter()
    graph = build_graph(deduped.units, deduped.vectors, tau=tau, k=k)
    before = graph.stats()
    timings["graph_s"] = time.perf_counter() - t
    t = time.perf_counter()
    _, changes = tighten(graph, tightening, llm)
    timings["tighten_s"] = time.perf_counter() - t
    t = time.perf_counter()
    forest = build_forest(
        graph, max_levels=max_levels, k=k, llm=llm if extractor == "llm" else None, encoder=encoder
    )
    timings["forest_s"] = time.perf_counter() - t
    stats = {
        "tau": tau,
        "documents": len(docs),
        "chunks": len(chunks),
        "chunk_tokens": sum(c.n_tokens for c in chunks),
        "ieus_extracted": len(units),
        "duplicates_merged": len(units) - len(deduped.units),
        "graph_before_tightening": before,
        "graph": graph.stats(),
        "tightened": len(changes),
        "flags_cleared": sum(bool(c.get("cleared")) for c in changes),
        "meus": len(forest.meus),
        "levels": forest.levels,
        "forest_levels": forest.level_stats,
        **timings,
    }
    build = Build(IAIndex(graph, forest), units, chunks, stats, changes)
    if cache:
        save_tree(path, build, BUILD_TYPES)
    return (
        _calibration_noted(build, key, calibrated, made=True, cache_dir=path.parent.parent)
        if cache
        else build
    )


def _calibration_noted(build: Build, key: str, calibrated: bool, *, made: bool, cache_dir) -> Build:
    """Record the calibrated τ_sem this run used (a seeded sample: :func:`.graph.calibrate_tau`), so one
    calibrated again to another value is said; a τ given as a number is no artifact."""
    if calibrated:
        artifacts.note(
            "ia_rag_tau",
            key,
            artifacts.digest(build.stats["tau"]),
            seed=CALIBRATION_SEED,
            made=made,
            cache_dir=cache_dir,
            what=f"IA-RAG's calibrated tau_sem ({build.stats['tau']})",
            tau=build.stats["tau"],
        )
    return build
