"""temporag — a Jupyter-first reproducibility kit for temporal RAG and TKGQA papers."""

__version__ = "0.1.0"
