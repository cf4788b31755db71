"""Sentence embeddings and vector search, cached on disk.

Embedding is the slowest offline step (MiniLM: a few hundred sentences/s on 2 cores), so vectors
are cached in chunks keyed by (model, backend, chunk texts): a killed build resumes from its last chunk,
and any method that embeds the same texts reuses them.

The backend (``TEMPORAG_EMBED_BACKEND``) says how the same weights run: ``torch`` is the fp32 reference,
``onnx`` / ``onnx-int8`` run a locally exported graph with ONNX Runtime (``temporag.retrieval.embed_onnx``);
the default, ``auto``, is onnx-int8 for smoke runs on a CPU and torch otherwise (``run_backend``).  The
torch path keeps the key it always had (model, texts), so caches built before backends existed stay
valid; every other backend adds its name to the key, so vectors of two backends never mix.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from functools import cached_property, partial
from pathlib import Path

import numpy as np

from temporag.cache import building, cache_path, content_hash, load_npy, save_npy
from temporag.config import Settings, embedder_path, get_settings, torch_device
from temporag.progress import tqdm
from temporag.retrieval.embed_onnx import OnnxSentenceEncoder, check_backend

log = logging.getLogger(__name__)
CHUNK = 8192


def _offline() -> None:
    """Model files come from local folders only: tell the Hugging Face libraries never to reach the hub."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def run_backend(settings: Settings, profile: str | None) -> Settings:
    """The settings of one run with ``auto`` resolved for its profile and device.  The choice is also put in
    ``TEMPORAG_EMBED_BACKEND`` so every encoder of the run's process (a notebook kernel, ``temporag
    warm``) embeds with the same backend as the run records."""
    import os

    if settings.embed_backend != "auto":
        return settings
    backend = check_backend("auto", torch_device(settings), profile)
    os.environ["TEMPORAG_EMBED_BACKEND"] = backend
    return settings.replace(embed_backend=backend)


class Encoder:
    """A sentence-transformers model loaded from a local folder; vectors are L2-normalised float32.

    ``backend`` (default: the setting) picks how it runs; ``model`` is always the torch model (training
    and anything else that needs the module itself use it), ``encode`` uses the backend."""

    def __init__(
        self,
        settings: Settings | None = None,
        model: str | None = None,
        batch_size: int = 128,
        backend: str | None = None,
    ) -> None:
        self.settings = settings or get_settings()
        self.model_name = model or self.settings.embedder
        self.batch_size = batch_size
        self.backend = check_backend(backend or self.settings.embed_backend)  # auto outside a run: torch

    @property
    def cache_id(self) -> tuple | str:
        """What vectors of this encoder are keyed by: the model, plus the backend unless it is torch."""
        return self.model_name if self.backend == "torch" else (self.model_name, self.backend)

    @cached_property
    def onnx(self) -> OnnxSentenceEncoder:
        """The ONNX Runtime session (exported from the packaged weights on first use, then cached)."""
        _offline()
        return OnnxSentenceEncoder(
            embedder_path(self.model_name), self.backend, self.settings.cache_dir, self.settings.threads
        )

    @cached_property
    def model(self):
        _offline()
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(max(1, self.settings.threads))
        return SentenceTransformer(embedder_path(self.model_name), device=self.device)

    @cached_property
    def device(self) -> str:
        """The torch device, "cpu" or "cuda", from TEMPORAG_DEVICE (auto: the GPU when torch sees one)."""
        return torch_device(self.settings)

    @property
    def dim(self) -> int:
        if self.backend != "torch":
            return self.onnx.dim
        return int(self.model.get_embedding_dimension())

    def encode(self, texts: Sequence[str], progress: bool | None = None) -> np.ndarray:
        """Embed texts now (no cache); a progress bar appears for more than a few batches."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        show = progress if progress is not None else len(texts) > 20 * self.batch_size
        if self.backend != "torch":
            return self.onnx.encode(list(texts), self.batch_size, progress=bool(show))
        vecs = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=bool(show),
        )
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def _chunk_path(self, chunk: Sequence[str]) -> Path:
        """Where one chunk's vectors are cached: keyed by :attr:`cache_id` here and nowhere else."""
        key = content_hash(self.cache_id, list(chunk))
        return cache_path("embeddings", key, ".npy", self.settings.cache_dir)

    def cached_share(self, texts: Sequence[str]) -> float:
        """Share of the chunks of ``texts`` the cache holds for this encoder (1.0: ``encode_cached`` embeds
        nothing) — a look at the cache that neither loads a model nor embeds."""
        texts = list(texts)
        held = [self._chunk_path(texts[s : s + CHUNK]).exists() for s in range(0, len(texts), CHUNK)]
        return float(np.mean(held)) if held else 0.0

    def encode_cached(self, texts: Sequence[str], desc: str = "embedding") -> np.ndarray:
        """Embed texts through the chunked disk cache (resumable, atomic)."""
        texts = list(texts)
        dim = self.dim
        out = np.zeros((len(texts), dim), dtype=np.float32)
        todo = []
        for start in range(0, len(texts), CHUNK):
            chunk = texts[start : start + CHUNK]
            path = self._chunk_path(chunk)
            cached = load_npy(path, check=partial(vector_problem, n=len(chunk), dim=dim))
            if cached is not None:
                out[start : start + len(chunk)] = cached
            else:
                todo.append((start, chunk, path))
        if todo:
            n_todo = sum(len(c) for _, c, _ in todo)
            t0 = time.perf_counter()
            with tqdm(total=n_todo, desc=desc, unit="text", disable=n_todo < 2000) as bar:
                # Chunks another run is embedding right now are left to it and collected at the end, so
                # two runs that need the same texts share the work instead of doing it twice.
                busy = []
                for item in todo:
                    if self._embed_chunk(item, out, block=False):
                        bar.update(len(item[1]))
                    else:
                        busy.append(item)
                for item in busy:
                    self._embed_chunk(item, out, block=True)
                    bar.update(len(item[1]))
            log.info("embedded %d texts in %.1fs", n_todo, time.perf_counter() - t0)
        return out

    def _embed_chunk(self, item: tuple[int, list[str], Path], out: np.ndarray, *, block: bool) -> bool:
        """Fill one chunk of ``out`` holding its build lock: from the cache if another run built it
        meanwhile, else by embedding it now.  False (nothing done) when ``block`` is off and another run
        holds the lock."""
        start, chunk, path = item
        with building(path, block=block) as held:
            if not held:
                return False
            vecs = load_npy(path, check=partial(vector_problem, n=len(chunk), dim=self.dim))
            if vecs is None:
                vecs = self.encode(chunk, progress=False)
                save_npy(path, vecs)
            out[start : start + len(chunk)] = vecs
        return True


