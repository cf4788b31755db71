"""Checking, mirroring and downloading the data files listed in ``catalog``.

``check`` says for every known file whether it is present and has the expected content.
``fetch`` fills a data folder either from a local staged folder (offline: symlinks by default, or
copies) or from the pinned source URLs (online), and never leaves a file it has not verified.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import shutil
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tqdm.auto import tqdm

from temporag.cache import atomic_write
from temporag.config import get_settings
from temporag.data import catalog
from temporag.data.catalog import DataFile
from temporag.data.errors import MissingDataError

log = logging.getLogger(__name__)

PROGRESS_MIN_BYTES = 8 << 20  # show a progress bar when hashing/downloading more than this
_CHUNK = 1 << 20


class ChecksumError(ValueError):
    """A file's content is not what the catalog says: corrupt, truncated or a different release."""


class FetchError(RuntimeError):
    """A file could not be obtained (offline, moved URL, or no public source)."""


@dataclass(frozen=True)
class CheckResult:
    """``status``: ok | unverified (no checksum known) | missing | mismatch."""

    dataset: str
    path: str
    required: bool
    status: str
    found: Path | None = None
    expected: str | None = None
    actual: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        """True unless the file is corrupt, or required and missing."""
        return self.status in ("ok", "unverified") or (self.status == "missing" and not self.required)


def _hash_stream(
    stream: IO[bytes], total: int | None, label: str, show: bool = True, copy_to: IO[bytes] | None = None
) -> str:
    """sha256 of the bytes ``stream`` yields, each block also written to ``copy_to`` when given; a byte
    progress bar when ``show`` and ``total`` (None: unknown) is not below ``PROGRESS_MIN_BYTES``."""
    h = hashlib.sha256()
    with tqdm(
        total=total,
        unit="B",
        unit_scale=True,
        desc=label,
        leave=False,
        disable=not show or (total is not None and total < PROGRESS_MIN_BYTES),
    ) as bar:
        for block in iter(lambda: stream.read(_CHUNK), b""):
            h.update(block)
            if copy_to is not None:
                copy_to.write(block)
            bar.update(len(block))
    return h.hexdigest()


def _sha_file(path: Path, label: str, progress: bool = True) -> str:
    with open(path, "rb") as f:
        return _hash_stream(f, path.stat().st_size, label, progress)


def _sha_gunzip(path: Path, total: int | None, label: str, progress: bool = True) -> str | None:
    """sha256 of the decompressed content, or None when the gzip stream is broken."""
    try:
        with gzip.open(path, "rb") as f:
            return _hash_stream(f, total, label, progress and total is not None)
    except (OSError, EOFError, zlib.error):
        return None


def how_to_get(entry: DataFile) -> str:
    """The command that obtains a file: a download when it has a public source, else a mirror."""
    if entry.url is not None:
        return f"temporag data fetch {entry.dataset}   (downloads {entry.url})"
    return (
        f"temporag data fetch {entry.dataset} --from DIR   (no public source: derived by the kit's "
        "staging; mirror it from a staged folder such as ../shared/data)"
    )


def locate(entry: DataFile, root: Path) -> Path | None:
    """The file of ``entry`` under ``root``: plain or ``.gz`` (plain wins, as in ``data_file``)."""
    plain = root / entry.path
    for candidate in (plain, plain.with_name(plain.name + ".gz")):
        if candidate.exists():
            return candidate
    return None


def verify(entry: DataFile, path: Path, progress: bool = True) -> CheckResult:
    """Check one present file against the catalog (fast .gz hash first, content hash if needed)."""
    base = dict(dataset=entry.dataset, path=entry.path, required=entry.required, found=path)
    if entry.sha256 is None and entry.raw_sha256 is None:
        return CheckResult(status="unverified", message="no checksum known for this file", **base)
    if path.suffix == ".gz":
        actual = _sha_file(path, entry.path + ".gz", progress)
        if actual == entry.sha256 and not entry.verify_raw:
            return CheckResult(status="ok", expected=entry.sha256, actual=actual, **base)
        raw = _sha_gunzip(path, entry.size, entry.path, progress)
        if raw is None:
            return CheckResult(
                status="mismatch",
                expected=entry.raw_sha256,
                actual=actual,
                message="not a readable gzip file (truncated or corrupt)",
                **base,
            )
        return _against(entry.raw_sha256, raw, "uncompressed content has the wrong sha256", base)
    actual = _sha_file(path, entry.path, progress)
    return _against(entry.raw_sha256, actual, "content has the wrong sha256", base)


def _against(expected: str | None, actual: str, wrong: str, base: dict) -> CheckResult:
    """ok when the content hash is the catalog's, else a mismatch saying what was hashed (``wrong``)."""
    if actual == expected:
        return CheckResult(status="ok", expected=expected, actual=actual, **base)
    return CheckResult(status="mismatch", expected=expected, actual=actual, message=wrong, **base)


def check(dataset: str | None = None, data_dir: str | Path | None = None) -> list[CheckResult]:
    """Presence and checksum of every known file of ``dataset`` (all when None) under the data folder."""
    root = Path(data_dir) if data_dir is not None else get_settings().data_dir
    results = []
    for entry in catalog.files(dataset):
        path = locate(entry, root)
        if path is None:
            results.append(
                CheckResult(
                    entry.dataset,
                    entry.path,
                    entry.required,
                    "missing",
                    message="required" if entry.required else "optional, not staged",
                )
            )
        else:
            results.append(verify(entry, path))
    return results


