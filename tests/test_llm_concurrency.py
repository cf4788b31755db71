"""The LLM client under concurrency: a concurrent run records exactly what a sequential one does,
and every promise of the client holds with many requests in flight — against a real OpenAI-compatible stub
server on 127.0.0.1 (:mod:`temporag.llm.stub`)."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from fakes import server_llm

from temporag.llm import LLM, call_stats
from temporag.llm.stub import StubServer, agent_reply

ACCOUNTED = ("calls", "cached", "failed", "unparsed", "prompt_tokens", "completion_tokens")


def msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


def client(tmp_path, url, concurrency, **settings) -> LLM:
    """A client of the stub server at ``url`` keeping ``concurrency`` requests in flight."""
    return server_llm(tmp_path, url, model="stub", concurrency=concurrency, **settings)


def record(r) -> tuple:
    return (r.text, r.cached, r.prompt_tokens, r.completion_tokens, r.token_source, r.error, r.unparsed)


def delta(before: dict, after: dict) -> dict:
    return {k: after[k] - before[k] for k in ACCOUNTED}


def test_concurrent_batch_records_exactly_what_a_sequential_one_does(tmp_path):
    prompts = [f"question {i % 30}" for i in range(40)]  # the last 10 repeat earlier ones
    with StubServer(service_s=0.05, slots=64, reply=lambda p: f"['{p.upper()}']") as server:
        s0 = call_stats()
        t0 = time.perf_counter()
        sequential = client(tmp_path / "seq", server.url, 1).chat_many(map(msgs, prompts), progress=False)
        t1 = time.perf_counter()
        s1 = call_stats()
        concurrent = client(tmp_path / "con", server.url, 8).chat_many(map(msgs, prompts), progress=False)
        t2 = time.perf_counter()
        s2 = call_stats()
        # each distinct request sent once per run (the repeats are cache hits or shared in flight)
        assert server.requests == Counter({f"question {i}": 2 for i in range(30)})
        assert server.peak_in_flight == 8
    assert [record(r) for r in concurrent] == [record(r) for r in sequential]
    assert [r.text for r in concurrent] == [f"['{p.upper()}']" for p in prompts]
    assert sum(r.cached for r in concurrent) == 10
    assert delta(s0, s1) == delta(s1, s2)  # calls, cache hits, tokens: exact under concurrency
    assert (t2 - t1) < (t1 - t0) / 3  # 8 in flight: 30 x 0.05 s in ~4 rounds, not 30


def test_threads_asking_the_same_thing_send_one_request(tmp_path):
    with StubServer(service_s=0.3, slots=64) as server:
        llm = client(tmp_path, server.url, 16)
        out = llm.chat_many([msgs("the same")] * 16, progress=False)
        assert server.requests == Counter({"the same": 1})
    assert [r.cached for r in out].count(False) == 1 and all(r.text == "['unknown']" for r in out)


def test_map_questions_keeps_each_questions_steps_in_order(tmp_path):
    with StubServer(service_s=0.02, slots=64, reply=lambda p: p.split()[-1]) as server:
        llm = client(tmp_path, server.url, 8)
        seen: dict[int, list[str]] = {}
        lock = threading.Lock()

        def steps(q: int) -> list[str]:
            replies = []
            for step in range(3):  # each step's prompt depends on the previous reply
                previous = replies[-1] if replies else "start"
                replies.append(llm.chat(msgs(f"q{q} after {previous} step{step}")).text)
                with lock:
                    seen.setdefault(q, []).append(replies[-1])
            return replies

        out = llm.map_questions(steps, list(range(12)), progress=False)
    assert out == [["step0", "step1", "step2"]] * 12 and all(v == out[0] for v in seen.values())


def test_a_429_retry_after_is_honoured(tmp_path):
    fault = lambda prompt, n: "429" if n == 1 else None  # noqa: E731 - the first request of each prompt
    with StubServer(service_s=0.01, slots=64, fault=fault, retry_after_s=0.4) as server:
        llm = client(tmp_path, server.url, 4)
        t0 = time.perf_counter()
        out = llm.chat_many([msgs(f"busy {i}") for i in range(4)], progress=False)
        elapsed = time.perf_counter() - t0
        assert server.requests == Counter({f"busy {i}": 2 for i in range(4)})
    assert all(r.ok for r in out)
    assert 0.4 <= elapsed < 2.0  # waited what the server asked (the backoff alone would be ~1 ms)


def test_the_breaker_stops_every_thread_at_once(tmp_path):
    with StubServer(service_s=0.01, slots=64, fault=lambda prompt, n: "500") as server:
        llm = client(tmp_path, server.url, 8, retries=4, breaker=3)
        out = llm.chat_many([msgs(f"down {i}") for i in range(80)], progress=False)
        sent = server.total_requests
    assert not any(r.ok for r in out)
    assert llm.breaker.open
    # at most the calls already in flight finish their attempts; nothing new is sent once it opened
    assert sent <= 8 * 5 + 8, sent
    assert sum(r.error.startswith("not calling") for r in out) >= 80 - 16


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_hanging_server_costs_two_timeouts_not_minutes(tmp_path, concurrency):
    # default retries (4) and breaker (3): the first question's retries stop within ~2 x timeout, when
    # the retry budget is used and the breaker opens for every thread (not 5 timeouts on the first
    # question and one more on each of the next two)
    timeout = 0.6
    with StubServer(service_s=0.0, fault=lambda prompt, n: "hang", hang_s=10.0) as server:
        llm = client(tmp_path, server.url, concurrency, timeout=timeout, retries=4, breaker=3)
        t0 = time.perf_counter()
        out = llm.chat_many([msgs(f"hang {i}") for i in range(10)], progress=False)
        elapsed = time.perf_counter() - t0
        sent = server.total_requests
    assert elapsed < 2 * timeout + 1.5, elapsed  # before: 7 x timeout, one request at a time
    assert sent <= 2 * concurrency
    assert all("Timeout" in r.error or "retry budget" in r.error for r in out)
    assert "retry budget" in out[-1].error and "TEMPORAG_LLM_RETRY_BUDGET" in out[-1].error


# ----------------------------------------------------------------------------------------------------
# a method end to end: SAR's agent (several LLM turns per question) concurrent vs sequential


def _without_timings(value):
    """results.json minus what a run's speed changes (seconds, settings): what must be identical."""
    if isinstance(value, dict):
        return {
            k: _without_timings(v)
            for k, v in value.items()
            if not (k.endswith(("_s", "_ms")) or k in ("settings", "created", "output_dir", "model_seconds"))
        }
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def test_sar_concurrent_run_writes_the_results_json_of_a_sequential_one(tmp_path, kg, questions):
    import json

    from temporag.methods.sar import SAR
    from temporag.methods.workspace import KGWorkspace
    from temporag.notebook.results import Results

    workspace = KGWorkspace(kg)
    qs = questions[:8]
    runs, sent = {}, {}
    with StubServer(service_s=0.05, slots=64, reply=agent_reply) as server:
        for name, concurrency in (("sequential", 1), ("concurrent", 6)):
            llm = client(tmp_path / name, server.url, concurrency)
            res = Results("sar_check", {}, out_dir=tmp_path / name / "out", settings=llm.settings)
            t0 = time.perf_counter()
            records = SAR(kg, workspace=workspace).pipeline(qs, llm, progress=False)
            runs[name] = time.perf_counter() - t0
            res.predictions("sar", [r.to_dict() for r in records])
            res.metric("answered", sum(r.answered for r in records))
            res.save()
            sent[name] = Counter(server.requests) - sum(sent.values(), Counter())
    # the concurrent run sent exactly the sequential one's requests (counted by their last message)
    assert sent["concurrent"] == sent["sequential"] and sum(sent["sequential"].values()) > 8
    seq, con = (
        json.loads((tmp_path / n / "out" / "results.json").read_text()) for n in ("sequential", "concurrent")
    )
    assert seq["settings"]["llm_concurrency"] == 1 and con["settings"]["llm_concurrency"] == 6
    assert seq["metrics"]["answered"] == 8
    seq_records, con_records = seq.pop("predictions")["sar"], con.pop("predictions")["sar"]
    for a, b in zip(_without_timings(con_records), _without_timings(seq_records), strict=True):
        assert a == b
    assert _without_timings(con) == _without_timings(seq)
    assert con["llm_calls"]["calls"] == seq["llm_calls"]["calls"] == 8 * 4
    assert runs["concurrent"] < runs["sequential"]
