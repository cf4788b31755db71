"""The LLM client's faults: a damaged llm.sqlite and a server answering prose, each reproduced and checked
(a hanging server is in test_llm_concurrency.py)."""

from __future__ import annotations

import logging
import re
import sqlite3
from collections import Counter

from fakes import ScriptedBackend

from temporag.answer.readers import read_many, reply_parses
from temporag.config import get_settings
from temporag.llm import LLM, ResponseCache, call_stats, database_problem
from temporag.llm import cache as cache_mod
from temporag.llm.stub import StubServer


def msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def fill_cache(cache_dir, n: int) -> None:
    cache = ResponseCache(cache_dir / "llm.sqlite")
    backend = ScriptedBackend(lambda u: f"answer {u}")
    llm = LLM(get_settings(cache_dir=cache_dir), backend=backend, cache=cache)
    for i in range(n):
        llm.chat(msgs(f"prompt {i} " + "padding " * 40))
    cache.close()  # the last connection checkpoints the WAL into the file


def garble(path, pages: list[int]) -> None:
    with sqlite3.connect(path) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    with open(path, "r+b") as f:
        for page in pages:
            f.seek(page * page_size + 8)  # inside the page, past nothing: its header and cells
            f.write(bytes(range(256)) * (page_size // 256 - 1))


def new_process() -> None:
    """What a new run sees: the database not yet checked in this process."""
    cache_mod._CHECKED.clear()


def test_a_damaged_cache_is_moved_aside_and_its_readable_answers_salvaged(tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    fill_cache(cache_dir, 200)
    path = cache_dir / "llm.sqlite"
    garble(path, [5, 6, 20])
    assert database_problem(path) is not None  # sqlite's own check sees the damage
    new_process()
    backend = ScriptedBackend(lambda u: f"answer {u}")
    llm = LLM(get_settings(cache_dir=cache_dir), backend=backend)
    with caplog.at_level(logging.WARNING, logger="temporag.llm"):
        first = llm.chat(msgs("prompt 0 " + "padding " * 40))
    warnings = [r.getMessage() for r in caplog.records if "damaged" in r.getMessage()]
    assert len(warnings) == 1 and "\n" not in warnings[0]  # one line
    assert "moved aside" in warnings[0] and "quick_check" in warnings[0]
    aside = list(cache_dir.glob("llm.sqlite.damaged-*"))
    assert len(aside) == 1 and aside[0].name in warnings[0]
    assert database_problem(path) is None
    salvaged = int(re.search(r"(\d+) answers salvaged", warnings[0]).group(1))
    assert 100 < salvaged < 200, salvaged  # most rows read; those on the garbled pages are asked again
    for i in range(1, 200):
        llm.chat(msgs(f"prompt {i} " + "padding " * 40))
    assert backend.calls == 200 - salvaged  # only the lost answers were asked again
    assert first.text == "answer prompt 0 " + "padding " * 40
    assert len(ResponseCache(path)) == 200


def test_a_cache_that_is_not_a_database_is_replaced(tmp_path, caplog):
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / "llm.sqlite").write_bytes(b"this is not sqlite at all" * 200)
    new_process()
    backend = ScriptedBackend("['Iran']")
    with caplog.at_level(logging.WARNING, logger="temporag.llm"):
        response = LLM(get_settings(cache_dir=cache_dir), backend=backend).chat(msgs("q"))
    assert response.text == "['Iran']" and backend.calls == 1
    assert any("not a database" in r.getMessage() for r in caplog.records)
    assert len(list(cache_dir.glob("llm.sqlite.damaged-*"))) == 1


def test_prose_for_a_list_is_unparsed_not_cached_and_asked_again_once_fixed(tmp_path):
    prose = (
        "Thank you for your question. Based on the facts above I believe that several countries might have "
        "been involved, but it is hard to tell from the information given here."
    )
    assert not reply_parses(prose) and reply_parses("['Iran']") and reply_parses("Answer: Iran")
    questions = ["Who visited Iran?", "Who criticized Iraq?"]
    evidence = [["China Make a visit Iran on 2014-01-02"], ["Germany Criticize Iraq on 2014-02-03"]]
    settings = dict(cache_dir=tmp_path / "cache", llm_concurrency=2)
    with StubServer(service_s=0.0, reply=lambda p: prose) as server:
        llm = LLM(get_settings(llm_base_url=server.url, **settings).replace(llm_model="stub"))
        before = call_stats()
        broken = read_many(llm, questions, evidence, progress=False)
        after = call_stats()
    assert [r.unparsed for r in broken] == [True, True] and all(r.answers == [] for r in broken)
    assert after["unparsed"] - before["unparsed"] == 2 and after["failed"] == before["failed"]
    assert len(ResponseCache(tmp_path / "cache" / "llm.sqlite")) == 0  # never cached as a good answer
    # the server is fixed (the same URL and model): the re-run asks again and reads real answers
    with StubServer(service_s=0.0, reply=lambda p: "['China']") as fixed:
        llm = LLM(get_settings(llm_base_url=server.url, **settings).replace(llm_model="stub"))
        llm.backend._client = LLM(get_settings(llm_base_url=fixed.url, **settings)).backend._client
        again = read_many(llm, questions, evidence, progress=False)
        assert sum(fixed.requests.values()) == 2
    assert [r.answers for r in again] == [["China"], ["China"]] and not any(r.unparsed for r in again)
    assert Counter(r.response.cached for r in again) == Counter({False: 2})
