"""The LLM client: cache, retries, errors, token accounting, against fakes and a real loopback server."""

from __future__ import annotations

import json
import multiprocessing
import socket
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fakes import ScriptedBackend, server_llm

from temporag import llm as llm_mod
from temporag.config import get_settings
from temporag.llm import (
    LLM,
    TOKENS_API,
    TOKENS_FALLBACK,
    TOKENS_MODEL,
    LLMError,
    LLMResponse,
    TransientLLMError,
    parse_json_reply,
    usage_summary,
)

FAST = 0.001  # retry base delay for tests


def msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


class FakeBackend(ScriptedBackend):
    """The shared scripted backend set up to raise the queued exceptions first, then echo the last user
    message (refusing FAIL), 11 + 3 tokens."""

    def __init__(
        self, failures: list[BaseException] | None = None, usage: bool = True, reply: str | None = None
    ):
        super().__init__(
            reply or (lambda user: f"echo {user}"),
            prompt_tokens=11,
            completion_tokens=3,
            fail_when=lambda user: "FAIL" in user,
            failures=failures,
            usage=usage,
        )


class TokenizingBackend(FakeBackend):
    def __init__(self):
        super().__init__(usage=False)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


@pytest.fixture()
def settings(tmp_path):
    return get_settings(cache_dir=tmp_path / "cache", llm_max_retries=3, llm_timeout=5.0)


def make(settings, backend, **kw) -> LLM:
    return LLM(settings, backend=backend, retry_base_delay=FAST, **kw)


# ----------------------------------------------------------------------------------------------------
# fake backend


def test_cached_call_is_not_repeated_within_and_across_clients(settings):
    backend = FakeBackend()
    client = make(settings, backend)
    first = client.chat(msgs("hello"))
    second = client.chat(msgs("hello"))
    assert backend.calls == 1
    assert not first.cached and second.cached
    assert second.text == first.text == "echo hello"
    assert second.original_latency_s == pytest.approx(first.latency_s)
    assert (second.prompt_tokens, second.completion_tokens, second.token_source) == (11, 3, TOKENS_API)
    assert (settings.cache_dir / "llm.sqlite").exists()

    # a re-run (new process, new client) reads the same cache: no call at all
    backend2 = FakeBackend()
    third = make(settings, backend2).chat(msgs("hello"))
    assert backend2.calls == 0 and third.cached and third.text == "echo hello"


def test_request_parameters_are_part_of_the_key(settings):
    backend = FakeBackend()
    client = make(settings, backend)
    client.chat(msgs("q"))
    client.chat(msgs("q"), temperature=0.7)
    client.chat(msgs("q"), json_mode=True)
    client.chat(msgs("q"), max_tokens=12)
    client.chat(msgs("q"), stop=["\n"])
    client.chat(msgs("other"))
    assert backend.calls == 6
    assert backend.params[2]["json_mode"] is True and backend.params[4]["stop"] == ["\n"]


def test_cache_can_be_disabled(settings):
    backend = FakeBackend()
    client = make(settings, backend, cache=False)
    client.chat(msgs("q"))
    assert not client.chat(msgs("q")).cached
    assert backend.calls == 2


def test_transient_failures_are_retried(settings):
    backend = FakeBackend(failures=[TimeoutError("slow"), ConnectionRefusedError("refused")])
    response = make(settings, backend).chat(msgs("retry me"))
    assert response.text == "echo retry me"
    assert backend.calls == 3


def test_persistent_failure_names_endpoint_model_and_cause(settings):
    backend = FakeBackend(failures=[TransientLLMError("overloaded")] * 10)
    with pytest.raises(LLMError) as info:
        make(settings, backend).chat(msgs("q"))
    message = str(info.value)
    assert "fake://local" in message and "fake-model" in message and "overloaded" in message
    assert "4 attempts" in message
    assert backend.calls == settings.llm_max_retries + 1


def test_non_transient_failure_is_not_retried_nor_cached(settings):
    backend = FakeBackend(failures=[ValueError("prompt too long")])
    client = make(settings, backend)
    with pytest.raises(LLMError, match="prompt too long"):
        client.chat(msgs("q"))
    assert backend.calls == 1
    assert not client.chat(msgs("q")).cached  # the failure was not stored
    assert backend.calls == 2