# -- fetch ---------------------------------------------------------------------------------------------------


def _clear(target: Path) -> None:
    if target.is_symlink() or target.exists():
        target.unlink()


def _mirror(entry: DataFile, source: Path, dest: Path, copy: bool) -> Path:
    target = dest / (entry.path + ".gz" if source.name.endswith(".gz") else entry.path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and target.resolve() == source.resolve():
        return target
    if copy:
        atomic_write(target, lambda tmp: shutil.copyfile(source, tmp))
    else:
        _clear(target)
        os.symlink(source.resolve(), target)
    return target


def _download(url: str, out: Path, label: str, timeout: float) -> str:
    """Stream ``url`` into ``out``; returns the sha256 of the bytes received."""
    try:
        response = urllib.request.urlopen(url, timeout=timeout)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(
            f"cannot download {url}: {reason}. Offline? Mirror a staged folder instead: "
            f"fetch(dataset, dest, source_dir=...) or `temporag data fetch --from ../shared/data`"
        ) from exc
    with response, open(out, "wb") as f:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        return _hash_stream(response, total, label, copy_to=f)  # a bar also when the size is unknown


def _transform(kind: str | None, raw: Path, out: Path) -> None:
    if kind is None:
        os.replace(raw, out)
    elif kind == "gunzip":
        try:
            with gzip.open(raw, "rb") as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst, _CHUNK)
        except (OSError, EOFError, zlib.error) as exc:
            raise ChecksumError(f"the download is not a readable gzip file ({exc})") from exc
    elif kind == "lf_to_crlf":
        with open(raw, "rb") as src, open(out, "wb") as dst:
            for block in iter(lambda: src.read(_CHUNK), b""):
                dst.write(block.replace(b"\n", b"\r\n"))
    else:
        raise ValueError(f"unknown transform {kind!r}")


def _fetch_url(entry: DataFile, dest: Path, timeout: float) -> Path:
    target = dest / entry.path

    def write(tmp: Path) -> None:
        raw = tmp.with_name(tmp.name + ".download")
        try:
            got = _download(entry.url, raw, entry.path, timeout)
            if entry.url_sha256 is not None and got != entry.url_sha256:
                raise ChecksumError(f"{entry.url}: downloaded sha256 {got}, expected {entry.url_sha256}")
            _transform(entry.transform, raw, tmp)
        finally:
            if raw.exists():
                raw.unlink()
        actual = _sha_file(tmp, entry.path)
        if actual != entry.raw_sha256:
            raise ChecksumError(
                f"{entry.path} from {entry.url}: sha256 {actual}, expected {entry.raw_sha256} "
                "(the source changed or the download was cut)"
            )

    return atomic_write(target, write)


def fetch(
    dataset: str | None,
    dest: str | Path | None = None,
    source_dir: str | Path | None = None,
    copy: bool = False,
    timeout: float = 60.0,
) -> list[CheckResult]:
    """Fill ``dest`` (default: the data folder) with ``dataset``'s files (all when None or "all").

    With ``source_dir``: mirror that staged folder, verifying every file first; symlinks unless
    ``copy``.  Without: download the pinned URLs (files already present and verified are kept).
    Missing optional files are skipped; a missing required file, a checksum mismatch or a failed
    download raises (``MissingDataError`` / ``ChecksumError`` / ``FetchError``).
    """
    dest = Path(dest) if dest is not None else get_settings().data_dir
    entries = catalog.files(dataset)
    return (
        _mirror_all(entries, Path(source_dir), dest, copy)
        if source_dir is not None
        else _download_all(entries, dest, timeout)
    )


def _mirror_all(entries: Iterable[DataFile], source_dir: Path, dest: Path, copy: bool) -> list[CheckResult]:
    results = []
    for entry in entries:
        source = locate(entry, source_dir)
        if source is None:
            if entry.required:
                raise MissingDataError(source_dir / entry.path, entry.dataset)
            results.append(
                CheckResult(entry.dataset, entry.path, False, "missing", message="optional, not staged")
            )
            continue
        result = verify(entry, source)
        if not result.ok:
            raise ChecksumError(
                f"{source}: {result.message} (expected {result.expected}, got {result.actual}); not mirrored"
            )
        target = _mirror(entry, source, dest, copy)
        results.append(
            CheckResult(
                entry.dataset,
                entry.path,
                entry.required,
                result.status,
                target,
                result.expected,
                result.actual,
            )
        )
    return results


def _download_all(entries: Iterable[DataFile], dest: Path, timeout: float) -> list[CheckResult]:
    results, undownloadable = [], []
    for entry in entries:
        present = locate(entry, dest)
        current = verify(entry, present) if present is not None else None
        if current is not None and current.status in ("ok", "unverified"):
            results.append(current)
            continue
        if entry.url is None:
            if entry.required:
                undownloadable.append(entry.path)
            results.append(
                current
                or CheckResult(
                    entry.dataset,
                    entry.path,
                    entry.required,
                    "missing",
                    message="no public source; mirror it with source_dir",
                )
            )
            continue
        log.info("downloading %s", entry.url)
        target = _fetch_url(entry, dest, timeout)
        results.append(verify(entry, target))
    if undownloadable:
        raise FetchError(
            "these files have no public source in this form (derived by the kit's staging) — "
            "mirror them from a staged folder with fetch(..., source_dir=DIR) or "
            f"`temporag data fetch --from DIR`: {', '.join(undownloadable)}"
        )
    return results
