"""One module per paper (plus baselines); each exposes the paper's steps and one ``pipeline()``."""