def test_backoff_doubles_with_jitter(settings, monkeypatch):
    delays: list[float] = []
    monkeypatch.setattr(llm_mod.time, "sleep", delays.append)
    backend = FakeBackend(failures=[TimeoutError()] * 3)
    LLM(settings, backend=backend, retry_base_delay=0.1).chat(msgs("q"))
    assert len(delays) == 3
    for i, delay in enumerate(delays):
        assert 0.1 * 2**i <= delay <= 0.1 * 2**i * 1.25


def test_chat_many_records_failures_and_goes_on(settings):
    backend = FakeBackend()
    batch = [msgs("a"), msgs("FAIL here"), msgs("c"), msgs("a")]
    out = make(settings, backend).chat_many(batch, progress=False)
    assert [r.ok for r in out] == [True, False, True, True]
    assert "FAIL" in out[1].error and out[1].text == ""
    assert out[3].cached
    summary = usage_summary(out)
    assert summary["calls"] == 4 and summary["errors"] == 1 and summary["cached"] == 1
    assert summary["prompt_tokens"] == 33 and summary["completion_tokens"] == 9
    assert summary["token_source"] == TOKENS_API


def test_token_count_fallbacks_are_labelled(settings):
    plain = make(settings, FakeBackend(usage=False), cache=False).chat(msgs("count these tokens please"))
    assert plain.token_source == TOKENS_FALLBACK
    assert plain.prompt_tokens > 4 and plain.completion_tokens > 2
    tok = make(settings, TokenizingBackend(), cache=False).chat(msgs("one two three"))
    assert tok.token_source == TOKENS_MODEL
    assert tok.completion_tokens == len("echo one two three".split())


def test_usage_summary_uses_original_latency_for_cached():
    def r(latency, cached=False, original=None, error=None, p=10, c=2):
        return LLMResponse(
            "x", p, c, TOKENS_API, latency, cached, "m", error=error, original_latency_s=original
        )

    summary = usage_summary(
        [r(2.0, original=2.0), r(0.001, True, original=4.0), r(0.5, error="boom", p=0, c=0)]
    )
    assert summary["calls"] == 3 and summary["errors"] == 1 and summary["cached"] == 1
    assert summary["mean_latency_s"] == pytest.approx(3.0)
    assert summary["mean_prompt_tokens"] == pytest.approx(10.0)
    assert summary["wall_s"] == pytest.approx(2.501)
    assert usage_summary([])["calls"] == 0


def test_bad_inputs_fail_early(settings):
    client = make(settings, FakeBackend())
    with pytest.raises(ValueError, match="non-empty"):
        client.chat([])
    with pytest.raises(ValueError, match=r"messages\[1\]"):
        client.chat([{"role": "user", "content": "x"}, {"content": "no role"}])
    with pytest.raises(TypeError, match="complete"):
        LLM(settings, backend=object())


