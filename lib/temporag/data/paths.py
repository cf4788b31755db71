"""Locating and opening data files under the data setting (plain or gzip-compressed)."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import IO

from temporag.config import get_settings
from temporag.data.errors import MissingDataError


def data_file(relative: str, dataset: str, data_dir: str | Path | None = None) -> Path:
    """Path of ``relative`` under the data folder, accepting the file with or without ``.gz``."""
    root = Path(data_dir) if data_dir is not None else get_settings().data_dir
    plain = root / relative
    candidates = (
        [plain, plain.with_name(plain.name + ".gz")]
        if not relative.endswith(".gz")
        else [
            plain,
            plain.with_name(plain.name[:-3]),
        ]
    )
    for candidate in candidates:
        if candidate.exists():
            return candidate
    raise MissingDataError(candidates[-1] if not relative.endswith(".gz") else plain, dataset)


def open_text(path: str | Path, newline: str | None = None) -> IO[str]:
    """Open a text file, transparently un-gzipping ``*.gz``; ``newline`` as for ``open``."""
    path = Path(path)
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline=newline)
    return open(path, encoding="utf-8", newline=newline)
