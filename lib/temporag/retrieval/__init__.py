"""Finding evidence: the sentence embedder (torch or ONNX), its warm-up, the KG workspace."""