def vector_problem(vectors: np.ndarray, n: int, dim: int) -> str | None:
    """What is wrong with a cached chunk standing for ``n`` texts, or None.  Vectors are L2-normalised,
    so a chunk of the right shape full of zeros (or NaNs) is caught by its norms, not used silently."""
    if vectors.shape != (n, dim) or vectors.dtype != np.float32:
        return f"holds {vectors.shape} {vectors.dtype}, expected ({n}, {dim}) float32"
    if not np.isfinite(vectors).all():
        return "holds NaN or infinite values"
    norms = np.linalg.norm(vectors, axis=1)
    bad = np.flatnonzero(np.abs(norms - 1.0) > 1e-3)
    if len(bad):
        return f"{len(bad)} of {n} vectors are not unit length (row {bad[0]}: norm {norms[bad[0]]:.3f})"
    return None


class VectorIndex:
    """Exact inner-product search (FAISS IndexFlatIP on normalised vectors = cosine)."""

    def __init__(self, vectors: np.ndarray) -> None:
        import faiss

        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.index = faiss.IndexFlatIP(self.vectors.shape[1])
        self.index.add(self.vectors)

    def __len__(self) -> int:
        return self.index.ntotal

    def search(self, queries: np.ndarray, k: int, batch: int = 256) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, ids) for each query row; queries are searched in batches (much faster)."""
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = min(k, len(self))
        scores = np.empty((len(queries), k), dtype=np.float32)
        ids = np.empty((len(queries), k), dtype=np.int64)
        for start in range(0, len(queries), batch):
            s, i = self.index.search(queries[start : start + batch], k)
            scores[start : start + batch], ids[start : start + batch] = s, i
        return scores, ids


def kg_triple_vectors(kg, encoder: Encoder | None = None) -> np.ndarray:
    """Vectors of the KG's distinct 's r o' texts (each embedded once; dates are a separate signal)."""
    encoder = encoder or Encoder()
    return encoder.encode_cached(kg.triple_texts(), desc=f"embedding {kg.n_triples:,} distinct triples")


def kg_name_vectors(kg, encoder: Encoder | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Vectors of entity labels and relation labels, for grounding mentions (TECQA Eq. 2 etc.)."""
    encoder = encoder or Encoder()
    return (
        encoder.encode_cached(kg.entity_labels, desc="embedding entity names"),
        encoder.encode_cached(kg.relation_labels, desc="embedding relation names"),
    )