def test_malformed_completion_is_an_error(settings):
    class Broken(FakeBackend):
        def complete(self, messages, params):
            self.calls += 1
            return {"error": "nothing here"}

    with pytest.raises(LLMError, match="no chat completion"):
        make(settings, Broken()).chat(msgs("q"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('Sure! Here it is:\n```json\n{"answers": ["Iran"]}\n```\nHope this helps.', {"answers": ["Iran"]}),
        ("The result is [1, 2, 3] as requested.", [1, 2, 3]),
        ('prefix {not json} then {"ok": true}', {"ok": True}),
        ('```\n[{"s": "Iran"}]\n```', [{"s": "Iran"}]),
    ],
)
def test_parse_json_reply(text, expected):
    assert parse_json_reply(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", "{'single': 'quotes'}", '{"cut": [1, 2'])
def test_parse_json_reply_raises_clearly(text):
    with pytest.raises(LLMError, match="no JSON"):
        parse_json_reply(text)


def _worker(cache_dir: str, worker: int, n: int) -> int:
    settings = get_settings(cache_dir=cache_dir)
    client = LLM(settings, backend=FakeBackend(), retry_base_delay=FAST)
    for i in range(n):
        client.chat(msgs(f"shared {i % 10}"))  # all workers write the same 10 keys
        client.chat(msgs(f"own {worker} {i}"))
    return client.backend.calls


def test_cache_is_safe_across_processes(tmp_path):
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(3) as pool:
        calls = pool.starmap(_worker, [(str(tmp_path), w, 20) for w in range(3)])
    assert all(20 <= c <= 40 for c in calls)
    with sqlite3.connect(tmp_path / "llm.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 10 + 3 * 20


# ----------------------------------------------------------------------------------------------------
# a real OpenAI-compatible server on the loopback interface


class FakeOpenAIServer:
    """Tiny /v1/chat/completions + /v1/models server; ``script`` lists what each request gets."""

    def __init__(
        self,
        script=(),
        reply="ok from server",
        usage=True,
        hang_s=1.5,
        default="ok",
        models_up=True,
        delay_s=0.0,
    ):
        self.script = list(script)
        self.reply = reply
        self.usage = usage
        self.hang_s = hang_s
        self.default = default  # what a request gets once the script is used up
        self.models_up = models_up  # False: GET /models answers 503
        self.delay_s = delay_s  # seconds every completion takes
        self.hits = 0
        self.gets = 0
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def _send(self, status: int, payload, content_type="application/json"):
                body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def do_GET(self):
                with server.lock:
                    server.gets += 1
                if self.path.endswith("/models") and not server.models_up:
                    self._send(503, {"error": {"message": "models endpoint down", "type": "server_error"}})
                elif self.path.endswith("/models"):
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": [
                                {"id": "served-model", "object": "model", "created": 0, "owned_by": "test"}
                            ],
                        },
                    )
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.hits += 1
                    server.bodies.append(body)
                    action = server.script.pop(0) if server.script else server.default
                if "FAIL" in body["messages"][-1]["content"]:
                    action = "500"
                if action == "500":
                    self._send(500, {"error": {"message": "internal error", "type": "server_error"}})
                elif action == "400":
                    self._send(400, {"error": {"message": "bad request", "type": "invalid_request_error"}})
                elif action == "garbage":
                    self._send(200, b"<html>proxy login</html>", content_type="text/html")
                elif action == "truncated":  # a JSON content type with the body cut short
                    self._send(200, json.dumps(server.completion(body)).encode()[:40])
                elif action == "nochoices":
                    self._send(200, {"object": "error", "message": "model is loading"})
                else:
                    if action == "hang":
                        time.sleep(server.hang_s)
                    time.sleep(server.delay_s)
                    self._send(200, server.completion(body))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def completion(self, body: dict) -> dict:
        out = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "served-model"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": self.reply}, "finish_reason": "stop"}
            ],
        }
        if self.usage:
            out["usage"] = {"prompt_tokens": 21, "completion_tokens": 4, "total_tokens": 25}
        return out

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def test_server_500_twice_then_success_then_cached(tmp_path):
    with FakeOpenAIServer(script=["500", "500", "ok"]) as server:
        client = server_llm(tmp_path, server.url)
        response = client.chat(msgs("hi"))
        assert response.text == "ok from server" and not response.cached
        assert server.hits == 3
        assert (response.prompt_tokens, response.completion_tokens, response.token_source) == (
            21,
            4,
            TOKENS_API,
        )
        assert server.bodies[-1]["model"] == "test-model" and server.bodies[-1]["temperature"] == 0.0
        again = client.chat(msgs("hi"))
        assert again.cached and again.text == response.text
        assert server.hits == 3  # not repeated


def test_server_hang_times_out_retries_then_raises(tmp_path):
    with FakeOpenAIServer(script=["hang", "hang"], hang_s=1.5) as server:
        client = server_llm(tmp_path, server.url, timeout=0.3, retries=1)
        t0 = time.perf_counter()
        with pytest.raises(LLMError) as info:
            client.chat(msgs("slow"))
        elapsed = time.perf_counter() - t0
        assert server.hits == 2
        assert elapsed < 1.4  # gave up on its own timeout, not the server's sleep
        message = str(info.value)
        assert server.url in message and "test-model" in message and "2 attempts" in message
        assert "Timeout" in message


