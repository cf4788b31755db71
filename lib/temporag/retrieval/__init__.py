"""Finding evidence, below every method: the sentence embedder and its vector search, cached on disk
(torch or ONNX: :mod:`.embed`, :mod:`.embed_onnx`), the cache warm-up ``temporag warm`` (:mod:`.warm`),
the kit's one stable top-k every ranking calls (:mod:`.topk`) and one BLAS thread around a single
query's products (:mod:`.blas`).  The KG workspace the methods share is :mod:`temporag.methods.workspace`."""
