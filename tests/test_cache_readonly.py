"""A read-only cache serves every entry it holds (issue 35): the LLM cache's answers without a lock and
without a failed call, its misses sent and said in one line, and the content cache's entries read without
a byte written.

Read-only two ways: a read-only bind mount (as root, where ``mount`` works), and a ``chmod -R a-w`` copy
with ``TEMPORAG_CACHE_READONLY=1`` (root ignores permission bits, so the setting is what a root user —
and this test — has to say)."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from fakes import ScriptedBackend

from temporag import cache as content
from temporag.config import get_settings
from temporag.llm import LLM, ResponseCache

PROMPTS = [f"question {i}" for i in range(6)]


def msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def _mount_read_only(src: Path, target: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    target.mkdir()
    if subprocess.run(["mount", "--bind", str(src), str(target)], capture_output=True).returncode:
        return False
    if subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], capture_output=True).returncode:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)
        return False
    return True


def _chmod_read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _chmod_writable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


@pytest.fixture(params=["mount", "chmod"])
def read_only(request, tmp_path, monkeypatch):
    """``read_only(src) -> Path``: a read-only view of the folder ``src`` (a bind mount, or a chmod-ed
    copy with the setting that says it is read-only)."""
    made: list[tuple[str, Path]] = []

    def view(src: Path) -> Path:
        if request.param == "mount":
            target = tmp_path / "mounted"
            if not _mount_read_only(src, target):
                pytest.skip("a read-only bind mount needs root and a working mount(8)")
            made.append(("mount", target))
            return target
        target = tmp_path / "copy"
        shutil.copytree(src, target)
        _chmod_read_only(target)
        made.append(("chmod", target))
        if os.geteuid() == 0 or os.access(target, os.W_OK):  # permission bits do not stop this user
            monkeypatch.setenv("TEMPORAG_CACHE_READONLY", "1")
        return target

    yield view
    for kind, target in made:
        if kind == "mount":
            subprocess.run(["umount", "-l", str(target)], check=True)
        else:
            _chmod_writable(target)


def _fill(cache_dir: Path) -> None:
    llm = LLM(get_settings(cache_dir=cache_dir), backend=ScriptedBackend(lambda u: f"['{u}']"))
    for prompt in PROMPTS:
        llm.chat(msgs(prompt))
    llm._cache.close()


def _digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_read_only_llm_cache_serves_every_answer_and_sends_a_miss(tmp_path, read_only, caplog):
    _fill(tmp_path / "cache")
    cache_dir = read_only(tmp_path / "cache")
    before = _digests(cache_dir)
    backend = ScriptedBackend(lambda u: f"['{u}']")
    llm = LLM(get_settings(cache_dir=cache_dir), backend=backend, retry_base_delay=0.001, concurrency=4)
    assert llm._cache.read_only
    t0 = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="temporag.llm"):
        out = llm.chat_many([msgs(p) for p in [*PROMPTS, "a new question"]], progress=False)
    elapsed = time.perf_counter() - t0

    assert [r.error for r in out] == [None] * 7
    assert [r.cached for r in out] == [True] * 6 + [False]
    assert [r.text for r in out] == [f"['{p}']" for p in PROMPTS] + ["['a new question']"]
    assert backend.calls == 1  # only the miss reached the server
    assert elapsed < 3.0  # no lock, no retried connection (9.5 s per call before)
    said = [r.getMessage() for r in caplog.records if "read-only" in r.getMessage()]
    assert len(said) == 1 and "answer not cached" in said[0], said
    llm._cache.close()
    assert _digests(cache_dir) == before  # not a byte written


def test_read_only_llm_cache_without_a_file_sends_every_call(tmp_path, read_only):
    (tmp_path / "empty").mkdir()
    cache_dir = read_only(tmp_path / "empty")
    backend = ScriptedBackend("['x']")
    llm = LLM(get_settings(cache_dir=cache_dir), backend=backend, retry_base_delay=0.001)
    assert llm.chat(msgs("q")).text == "['x']" and llm.chat(msgs("q")).text == "['x']"
    assert backend.calls == 2 and not (cache_dir / "llm.sqlite").exists()


def test_read_only_llm_cache_reads_a_write_ahead_log_left_behind(tmp_path, read_only):
    """A run killed before its last connection closed leaves answers in ``llm.sqlite-wal``: read them
    where sqlite can (its ``-shm`` is there too)."""
    import sqlite3

    src = tmp_path / "cache"
    writer = ResponseCache(src / "llm.sqlite")
    record = {
        "text": "kept",
        "prompt_tokens": 1,
        "completion_tokens": 1,
        "token_source": "t",
        "latency_s": 0.1,
    }
    writer.put("k-main", "m", "e", {**record, "model": "m"})
    conn = writer._connect()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    writer.put("k-wal", "m", "e", {**record, "model": "m", "text": "in the log"})
    copy = tmp_path / "killed"
    shutil.copytree(src, copy)  # as a killed run leaves it: file, -wal and -shm
    writer.close()
    assert (copy / "llm.sqlite-wal").stat().st_size > 0
    file_alone = sqlite3.connect(f"{(copy / 'llm.sqlite').as_uri()}?immutable=1", uri=True)
    assert file_alone.execute("SELECT key FROM responses").fetchall() == [("k-main",)]  # k-wal: log only
    file_alone.close()
    cache = ResponseCache(read_only(copy) / "llm.sqlite")
    assert cache.read_only
    assert cache.get("k-main")["text"] == "kept"
    got = cache.get("k-wal")
    assert got is not None and got["text"] == "in the log"
    cache.close()


def test_read_only_content_cache_reads_entries_and_writes_nothing(tmp_path, read_only):
    src = tmp_path / "cache"
    vectors = np.eye(3, dtype=np.float32)
    content.save_npy(content.cache_path("embeddings", "hashed", ".npy", src), vectors)
    content.save_tree(content.cache_path("star_rag", "graph", ".npz", src), {"rules": (1, 2)}, ())
    model = src / "timer4" / "model"
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    content.record_folder(model)
    cache_dir = read_only(src)
    before = _digests(cache_dir)

    path = content.cache_path("embeddings", "hashed", ".npy", cache_dir)
    np.testing.assert_array_equal(content.load_npy(path), vectors)
    assert content.load_tree(content.cache_path("star_rag", "graph", ".npz", cache_dir), ()) == {
        "rules": (1, 2)
    }
    assert content.check_folder(cache_dir / "timer4" / "model")
    assert content.read_only(cache_dir)
    assert _digests(cache_dir) == before  # no sidecar, no manifest, no lock file left