def test_refused_connection_is_retried_then_named(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"  # nothing listens here any more
    with pytest.raises(LLMError) as info:
        server_llm(tmp_path, url, retries=2).chat(msgs("anyone?"))
    assert url in str(info.value) and "3 attempts" in str(info.value) and "Connection" in str(info.value)


def test_client_error_is_not_retried(tmp_path):
    with FakeOpenAIServer(script=["400"]) as server:
        with pytest.raises(LLMError, match="BadRequestError"):
            server_llm(tmp_path, server.url).chat(msgs("bad"))
        assert server.hits == 1


def test_non_json_body_is_a_clear_error(tmp_path):
    with FakeOpenAIServer(script=["garbage"]) as server:
        with pytest.raises(LLMError, match=r"proxy login|chat completion"):
            server_llm(tmp_path, server.url, retries=0).chat(msgs("q"))


def test_json_mode_with_malformed_reply(tmp_path):
    with FakeOpenAIServer(reply='Here you go: {"answers": ["Iran", "Ira') as server:
        client = server_llm(tmp_path, server.url)
        response = client.chat(msgs("answer in JSON"), json_mode=True)
        assert server.bodies[-1]["response_format"] == {"type": "json_object"}
        with pytest.raises(LLMError, match="no JSON object or list"):
            parse_json_reply(response.text)
        with pytest.raises(LLMError):
            client.chat_json(msgs("answer in JSON"))
        # chat_json checks the reply: the cached one holds no JSON, so it was dropped and asked again
        assert server.hits == 2
        with pytest.raises(LLMError):
            client.chat_json(msgs("answer in JSON"))
        assert server.hits == 3  # and the unparsable reply was not cached either
    with FakeOpenAIServer(reply='Sure:\n```json\n{"answers": ["Iran"]}\n```') as server:
        obj, _ = server_llm(tmp_path / "b", server.url).chat_json(msgs("answer in JSON"))
        assert obj == {"answers": ["Iran"]}


def test_server_batch_records_failed_item_and_continues(tmp_path):
    with FakeOpenAIServer() as server:
        client = server_llm(tmp_path, server.url, retries=1)
        out = client.chat_many([msgs("one"), msgs("FAIL two"), msgs("three")], progress=False)
        assert [r.ok for r in out] == [True, False, True]
        assert server.url in out[1].error and "InternalServerError" in out[1].error
        assert server.hits == 1 + 2 + 1  # the failing item was tried twice


def test_server_without_usage_falls_back_to_cl100k(tmp_path):
    with FakeOpenAIServer(usage=False, reply="Iran and Iraq") as server:
        response = server_llm(tmp_path, server.url).chat(msgs("which countries?"))
        assert response.token_source == TOKENS_FALLBACK
        assert response.completion_tokens == 3 and response.prompt_tokens > 0


def test_model_is_discovered_when_not_set(tmp_path):
    with FakeOpenAIServer() as server:
        client = server_llm(tmp_path, server.url, model=None)
        assert client.model_name == "served-model"
        client.chat(msgs("q"))
        assert server.bodies[-1]["model"] == "served-model"
        assert client.describe()["endpoint"] == server.url


# ----------------------------------------------------------------------------------------------------
# an outage fails fast: the circuit breaker


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens here any more


def test_server_down_opens_the_breaker_and_records_the_rest(tmp_path):
    # 10 questions against a server answering 500: the first call gets its 5 attempts, the next two one
    # each, then the breaker opens and the last 7 are recorded as failed without a request
    with FakeOpenAIServer(default="500") as server:
        client = server_llm(tmp_path, server.url, retries=4, breaker=3)
        out = client.chat_many([msgs(f"q{i}") for i in range(10)], progress=False)
        assert server.hits == 5 + 1 + 1
    assert [r.ok for r in out] == [False] * 10
    assert "5 attempts" in out[0].error and "InternalServerError" in out[0].error
    assert "1 attempt;" in out[1].error
    for r in out[3:]:
        assert r.error.startswith(f"not calling {server.url} any more")
        assert "last 3 calls failed" in r.error and "InternalServerError" in r.error
        assert "run the same command again" in r.error


def test_hanging_server_costs_a_bounded_number_of_timeouts(tmp_path):
    with FakeOpenAIServer(default="hang", hang_s=3.0) as server:
        client = server_llm(tmp_path, server.url, timeout=0.25, retries=2, breaker=2)
        t0 = time.perf_counter()
        out = client.chat_many([msgs(f"slow {i}") for i in range(8)], progress=False)
        elapsed = time.perf_counter() - t0
        # two timeouts use the retry budget (2 x timeout): the breaker opens within the first question
        assert server.hits == 2
    assert elapsed < 2 * 0.25 + 1.0, elapsed  # ~2 timeouts, not 8 questions x 3 attempts
    assert all("Timeout" in r.error for r in out)
    assert all("not calling" in r.error for r in out[1:])
    assert "retry budget" in out[1].error


def test_refused_connection_opens_the_breaker(tmp_path):
    url = _closed_port_url()
    client = server_llm(tmp_path, url, retries=2, breaker=2)
    t0 = time.perf_counter()
    out = client.chat_many([msgs(f"anyone {i}?") for i in range(6)], progress=False)
    assert time.perf_counter() - t0 < 3.0
    assert all("Connection" in r.error for r in out)
    assert [("not calling" in r.error) for r in out] == [False, False, True, True, True, True]
    # every client of that endpoint in this process sees the open breaker, and the stats count the calls
    with pytest.raises(llm_mod.LLMUnavailable, match="not calling"):
        server_llm(tmp_path / "other", url, retries=2, breaker=2).chat(msgs("again"))


def test_transient_blips_do_not_open_the_breaker(tmp_path):
    # each call fails once then succeeds: the successes reset the count, so all 4 are answered
    with FakeOpenAIServer(script=["500", "ok", "500", "ok", "500", "ok", "500", "ok"]) as server:
        client = server_llm(tmp_path, server.url, retries=2, breaker=2)
        out = client.chat_many([msgs(f"blip {i}") for i in range(4)], progress=False)
        assert [r.ok for r in out] == [True] * 4 and server.hits == 8
        assert not client.breaker.open


def test_breaker_open_still_serves_cached_answers(tmp_path):
    with FakeOpenAIServer() as server:
        client = server_llm(tmp_path, server.url, breaker=1, retries=0)
        client.chat(msgs("cached one"))
        server.default = "500"
        with pytest.raises(LLMError):
            client.chat(msgs("new one"))
        assert client.breaker.open
        hits = server.hits
        out = client.chat_many([msgs("cached one"), msgs("another new one")], progress=False)
        assert out[0].ok and out[0].cached and "not calling" in out[1].error
        assert server.hits == hits


def test_call_stats_count_calls_and_failures(tmp_path):
    before = llm_mod.call_stats()
    client = make(get_settings(cache_dir=tmp_path / "c", llm_max_retries=0), FakeBackend())
    client.chat_many([msgs("a"), msgs("a"), msgs("FAIL b")], progress=False)
    after = llm_mod.call_stats()
    assert after["calls"] - before["calls"] == 3
    assert after["cached"] - before["cached"] == 1
    assert after["failed"] - before["failed"] == 1 and "refuses this prompt: 'FAIL b'" in after["last_error"]


# ----------------------------------------------------------------------------------------------------
# a malformed body keeps its raw text and is retried like a transient failure


@pytest.mark.parametrize("action", ["garbage", "truncated", "nochoices"])
def test_malformed_body_is_retried_then_succeeds(tmp_path, action):
    with FakeOpenAIServer(script=[action]) as server:
        response = server_llm(tmp_path, server.url, retries=2).chat(msgs("q"))
        assert response.text == "ok from server" and server.hits == 2


def test_malformed_body_error_keeps_the_raw_text(tmp_path):
    with FakeOpenAIServer(default="garbage") as server:
        with pytest.raises(LLMError) as info:
            server_llm(tmp_path, server.url, retries=1).chat(msgs("q"))
        assert server.hits == 2
    assert "<html>proxy login</html>" in str(info.value) and "2 attempts" in str(info.value)
    assert info.value.__cause__.raw_text == "<html>proxy login</html>"


# ----------------------------------------------------------------------------------------------------
# the client works offline from its cache


def test_cached_rerun_works_while_models_endpoint_is_down(tmp_path):
    with FakeOpenAIServer() as server:
        first = server_llm(tmp_path, server.url, model=None)
        assert first.chat(msgs("q")).text == "ok from server"
        assert server.gets == 1 and server.hits == 1
        server.models_up, server.default = False, "500"  # the server breaks
        llm_mod.reset_breakers()  # a new run: nothing discovered in this process yet
        client = server_llm(tmp_path, server.url, model=None)
        again = client.chat(msgs("q"))
        assert again.cached and again.text == "ok from server"
        assert client.model_name == "served-model"  # remembered in the cache from the first run
        assert server.gets == 2 and server.hits == 1  # asked /models once, sent no completion


def test_unresolvable_model_is_named_once_and_repr_stays_offline(tmp_path):
    with FakeOpenAIServer(models_up=False) as server:
        client = server_llm(tmp_path, server.url, model=None, breaker=5)
        assert "not resolved" in repr(client) and server.gets == 0
        for _ in range(3):
            with pytest.raises(llm_mod.EndpointError, match="set TEMPORAG_LLM_MODEL") as info:
                client.chat(msgs("q"))
        assert server.gets == 1 and server.hits == 0  # asked once, never sent a request without a model
        assert "models endpoint down" in str(info.value)
        out = client.chat_many([msgs("q")], progress=False)
        assert out[0].model == "unknown" and "TEMPORAG_LLM_MODEL" in out[0].error


def test_repr_never_touches_an_unreachable_endpoint(tmp_path):
    client = server_llm(tmp_path, _closed_port_url(), model=None)
    t0 = time.perf_counter()
    text = repr(client)
    assert time.perf_counter() - t0 < 0.1 and "not resolved" in text and "127.0.0.1" in text


# ----------------------------------------------------------------------------------------------------
# a bad row in the LLM cache heals


def test_bad_cache_row_is_removed_and_recomputed(tmp_path, settings, caplog):
    backend = FakeBackend()
    client = make(settings, backend)
    client.chat(msgs("hello"))
    params = {"temperature": 0.0, "max_tokens": 256, "stop": None, "json_mode": False}
    key = client.request_key(msgs("hello"), params)
    db = settings.cache_dir / "llm.sqlite"
    with sqlite3.connect(db) as conn:
        cut = conn.execute("UPDATE responses SET response = ? WHERE key = ?", ('{"text": "cut', key))
        assert cut.rowcount == 1
    with caplog.at_level("WARNING", logger="temporag.llm"):
        healed = make(settings, backend).chat(msgs("hello"))
    assert not healed.cached and healed.text == "echo hello" and backend.calls == 2
    assert str(db) in caplog.text and key in caplog.text and "signature does not match" in caplog.text
    assert make(settings, FakeBackend()).chat(msgs("hello")).cached  # rewritten, valid again
    with sqlite3.connect(db) as conn:  # a row of the wrong shape heals the same way
        conn.execute("UPDATE responses SET response = ? WHERE key = ?", ('{"text": 3}', key))
    assert not make(settings, backend).chat(msgs("hello")).cached and backend.calls == 3


# ----------------------------------------------------------------------------------------------------
# two runs, one cache, no double spending


def _same_prompts(url: str, cache_dir: str, n: int) -> None:
    settings = get_settings(cache_dir=cache_dir, llm_base_url=url).replace(llm_model="test-model")
    LLM(settings, retry_base_delay=FAST).chat_many([msgs(f"shared {i}") for i in range(n)], progress=False)


def test_concurrent_runs_sharing_the_cache_send_each_prompt_once(tmp_path):
    with FakeOpenAIServer(delay_s=0.15) as server:
        ctx = multiprocessing.get_context("fork")
        runs = [ctx.Process(target=_same_prompts, args=(server.url, str(tmp_path), 12)) for _ in range(2)]
        for run in runs:
            run.start()
        for run in runs:
            run.join(timeout=60)
        assert [run.exitcode for run in runs] == [0, 0]
        assert server.hits == 12  # each prompt once; the second run waited for the first's answer
    assert not list((tmp_path / "llm.sqlite.inflight").iterdir())  # no lock file left behind


# ----------------------------------------------------------------------------------------------------
# the embedded default


@pytest.mark.slow
def test_embedded_smollm2_answers(tmp_path):
    settings = get_settings(cache_dir=tmp_path / "cache").replace(llm_base_url=None)
    gguf = llm_mod.find_embedded_gguf()
    assert gguf.suffix == ".gguf" and Path(gguf).stat().st_size > 10_000_000
    client = LLM(settings, n_ctx=2048)
    assert client.model_name.startswith("SmolLM2-135M-Instruct")
    response = client.chat(msgs("What is the capital of France? Answer in one word."), max_tokens=16)
    assert response.text.strip()
    assert response.prompt_tokens > 0 and response.completion_tokens > 0
    assert response.token_source == TOKENS_MODEL
    assert response.model == client.model_name
    assert client.chat(msgs("What is the capital of France? Answer in one word."), max_tokens=16).cached


def test_embedded_models_are_closed_at_exit_before_teardown():
    # llama-cpp-python's Llama.__del__ fails when it first runs during interpreter teardown
    # (abetlen/llama-cpp-python#2002), so the kit closes every cached model from an atexit hook
    import subprocess
    import sys

    script = (
        "from temporag import llm\n"
        "class Model:\n"
        "    def close(self):\n"
        "        print('closed', flush=True)\n"
        "llm._LLAMA_MODELS[('a.gguf', 512, 1)] = Model()\n"
        "llm._LLAMA_MODELS[('b.gguf', 512, 1)] = Model()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["closed", "closed"]
